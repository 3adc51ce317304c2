// The raw arkivector entities the indexer follows (collection definitions and vectors, valid or not),
// keyed by entity key, with a per-block journal so a reorg can roll them back exactly.
// Everything a collection store holds is derived from this table by the resolver.
import type { Address, Hex } from 'viem';
import {
  ATTR_COLLECTION,
  ATTR_ID,
  ATTR_TYPE,
  COLLECTION_NAME_REGEX,
  DEFINITION_PAYLOAD_MAX_BYTES,
  ENTITY_DECODED_MAX_BYTES,
} from '../src/collections/index.ts';

export type EntityKind = 'collection' | 'vector';

/** What an entity carries besides its header: held for definitions, and for vectors only until resolved. */
export interface EntityContent {
  readonly contentType: string;
  readonly payload: Uint8Array;
  readonly stringAttributes: ReadonlyMap<string, string>;
  readonly numericAttributes: ReadonlyMap<string, bigint>;
}

/**
 * What decoding a vector entity under a definition gave (reason undefined: valid). Content changes make a
 * new entity, so a verdict holds for as long as its entity (and the copies an extend or owner change make).
 */
export interface Verdict {
  /** Stands for the decoding rules (dim, attributes) it was decoded under: definitions with equal rules share it. */
  readonly decoding: object;
  readonly reason: string | undefined;
}

/**
 * One live entity as of the last applied block. Every change makes a new object; the only fields that
 * move in place are the caches: `content` of a vector, dropped once the resolver has handed its record
 * to the store (it is read again from the chain when a re-resolution needs it), and `verdict`.
 */
export interface TrackedEntity {
  readonly key: Hex;
  readonly kind: EntityKind;
  readonly collection: string;
  /** The arkivector_id attribute ('' when absent): what the resolver groups vectors by. */
  readonly id: string;
  readonly owner: Address;
  readonly creator: Address | undefined;
  readonly expiresAt: bigint;
  readonly lastModifiedAtBlock: number;
  /** block << 32 | txIndex << 16 | opIndex of the create: the first definition of a name wins. */
  readonly sequence: bigint;
  /**
   * Decoded size on chain (payload, content type, attributes) over the kept limit: the payload and the
   * user attributes were dropped on arrival, and the resolver counts the entity as rejected.
   */
  readonly oversize: number | undefined;
  /**
   * Which arrival of content this is (unique in the process): copies made by an extend or an owner change
   * keep it, so the resolver knows the store already holds this content.
   */
  readonly revision: number;
  /** Payload, content type and attributes; undefined for a vector once resolved, or when oversize. */
  content: EntityContent | undefined;
  /** The resolver's last decode of this content (vectors only). */
  verdict: Verdict | undefined;
}

/** An entity as read or built from the chain, before bounding and compaction. */
export interface EntityArrival
  extends Omit<TrackedEntity, 'id' | 'content' | 'verdict' | 'oversize' | 'revision'>,
    EntityContent {}

const utf8 = new TextEncoder();

/** Decoded bytes of an entity: payload, content type, attribute names and values (numbers as 8 bytes). */
export function decodedSize(
  contentType: string,
  payload: Uint8Array,
  strings: ReadonlyMap<string, string>,
  numbers: ReadonlyMap<string, bigint>,
): number {
  let size = payload.length + utf8.encode(contentType).length;
  for (const [k, v] of strings) size += utf8.encode(k).length + utf8.encode(v).length;
  for (const k of numbers.keys()) size += utf8.encode(k).length + 8;
  return size;
}

/**
 * Distinct strings the table shares between entities (attribute names, the type and collection values,
 * owners, content types). Every entity of a collection repeats them, and each decoded copy costs ~30–60
 * bytes; past this many the rest stay unshared, so hostile names cannot grow the table without bound.
 */
export const INTERNED_STRINGS_MAX = 4096;

const interned = new Map<string, string>();

/** How many distinct strings are shared now (never more than INTERNED_STRINGS_MAX). */
export function internedCount(): number {
  return interned.size;
}

