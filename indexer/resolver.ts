// Derives the published collections from the tracked entities: which definition a name resolves to
// (first created wins; pinned owners; conflicts reported), which vector entities count (closed vs open
// collections), which one wins per id (most recently modified; the rest shadowed), and which are rejected.
// It turns every table change into staged store changes; `flush` returns one commit for all collections.
import type { Address, Hex } from 'viem';
import {
  countsInCollection,
  decodeVectorEntity,
  ENTITY_DECODED_MAX_BYTES,
  DEFINITION_PAYLOAD_MAX_BYTES,
  parseCollectionDefinition,
  type CollectionDefinition,
  type DecodeVectorEntityResult,
  type VectorRecord,
} from '../src/collections/index.ts';
import type { IndexedStore, StoreFactory } from '../src/engine/index.ts';
import type { EntityContent, TrackedEntities, TrackedEntity, Verdict } from './trackedEntities.ts';
import {
  admitDefinitions,
  refusalOfNext,
  type Admission,
  type DefinitionCap,
  type DefinitionRefusal,
} from './definitionAdmission.ts';

export interface CollectionStats {
  live_entities: number;
  rejected: number;
  shadowed: number;
}

/** A collection as readers see it at the last applied block. */
export interface PublishedCollection<S extends IndexedStore = IndexedStore> {
  readonly name: string;
  readonly definition: CollectionDefinition;
  readonly definitionKey: Hex;
  /** Block in which the definition entity was created. */
  readonly definitionCreatedAtBlock: number;
  /** Block at which the definition entity expires unless someone extends it. */
  readonly definitionExpiresAt: bigint;
  readonly owner: Address;
  readonly store: S;
  /** Other live definitions of the same name, ignored. */
  readonly conflicts: readonly Hex[];
  readonly stats: CollectionStats;
  /**
   * Set when this node saw the name pass from one owner to another (a lapsed definition replaced by
   * another owner's, or a ChangeOwner of the definition): the owner before and the block of the change.
   */
  readonly ownerChange?: { readonly previousOwner: Address; readonly atBlock: number };
  /**
   * Block in which the entity now stored for `id` was last created or updated (undefined unless it is
   * `key`). Answers for the last commit: call it in the same synchronous step as reading the store.
   */
  lastModifiedAt(id: string, key: string): number | undefined;
}

interface CollectionState<S extends IndexedStore> {
  name: string;
  definitionEntity: TrackedEntity;
  definition: CollectionDefinition;
  conflicts: Hex[];
  store: S;
  /** id -> the entity currently in the store */
  winners: Map<string, TrackedEntity>;
  perId: Map<string, { rejected: number; shadowed: number }>;
  rejected: number;
  shadowed: number;
}

export interface ResolverLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

const TOO_BIG = (size: number) => `entity is ${size} decoded bytes, more than ${ENTITY_DECODED_MAX_BYTES}`;

export type { DefinitionCap, DefinitionRefusal } from './definitionAdmission.ts';

export interface ResolverOptions<S extends IndexedStore> {
  stores: StoreFactory<S>;
  /** --collection-owner: name -> the only owner whose definition counts. */
  pinnedOwners?: ReadonlyMap<string, Address>;
  /**
   * Follow only the definitions within these counts, shared out by creator and creation position
   * (definitionAdmission.ts), so every node at the same block follows the same ones; the rest are skipped
   * and counted. Names with a
   * pinned owner are exempt and count against nothing. Undefined: no cap (a node given --collections).
   */
  definitionCap?: DefinitionCap;
  logger?: ResolverLogger;
  /**
   * Reads the content of vector entities again from the chain, as of `block` (the block the table
   * reflects; `hash`, when given, is checked to still be its hash), for a re-resolution that needs what
   * was dropped: a shadowed entity becoming the winner, a definition change that requires decoding again,
   * a new store. Must answer for every entity asked, or throw: the flush then fails and publishes nothing.
   */
  reread?: (
    entities: readonly TrackedEntity[],
    block: number,
    hash: Hex | undefined,
  ) => Promise<ReadonlyMap<Hex, EntityContent>>;
}

/** Contents read again from the chain during one flush (dropped with it). */
type Fetched = Map<Hex, EntityContent>;
/** The block (and its hash) a flush resolves at. */
type FlushAt = { block: number; hash: Hex | undefined };
/** A valid candidate for an id, with its record when it was decoded on the way. */
type Candidate = { entity: TrackedEntity; record: VectorRecord | undefined };

/** Whether two definitions decode every entity alike (decodeVectorEntity reads only dim and attributes). */
function sameDecoding(a: CollectionDefinition, b: CollectionDefinition): boolean {
  const attributes = (d: CollectionDefinition) => JSON.stringify(Object.entries(d.attributes).sort());
  return a.dim === b.dim && attributes(a) === attributes(b);
}

/** Creation order: the chain's position of the create, then the key (positions are unique on one chain). */
const byCreation = (a: TrackedEntity, b: TrackedEntity) =>
  a.sequence < b.sequence ? -1 : a.sequence > b.sequence ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

/**
 * Who a definition counts against: its creator, which ChangeOwner cannot move (an owner could hand each of
 * its definitions to a fresh address); the owner only when the chain did not say who created it.
 */
const creatorOf = (entity: TrackedEntity): Address => entity.creator ?? entity.owner;

const isNewer = (a: TrackedEntity, b: TrackedEntity) =>
  a.lastModifiedAtBlock !== b.lastModifiedAtBlock ? a.lastModifiedAtBlock > b.lastModifiedAtBlock : a.key > b.key;

/**
 * Stops a dropped store's background work (a graph rebuild in a worker would otherwise run to its end and be
 * swapped into a store no one publishes). A reader still holding the store keeps its answers.
 */
function closeStore(store: IndexedStore): void {
  void store.close?.().catch(() => undefined);
}

export class CollectionResolver<S extends IndexedStore = IndexedStore> {
  readonly #options: ResolverOptions<S>;
  readonly #definitions = new Map<string, Set<Hex>>();
  /** name -> id -> the keys of its vector entities: one key held directly, a Set only from the second. */
  readonly #vectors = new Map<string, Map<string, Hex | Set<Hex>>>();
  readonly #states = new Map<string, CollectionState<S>>();
  readonly #dirtyCollections = new Set<string>();
  readonly #dirtyIds = new Map<string, Set<string>>();
  /**
   * definition -> a token for its decoding rules (dim and attributes): a definition update that keeps them
   * (writers, open, ef_search…) keeps the token, so no verdict is lost and nothing is decoded again.
   */
  readonly #decodings = new WeakMap<CollectionDefinition, object>();
  /** decoding token -> the verdict its valid entities (most of them) share. */
  readonly #valid = new WeakMap<object, Verdict>();
  readonly #parsedDefinitions = new WeakMap<TrackedEntity, CollectionDefinition | Error>();
  readonly #reported = new Set<string>();
  /** name -> definitions of that name that were skipped (invalid or over the bounds) at the last resolve. */
  readonly #rejectedDefinitions = new Map<string, number>();
  /** name -> the last owner published, and the recorded change of owner if one was seen. */
  readonly #owners = new Map<string, { owner: Address; change?: { previousOwner: Address; atBlock: number } }>();
  #published: ReadonlyMap<string, PublishedCollection<S>> = new Map();
  /** Definitions within the cap (undefined: no cap), and whether a definition changed since computed. */
  #admission: Admission | undefined;
  #admissionStale = true;
  #skippedDefinitions = 0;

  constructor(options: ResolverOptions<S>) {
    this.#options = options;
  }

  /** The collections as of the last commit. Replaced (never mutated) at each commit. */
  get published(): ReadonlyMap<string, PublishedCollection<S>> {
    return this.#published;
  }