/** The shared copy of `s` (kept while fewer than INTERNED_STRINGS_MAX strings are shared). */
export function intern<T extends string>(s: T): T {
  const hit = interned.get(s);
  if (hit !== undefined) return hit as T;
  if (interned.size < INTERNED_STRINGS_MAX && s.length <= 256) interned.set(s, s);
  return s;
}

/**
 * The content with its repeated strings shared and its payload in a buffer of its own: a payload decoded
 * from an RPC answer is a view into that answer, which would otherwise stay alive with it.
 */
function compactContent(content: EntityContent): EntityContent {
  const strings = new Map<string, string>();
  for (const [k, v] of content.stringAttributes)
    strings.set(intern(k), k === ATTR_TYPE || k === ATTR_COLLECTION ? intern(v) : v);
  const numbers = new Map<string, bigint>();
  for (const [k, v] of content.numericAttributes) numbers.set(intern(k), v);
  let payload = content.payload;
  // new Uint8Array(view) copies (a Buffer's own slice() would be another view).
  if (payload.byteLength !== payload.buffer.byteLength) payload = new Uint8Array(payload);
  return { contentType: intern(content.contentType), payload, stringAttributes: strings, numericAttributes: numbers };
}

let revisions = 0;

function tracked(arrival: EntityArrival, content: EntityContent | undefined, oversize: number | undefined) {
  const id = arrival.stringAttributes.get(ATTR_ID) ?? '';
  return restoredEntity({
    ...arrival,
    // The id of an oversize entity stays only when it is small: it lets the entity be counted against its id.
    id: oversize === undefined || id.length <= 1024 ? id : '',
    oversize,
    content,
  });
}

/**
 * An entity with its repeated strings shared, read back from a snapshot or just bounded. Every entity gets
 * every field, in one order: V8 then keeps them all in one compact hidden class.
 */
export function restoredEntity(
  fields: Omit<TrackedEntity, 'revision' | 'verdict' | 'content'> & { content: EntityContent | undefined },
): TrackedEntity {
  return {
    key: fields.key,
    // The literal, not the attribute value decoded from the chain (a string of its own per entity).
    kind: fields.kind === 'collection' ? 'collection' : 'vector',
    collection: intern(fields.collection),
    id: fields.id,
    owner: intern(fields.owner),
    creator: fields.creator === undefined ? undefined : intern(fields.creator),
    expiresAt: fields.expiresAt,
    lastModifiedAtBlock: fields.lastModifiedAtBlock,
    sequence: fields.sequence,
    oversize: fields.oversize,
    revision: ++revisions,
    content: fields.content,
    verdict: undefined,
  };
}

/**
 * Applies the size limits before an entity is kept: over ENTITY_DECODED_MAX_BYTES (or, for a definition,
 * a payload over DEFINITION_PAYLOAD_MAX_BYTES) only what classifies it survives, marked `oversize`, with
 * no content. `unreadPayloadBytes`: a payload the caller measured but did not decode (already over the
 * limit). What is kept is compacted (shared strings, a payload of its own).
 */
export function boundedEntity(arrival: EntityArrival, unreadPayloadBytes = 0): TrackedEntity {
  const size =
    unreadPayloadBytes +
    decodedSize(arrival.contentType, arrival.payload, arrival.stringAttributes, arrival.numericAttributes);
  const tooBig =
    size > ENTITY_DECODED_MAX_BYTES ||
    (arrival.kind === 'collection' && arrival.payload.length > DEFINITION_PAYLOAD_MAX_BYTES);
  return tooBig ? tracked(arrival, undefined, size) : tracked(arrival, compactContent(arrival), undefined);
}

/** Which arkivector entity (if any) a set of string attributes describes. */
export function classify(
  stringAttributes: ReadonlyMap<string, string>,
): { kind: EntityKind; collection: string } | undefined {
  const type = stringAttributes.get(ATTR_TYPE);
  const collection = stringAttributes.get(ATTR_COLLECTION);
  // A name outside the schema's grammar can never be served, and would have to be quoted into queries.
  if (
    (type !== 'collection' && type !== 'vector') ||
    collection === undefined ||
    !COLLECTION_NAME_REGEX.test(collection)
  )
    return undefined;
  return { kind: type, collection };
}