  /** Definition entities skipped (invalid, over the bounds) among the live ones. */
  get rejectedDefinitions(): number {
    let n = 0;
    for (const count of this.#rejectedDefinitions.values()) n += count;
    return n;
  }

  /** Live definition entities over the cap (per creator or in all), not followed; recomputed, not accumulated. */
  get skippedDefinitions(): number {
    return this.#skippedDefinitions;
  }

  /**
   * Recomputes which definitions are within the cap when a definition changed, and marks the names whose
   * followed definitions changed. Depends only on the table (creation positions, creators, keys).
   */
  #admit(table: TrackedEntities): void {
    const cap = this.#options.definitionCap;
    if (!cap || !this.#admissionStale) return;
    this.#admissionStale = false;
    const pinned = this.#options.pinnedOwners;
    const entities: TrackedEntity[] = [];
    for (const [name, keys] of this.#definitions) {
      if (pinned?.has(name)) continue;
      for (const key of keys) {
        const entity = table.get(key);
        if (entity) entities.push(entity);
      }
    }
    entities.sort(byCreation);
    const admission = admitDefinitions(
      entities.map((entity) => ({ key: entity.key, creator: creatorOf(entity) })),
      cap,
    );
    const { admitted } = admission;
    const before = this.#admission?.admitted;
    for (const entity of entities)
      if ((before?.has(entity.key) ?? false) !== admitted.has(entity.key))
        this.#dirtyCollections.add(entity.collection);
    const skipped = entities.length - admitted.size;
    if (skipped > 0 && skipped !== this.#skippedDefinitions)
      this.#options.logger?.warn(
        { skipped, per_creator: cap.perCreator, total: cap.total },
        'collection definitions over the cap skipped (shared out by creator, the earliest created first)',
      );
    this.#skippedDefinitions = skipped;
    this.#admission = admission;
  }

  /** Why the live definition `key` is not followed, as of the last resolve (undefined: followed, or unknown). */
  refusal(key: Hex): DefinitionRefusal | undefined {
    return this.#admission?.refused.get(key);
  }

  /** Whether a definition of `name` that `creator` writes next would be followed (undefined) or why not. */
  refusalOfNext(creator: Address, name: string): DefinitionRefusal | undefined {
    const pinned = this.#options.pinnedOwners?.get(name);
    if (pinned) return pinned === creator.toLowerCase() ? undefined : { reason: 'pinned', owner: pinned };
    const cap = this.#options.definitionCap;
    if (!cap) return undefined;
    return refusalOfNext(this.#admission?.created ?? new Map(), creator.toLowerCase() as Address, cap);
  }

  /** Table listener: keeps the name/id indexes and marks what must be recomputed. */
  readonly onEntityChange = (previous: TrackedEntity | undefined, next: TrackedEntity | undefined): void => {
    for (const entity of [previous, next]) {
      if (!entity) continue;
      if (entity.kind === 'collection') {
        this.#dirtyCollections.add(entity.collection);
        this.#admissionStale = true;
      } else {
        const id = entity.id;
        let ids = this.#dirtyIds.get(entity.collection);
        if (!ids) this.#dirtyIds.set(entity.collection, (ids = new Set()));
        ids.add(id);
      }
    }
    if (previous) this.#index(previous, false);
    if (next) this.#index(next, true);
  };

  #index(entity: TrackedEntity, add: boolean): void {
    if (entity.kind === 'collection') {
      let keys = this.#definitions.get(entity.collection);
      if (!keys) this.#definitions.set(entity.collection, (keys = new Set()));
      if (add) keys.add(entity.key);
      else keys.delete(entity.key);
      if (!keys.size) this.#definitions.delete(entity.collection);
      return;
    }
    const { id, key } = entity;
    let ids = this.#vectors.get(entity.collection);
    if (!ids) this.#vectors.set(entity.collection, (ids = new Map()));
    const keys = ids.get(id);
    if (add) {
      if (keys === undefined) ids.set(id, key);
      else if (typeof keys === 'string') {
        if (keys !== key) ids.set(id, new Set([keys, key]));
      } else keys.add(key);
    } else if (keys === key) ids.delete(id);
    else if (typeof keys === 'object') {
      keys.delete(key);
      if (keys.size === 1) ids.set(id, keys.values().next().value as Hex);
    }
    if (!ids.size) this.#vectors.delete(entity.collection);
  }

  #reportOnce(key: string, fields: Record<string, unknown>, message: string): void {
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    this.#options.logger?.warn(fields, message);
  }

  #parseDefinition(entity: TrackedEntity): CollectionDefinition | undefined {
    let parsed = this.#parsedDefinitions.get(entity);
    if (parsed === undefined) {
      try {
        if (entity.oversize !== undefined)
          throw new Error(
            `definition is ${entity.oversize} decoded bytes; its payload may have at most ${DEFINITION_PAYLOAD_MAX_BYTES}`,
          );
        parsed = parseCollectionDefinition(entity.content?.payload ?? new Uint8Array());
      } catch (error) {
        parsed = error as Error;
      }
      this.#parsedDefinitions.set(entity, parsed);
    }
    if (parsed instanceof Error) {
      this.#reportOnce(
        `def:${entity.key}:${entity.lastModifiedAtBlock}`,
        { collection: entity.collection, key: entity.key, reason: parsed.message },
        'collection definition rejected',
      );
      return undefined;
    }
    return parsed;
  }

  #resolveDefinition(
    name: string,
    table: TrackedEntities,
  ): { entity: TrackedEntity; definition: CollectionDefinition; conflicts: Hex[] } | undefined {
    const pinned = this.#options.pinnedOwners?.get(name);
    this.#admit(table);
    const admitted = pinned ? undefined : this.#admission?.admitted;
    const candidates = [...(this.#definitions.get(name) ?? [])]
      // The name index and the table change together; a key missing from the table simply does not compete.
      .flatMap((key) => table.get(key) ?? [])
      .filter((entity) => (!pinned || entity.owner === pinned) && (!admitted || admitted.has(entity.key)))
      .sort(byCreation);
    const valid = candidates.flatMap((entity) => {
      const definition = this.#parseDefinition(entity);
      return definition ? [{ entity, definition }] : [];
    });
    if (candidates.length > valid.length) this.#rejectedDefinitions.set(name, candidates.length - valid.length);
    else this.#rejectedDefinitions.delete(name);
    const [winner, ...rest] = valid;
    if (!winner) return undefined;
    const conflicts = rest.map((v) => v.entity.key);
    if (conflicts.length) {
      this.#reportOnce(
        `conflict:${name}:${conflicts.join(',')}`,
        { collection: name, winner: winner.entity.key, ignored: conflicts },
        'several definitions for one collection name; the first created wins',
      );
    }
    return { ...winner, conflicts };
  }

  /** The keys of the vector entities of `name` with id `id`. */
  #keysOf(name: string, id: string): Iterable<Hex> {
    const keys = this.#vectors.get(name)?.get(id);
    return keys === undefined ? [] : typeof keys === 'string' ? [keys] : keys;
  }

  #decoding(definition: CollectionDefinition): object {
    let token = this.#decodings.get(definition);
    if (!token) this.#decodings.set(definition, (token = {}));
    return token;
  }

  #verdict(definition: CollectionDefinition, reason: string | undefined): Verdict {
    const decoding = this.#decoding(definition);
    if (reason !== undefined) return { decoding, reason };
    let verdict = this.#valid.get(decoding);
    if (!verdict) this.#valid.set(decoding, (verdict = { decoding, reason: undefined }));
    return verdict;
  }

  /** Whether `entity` has a verdict under the decoding rules of `definition`. */
  #judged(entity: TrackedEntity, definition: CollectionDefinition): boolean {
    return entity.verdict !== undefined && entity.verdict.decoding === this.#decoding(definition);
  }

  /**
   * What a snapshot keeps of an entity's verdict: null (valid) or the reason under the definition its
   * collection publishes now, undefined when it has none under it.
   */
  keptVerdict(entity: TrackedEntity): string | null | undefined {
    const published = this.#published.get(entity.collection);
    if (!published || !this.#judged(entity, published.definition)) return undefined;
    return entity.verdict?.reason ?? null;
  }

  /** Decodes an entity and remembers (and reports, once) the verdict; its content must be at hand. */
  #decode(
    entity: TrackedEntity,
    content: EntityContent | undefined,
    name: string,
    definition: CollectionDefinition,
  ): DecodeVectorEntityResult {
    let result: DecodeVectorEntityResult;
    if (entity.oversize !== undefined) result = { ok: false, reason: TOO_BIG(entity.oversize) };
    else if (content === undefined) throw new Error(`the content of entity ${entity.key} is not at hand`);
    else
      result = decodeVectorEntity(
        { ...content, key: entity.key, owner: entity.owner, creator: entity.creator, expiresAt: entity.expiresAt },
        { name, definition },
      );
    entity.verdict = this.#verdict(definition, result.ok ? undefined : result.reason);
    if (!result.ok) {
      this.#reportOnce(
        `vec:${entity.key}:${entity.lastModifiedAtBlock}`,
        { collection: name, key: entity.key, owner: entity.owner, reason: result.reason },
        'vector entity rejected',
      );
    }
    return result;
  }

  /** The candidates of `ids` that need decoding under the definition but whose content is not at hand. */
  #missingVerdicts(
    state: Pick<CollectionState<S>, 'name' | 'definition' | 'definitionEntity'>,
    ids: Iterable<string>,
    table: TrackedEntities,
    fetched: Fetched,
  ): TrackedEntity[] {
    const missing: TrackedEntity[] = [];
    for (const id of ids)
      for (const key of this.#keysOf(state.name, id)) {
        const entity = table.get(key);
        if (entity === undefined || entity.oversize !== undefined) continue;
        if (this.#judged(entity, state.definition)) continue;
        if (!countsInCollection(state.definition, state.definitionEntity.owner, entity)) continue;
        if (!entity.content && !fetched.has(key)) missing.push(entity);
      }
    return missing;
  }

  /** Reads the content of `entities` again from the chain at `block` (one round for all of them). */
  async #fetch(entities: readonly TrackedEntity[], at: FlushAt, fetched: Fetched): Promise<void> {
    if (!entities.length) return;
    const reread = this.#options.reread;
    if (!reread) throw new Error(`${entities.length} vector entities must be read again, and there is no reader`);
    const contents = await reread(entities, at.block, at.hash);
    for (const entity of entities) {
      const content = contents.get(entity.key);
      if (!content) throw new Error(`entity ${entity.key} was not read again at block ${at.block}`);
      fetched.set(entity.key, content);
    }
  }

  /**
   * Resolves one id: the newest valid candidate from an allowed writer, with its record when this call
   * had to decode it anyway. The candidates needing a verdict have their content at hand (#missingVerdicts).
   */
  #resolveId(
    state: Pick<CollectionState<S>, 'name' | 'definition' | 'definitionEntity'>,
    id: string,
    table: TrackedEntities,
    fetched: Fetched,
  ) {
    let winner: Candidate | undefined;
    let valid = 0;
    let rejected = 0;
    for (const key of this.#keysOf(state.name, id)) {
      const entity = table.get(key);
      if (entity === undefined) continue;
      if (!countsInCollection(state.definition, state.definitionEntity.owner, entity)) continue;
      let record: VectorRecord | undefined;
      if (!this.#judged(entity, state.definition)) {
        const decoded = this.#decode(entity, entity.content ?? fetched.get(key), state.name, state.definition);
        if (decoded.ok) record = decoded.record;
      }
      if (entity.verdict?.reason !== undefined) {
        rejected++;
        continue;
      }
      valid++;
      if (!winner || isNewer(entity, winner.entity)) winner = { entity, record };
    }
    return { winner, rejected, shadowed: Math.max(0, valid - 1) };
  }

  /**
   * The records of new winners. One decoded by this flush has its record; one whose content is at hand
   * is decoded; one with the same content as the entity the store holds for its id (an extend, an owner
   * change, or their rollback) takes the stored record with its new owner and expiry; the rest are read
   * again from the chain, all in one round.
   */
  async #records(
    state: Pick<CollectionState<S>, 'name' | 'definition' | 'store'>,
    winners: readonly (Candidate & { before?: TrackedEntity | undefined })[],
    at: FlushAt,
    fetched: Fetched,
  ): Promise<VectorRecord[]> {
    const fromStore = (w: Candidate & { before?: TrackedEntity | undefined }): VectorRecord | undefined => {
      const { entity, before } = w;
      if (before?.key !== entity.key || before.revision !== entity.revision) return undefined;
      const held = state.store.get(entity.key);
      if (!held) return undefined;
      return {
        key: held.key,
        owner: entity.owner,
        creator: entity.creator,
        collection: held.collection,
        id: held.id,
        expiresAt: entity.expiresAt,
        dim: held.dim,
        vector: held.vector,
        halfvec: held.halfvec,
        document: held.document,
        attributes: held.attributes,
      };
    };
    const found = winners.map((w) =>
      w.record || w.entity.content || fetched.has(w.entity.key) ? w.record : fromStore(w),
    );
    await this.#fetch(
      winners.flatMap((w, i) => (found[i] || w.entity.content || fetched.has(w.entity.key) ? [] : [w.entity])),
      at,
      fetched,
    );
    return winners.map((w, i) => {
      const record = found[i];
      if (record) return record;
      const decoded = this.#decode(
        w.entity,
        w.entity.content ?? fetched.get(w.entity.key),
        state.name,
        state.definition,
      );
      if (!decoded.ok) throw new Error(`entity ${w.entity.key} no longer decodes: ${decoded.reason}`);
      return decoded.record;
    });
  }

  /**
   * Computes and stages the store changes for everything marked dirty since the last flush.
   * Returns the commit that makes all of them visible at once (and publishes the new collection map).
   * @param block the block the table reflects, and `hash` its hash: where dropped contents are read again
   */
  async flush(table: TrackedEntities, block = 0, hash?: Hex): Promise<() => void> {
    const at: FlushAt = { block, hash };
    const fetched: Fetched = new Map();
    // Before the names are taken: a change of the followed definitions marks the names it concerns.
    this.#admit(table);
    const names = new Set([...this.#dirtyCollections, ...this.#dirtyIds.keys()]);
    const dirtyIds = new Map(this.#dirtyIds);
    const rebuild = new Set(this.#dirtyCollections);
    // The marks are cleared only by the commit: if staging fails, the next flush recomputes them all.
    const commits: (() => void)[] = [];
    const nextStates = new Map(this.#states);
    for (const name of names) {
      const current = this.#states.get(name);
      const resolved =
        rebuild.has(name) || !current
          ? this.#resolveDefinition(name, table)
          : { entity: current.definitionEntity, definition: current.definition, conflicts: current.conflicts };
      if (!resolved) {
        nextStates.delete(name);
        continue;
      }
      const sameCollection =
        current &&
        current.definitionEntity.key === resolved.entity.key &&
        current.definition.dim === resolved.definition.dim &&
        current.definition.metric === resolved.definition.metric;
      if (!current || !sameCollection) {
        const state = await this.#build(name, resolved, table, commits, at, fetched);
        nextStates.set(name, state);
        continue;
      }
      // An extension (keep-alive) makes a new entity object with the same content: only the expiry moves.
      const sameContent =
        current.definitionEntity.owner === resolved.entity.owner &&
        Buffer.from(current.definitionEntity.content?.payload ?? []).equals(
          resolved.entity.content?.payload ?? new Uint8Array(),
        );
      const definitionChanged = current.definitionEntity !== resolved.entity && !sameContent;
      // New decoding rules (an attribute added) change records: every winner is decoded again and stored.
      const redecode = definitionChanged && !sameDecoding(current.definition, resolved.definition);
      if (definitionChanged && !redecode) this.#decodings.set(resolved.definition, this.#decoding(current.definition));
      const ids = definitionChanged
        ? new Set([...current.winners.keys(), ...(this.#vectors.get(name)?.keys() ?? [])])
        : (dirtyIds.get(name) ?? new Set<string>());
      // Per-id results are staged as deltas and applied by the commit: copying the winner maps of a large
      // collection for every block would cost more than the block itself.
      const state: CollectionState<S> = {
        ...current,
        definitionEntity: resolved.entity,
        definition: sameContent ? current.definition : resolved.definition,
        conflicts: resolved.conflicts,
      };
      await this.#fetch(this.#missingVerdicts(state, ids, table, fetched), at, fetched);
      const winnerChanges = new Map<string, TrackedEntity | undefined>();
      const countChanges = new Map<string, { rejected: number; shadowed: number } | undefined>();
      const remove: string[] = [];
      const changed: (Candidate & { before: TrackedEntity | undefined })[] = [];
      for (const id of ids) {
        const { winner, rejected, shadowed } = this.#resolveId(state, id, table, fetched);
        const before = current.winners.get(id);
        const counts = current.perId.get(id) ?? { rejected: 0, shadowed: 0 };
        state.rejected += rejected - counts.rejected;
        state.shadowed += shadowed - counts.shadowed;
        countChanges.set(id, rejected || shadowed ? { rejected, shadowed } : undefined);
        if (winner) {
          if (winner.entity !== before || redecode) changed.push({ ...winner, before });
          winnerChanges.set(id, winner.entity);
        } else if (before) {
          remove.push(before.key);
          winnerChanges.set(id, undefined);
        }
      }
      const upsert = await this.#records(state, changed, at, fetched);
      const commitStore =
        definitionChanged || remove.length || upsert.length ? await state.store.prepare({ remove, upsert }) : undefined;
      commits.push(() => {
        for (const [id, entity] of winnerChanges) {
          if (entity) state.winners.set(id, entity);
          else state.winners.delete(id);
        }
        for (const [id, counts] of countChanges) {
          if (counts) state.perId.set(id, counts);
          else state.perId.delete(id);
        }
        if (definitionChanged) state.store.updateDefinition(state.definition);
        commitStore?.();
      });
      nextStates.set(name, state);
    }
    return () => {
      this.#dirtyCollections.clear();
      this.#dirtyIds.clear();
      for (const commit of commits) commit();
      const kept = new Set([...nextStates.values()].map((state) => state.store));
      for (const state of this.#states.values()) if (!kept.has(state.store)) closeStore(state.store);
      this.#states.clear();
      for (const [name, state] of nextStates) this.#states.set(name, state);
      this.#publish(block);
    };
  }

  async #build(
    name: string,
    resolved: { entity: TrackedEntity; definition: CollectionDefinition; conflicts: Hex[] },
    table: TrackedEntities,
    commits: (() => void)[],
    at: FlushAt,
    fetched: Fetched,
    store?: S,
  ): Promise<CollectionState<S>> {
    const state: CollectionState<S> = {
      name,
      definitionEntity: resolved.entity,
      definition: resolved.definition,
      conflicts: resolved.conflicts,
      store: store ?? this.#options.stores.create(name, resolved.definition),
      winners: new Map(),
      perId: new Map(),
      rejected: 0,
      shadowed: 0,
    };
    const ids = [...(this.#vectors.get(name)?.keys() ?? [])];
    await this.#fetch(this.#missingVerdicts(state, ids, table, fetched), at, fetched);
    const changed: Candidate[] = [];
    for (const id of ids) {
      const { winner, rejected, shadowed } = this.#resolveId(state, id, table, fetched);
      state.rejected += rejected;
      state.shadowed += shadowed;
      if (rejected || shadowed) state.perId.set(id, { rejected, shadowed });
      if (winner) {
        state.winners.set(id, winner.entity);
        if (!store) changed.push(winner);
      }
    }
    if (!store) {
      const upsert = await this.#records(state, changed, at, fetched);
      commits.push(await state.store.prepare({ remove: [], upsert }));
    }
    return state;
  }

  /** Stops the background work of every store this resolver holds (the indexer drops them all). */
  closeStores(): void {
    for (const state of this.#states.values()) closeStore(state.store);
  }

  /**
   * Adopts stores loaded from a snapshot: their contents already equal what the table resolves to, so
   * only the bookkeeping (winners, stats) is rebuilt, from the verdicts the snapshot kept (an entity
   * without one is read again from the chain at `block`). `load` returns undefined when a store is missing.
   */
  async adopt(
    table: TrackedEntities,
    load: (name: string, definition: CollectionDefinition) => Promise<S | undefined>,
    block = 0,
    hash?: Hex,
  ): Promise<void> {
    this.#dirtyCollections.clear();
    this.#dirtyIds.clear();
    this.#states.clear();
    const commits: (() => void)[] = [];
    const at: FlushAt = { block, hash };
    const fetched: Fetched = new Map();
    for (const name of this.#definitions.keys()) {
      const resolved = this.#resolveDefinition(name, table);
      if (!resolved) continue;
      const store = await load(name, resolved.definition);
      this.#states.set(name, await this.#build(name, resolved, table, commits, at, fetched, store));
    }
    for (const commit of commits) commit();
    this.#publish(0);
  }

  /**
   * Gives the verdicts a snapshot kept (undefined: valid, else the reason) to the vector entities of
   * `name`, when `name` still resolves to the definition entity they were decoded under.
   */
  restoreVerdicts(
    name: string,
    table: TrackedEntities,
    decodedUnder: { key: Hex; lastModifiedAtBlock: number },
    verdicts: Iterable<readonly [Hex, string | undefined]>,
  ): void {
    const resolved = this.#resolveDefinition(name, table);
    if (
      resolved?.entity.key !== decodedUnder.key ||
      resolved.entity.lastModifiedAtBlock !== decodedUnder.lastModifiedAtBlock
    )
      return;
    for (const [key, reason] of verdicts) {
      const entity = table.get(key);
      if (entity?.kind !== 'vector' || entity.collection !== name) continue;
      entity.verdict = this.#verdict(resolved.definition, reason);
    }
  }

  /** Remembers who owns each name, so that a name passing to another owner is recorded and logged. */
  #ownerChange(name: string, owner: Address, block: number) {
    const seen = this.#owners.get(name);
    if (seen && seen.owner !== owner) {
      const change = { previousOwner: seen.owner, atBlock: block };
      this.#owners.set(name, { owner, change });
      this.#options.logger?.warn(
        { collection: name, previous_owner: seen.owner, owner, block },
        'collection name passed to another owner',
      );
      return change;
    }
    if (!seen) this.#owners.set(name, { owner });
    return seen?.change;
  }

  #publish(block: number): void {
    this.#published = new Map(
      [...this.#states].map(([name, s]) => [
        name,
        {
          ownerChange: this.#ownerChange(name, s.definitionEntity.owner, block),
          name,
          definition: s.definition,
          definitionKey: s.definitionEntity.key,
          definitionCreatedAtBlock: Number(s.definitionEntity.sequence >> 32n),
          definitionExpiresAt: s.definitionEntity.expiresAt,
          owner: s.definitionEntity.owner,
          store: s.store,
          conflicts: s.conflicts,
          stats: { live_entities: s.winners.size, rejected: s.rejected, shadowed: s.shadowed },
          lastModifiedAt: (id: string, key: string) => {
            const winner = s.winners.get(id);
            return winner?.key === key ? winner.lastModifiedAtBlock : undefined;
          },
        },
      ]),
    );
  }
}