export type EntityChangeListener = (previous: TrackedEntity | undefined, next: TrackedEntity | undefined) => void;

/** The block in progress: what each key it changed held before it (first change only). */
interface OpenBlock {
  block: number;
  previous: Map<Hex, TrackedEntity | undefined>;
}

/**
 * A journaled block: its OpenBlock's pairs laid flat (key, previous, key, previous…), two array slots a
 * change where a Map costs ~3.5 words and a table of its own per block.
 */
interface JournalEntry {
  block: number;
  previous: (Hex | TrackedEntity | undefined)[];
}

function* pairs(flat: JournalEntry['previous']): Generator<[Hex, TrackedEntity | undefined]> {
  for (let i = 0; i < flat.length; i += 2) yield [flat[i] as Hex, flat[i + 1] as TrackedEntity | undefined];
}

export class TrackedEntities {
  readonly #entities = new Map<Hex, TrackedEntity>();
  readonly #journal: JournalEntry[] = [];
  readonly #depth: number;
  readonly #definitionsPerName = new Map<string, number>();
  /**
   * Keys by the block their expiry falls on: a chain without expiry events (the DB-chain) ends them here
   * (`expiringAt`), and on one with them (v1) the sweep comes first and the events find nothing left.
   * One key is held directly, a Set only from the second: entities written in different blocks mostly
   * expire at different blocks, and a Set of one is an object and a hash table of its own.
   */
  readonly #byExpiry = new Map<bigint, Hex | Set<Hex>>();
  /** Vector entities set with their content since the last dropResolvedContent. */
  #fresh: TrackedEntity[] = [];
  #current: OpenBlock | undefined;
  /**
   * Rolling back to this block or later is exact: every change after it is journaled. A journal entry is
   * kept only for a block that was begun, so blocks skipped as empty (a source's span) need none.
   */
  #horizon: number | undefined;
  readonly #onChange: EntityChangeListener;

  /** @param journalDepth how many recent blocks can be rolled back */
  constructor(onChange: EntityChangeListener, journalDepth = 256) {
    this.#onChange = onChange;
    this.#depth = journalDepth;
  }

  get size(): number {
    return this.#entities.size;
  }

  /** How many definition entities (valid or not) of `name` are tracked: vectors are kept only when > 0. */
  definitionCount(name: string): number {
    return this.#definitionsPerName.get(name) ?? 0;
  }

  /** Bytes of payload held (for tests and metrics). */
  get payloadBytes(): number {
    let bytes = 0;
    for (const entity of this.#entities.values()) bytes += entity.content?.payload.length ?? 0;
    return bytes;
  }

  /**
   * Keys of the vector entities of `name` that are tracked. A scan of the table: it runs only when a name
   * gains its first definition or loses its last, and an index per name would cost every entity bytes.
   */
  vectorKeys(name: string): readonly Hex[] {
    const keys: Hex[] = [];
    for (const entity of this.#entities.values())
      if (entity.kind === 'vector' && entity.collection === name) keys.push(entity.key);
    return keys;
  }

  /**
   * Drops the content of the vector entities set since the last call: the resolver has handed their
   * records to the stores (and kept its verdicts), and a later re-resolution reads the chain again.
   */
  dropResolvedContent(): void {
    for (const entity of this.#fresh) entity.content = undefined;
    this.#fresh = [];
  }

  #count(entity: TrackedEntity | undefined, delta: number): void {
    if (entity?.kind !== 'collection') return;
    const n = (this.#definitionsPerName.get(entity.collection) ?? 0) + delta;
    if (n > 0) this.#definitionsPerName.set(entity.collection, n);
    else this.#definitionsPerName.delete(entity.collection);
  }

  #index(previous: TrackedEntity | undefined, next: TrackedEntity | undefined): void {
    if (previous?.expiresAt === next?.expiresAt) return;
    if (previous) {
      const keys = this.#byExpiry.get(previous.expiresAt);
      if (keys === previous.key) this.#byExpiry.delete(previous.expiresAt);
      else if (typeof keys === 'object') {
        keys.delete(previous.key);
        if (keys.size === 1) this.#byExpiry.set(previous.expiresAt, keys.values().next().value as Hex);
      }
    }
    if (next) {
      const keys = this.#byExpiry.get(next.expiresAt);
      if (keys === undefined) this.#byExpiry.set(next.expiresAt, next.key);
      else if (typeof keys === 'object') keys.add(next.key);
      else if (keys !== next.key) this.#byExpiry.set(next.expiresAt, new Set([keys, next.key]));
    }
  }

  /** Keys of the entities whose lifetime ends at `block` (live at B iff expiresAt > B). */
  expiringAt(block: number): Hex[] {
    const keys = this.#byExpiry.get(BigInt(block));
    return keys === undefined ? [] : typeof keys === 'string' ? [keys] : [...keys];
  }

  get(key: Hex): TrackedEntity | undefined {
    return this.#entities.get(key);
  }

  values(): IterableIterator<TrackedEntity> {
    return this.#entities.values();
  }

  /** Oldest block the journal can roll back to (inclusive), or undefined when it is empty. */
  get rollbackHorizon(): number | undefined {
    const oldest = this.#journal[0];
    return this.#horizon ?? (oldest ? oldest.block - 1 : undefined);
  }

  beginBlock(block: number): void {
    this.#current = { block, previous: new Map() };
  }

  endBlock(): void {
    if (!this.#current) return;
    const { block, previous } = this.#current;
    // Sized once: an array grown by push reserves up to half again its length.
    const flat: JournalEntry['previous'] = new Array(2 * previous.size);
    let i = 0;
    for (const [key, entity] of previous) {
      flat[i++] = key;
      flat[i++] = entity;
    }
    this.#journal.push({ block, previous: flat });
    if (this.#journal.length > this.#depth) this.#horizon = this.#journal.shift()?.block;
    this.#current = undefined;
  }

  /** Undoes the block in progress (a step that failed half-way), leaving the table as before beginBlock. */
  abortBlock(): void {
    const entry = this.#current;
    this.#current = undefined;
    if (entry) this.#undo(entry.previous);
  }

  /**
   * Drops the journal (after a bootstrap or a snapshot load nothing older can be rolled back).
   * @param block the block the table now reflects: a rollback to it (or later) stays exact
   */
  resetJournal(block?: number): void {
    this.#journal.length = 0;
    this.#horizon = block;
  }

  set(key: Hex, next: TrackedEntity | undefined): void {
    const previous = this.#entities.get(key);
    if (previous === next) return;
    if (this.#current && !this.#current.previous.has(key)) this.#current.previous.set(key, previous);
    if (next) this.#entities.set(key, next);
    else this.#entities.delete(key);
    if (next?.kind === 'vector' && next.content) this.#fresh.push(next);
    this.#index(previous, next);
    this.#count(previous, -1);
    this.#count(next, 1);
    this.#onChange(previous, next);
  }

  /** Whether the journal reaches back to `block`. */
  canRollBackTo(block: number): boolean {
    if (this.#horizon !== undefined && block >= this.#horizon) return true;
    const oldest = this.#journal[0];
    return oldest !== undefined && oldest.block <= block + 1;
  }

  /** Undoes every block after `block`; the caller checked canRollBackTo. */
  rollBackTo(block: number): void {
    for (let newest = this.#journal.at(-1); newest && newest.block > block; newest = this.#journal.at(-1)) {
      this.#journal.pop();
      this.#undo(pairs(newest.previous));
    }
  }

  #undo(changes: Iterable<[Hex, TrackedEntity | undefined]>): void {
    for (const [key, previous] of changes) {
      const now = this.#entities.get(key);
      if (previous) this.#entities.set(key, previous);
      else this.#entities.delete(key);
      this.#index(now, previous);
      this.#count(now, -1);
      this.#count(previous, 1);
      this.#onChange(now, previous);
    }
  }
}
