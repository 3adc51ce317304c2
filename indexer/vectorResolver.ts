// Which vector entity each id of a collection resolves to: among the entities of the id that count in
// the collection (closed vs open collections) and decode under its definition, the most recently
// modified wins and the rest are shadowed; those that do not decode are rejected. Verdicts are kept on
// the entities, shared per decoding rules, so a definition update that keeps dim and attributes decodes
// nothing again. Contents the table dropped are read again from the chain, in one round per flush.
import type { Hex } from 'viem';
import {
  countsInCollection,
  decodeVectorEntity,
  ENTITY_DECODED_MAX_BYTES,
  type CollectionDefinition,
  type DecodeVectorEntityResult,
  type VectorRecord,
} from '../src/collections/index.ts';
import type { IndexedStore } from '../src/engine/index.ts';
import type { ReportOnce } from './definitionResolver.ts';
import type { EntityContent, TrackedEntities, TrackedEntity, Verdict } from './trackedEntities.ts';

/** Reads vector entities' content again at `block` (see ResolverOptions.reread). */
export type Reread = (
  entities: readonly TrackedEntity[],
  block: number,
  hash: Hex | undefined,
) => Promise<ReadonlyMap<Hex, EntityContent>>;

/** Contents read again from the chain during one flush (dropped with it). */
export type Fetched = Map<Hex, EntityContent>;
/** The block (and its hash) a flush resolves at. */
export type FlushAt = { block: number; hash: Hex | undefined };
/** A valid candidate for an id, with its record when it was decoded on the way. */
export type Candidate = { entity: TrackedEntity; record: VectorRecord | undefined };
/** What resolving an id needs of its collection. */
export interface CollectionUnderResolution {
  name: string;
  definition: CollectionDefinition;
  definitionEntity: TrackedEntity;
}

const TOO_BIG = (size: number) => `entity is ${size} decoded bytes, more than ${ENTITY_DECODED_MAX_BYTES}`;

const isNewer = (a: TrackedEntity, b: TrackedEntity) =>
  a.lastModifiedAtBlock !== b.lastModifiedAtBlock ? a.lastModifiedAtBlock > b.lastModifiedAtBlock : a.key > b.key;

export class VectorResolver {
  /** name -> id -> the keys of its vector entities: one key held directly, a Set only from the second. */
  readonly #vectors = new Map<string, Map<string, Hex | Set<Hex>>>();
  /**
   * definition -> a token for its decoding rules (dim and attributes): a definition update that keeps them
   * (writers, open, ef_search…) keeps the token, so no verdict is lost and nothing is decoded again.
   */
  readonly #decodings = new WeakMap<CollectionDefinition, object>();
  /** decoding token -> the verdict its valid entities (most of them) share. */
  readonly #valid = new WeakMap<object, Verdict>();

  constructor(
    private readonly reportOnce: ReportOnce,
    private readonly reread: Reread | undefined,
  ) {}

  /** The ids of `name` that have at least one vector entity. */
  ids(name: string): Iterable<string> {
    return this.#vectors.get(name)?.keys() ?? [];
  }

  /** Table change of a vector entity: keeps the name/id index. */
  index(entity: TrackedEntity, add: boolean): void {
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

  /** `next` decodes as `previous` does: verdicts under one hold under the other. */
  keepDecoding(next: CollectionDefinition, previous: CollectionDefinition): void {
    this.#decodings.set(next, this.#decoding(previous));
  }

  /** The verdict for a reason (undefined: valid) under the decoding rules of `definition`. */
  verdict(definition: CollectionDefinition, reason: string | undefined): Verdict {
    const decoding = this.#decoding(definition);
    if (reason !== undefined) return { decoding, reason };
    let verdict = this.#valid.get(decoding);
    if (!verdict) this.#valid.set(decoding, (verdict = { decoding, reason: undefined }));
    return verdict;
  }

  /** Whether `entity` has a verdict under the decoding rules of `definition`. */
  judged(entity: TrackedEntity, definition: CollectionDefinition): boolean {
    return entity.verdict !== undefined && entity.verdict.decoding === this.#decoding(definition);
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
    entity.verdict = this.verdict(definition, result.ok ? undefined : result.reason);
    if (!result.ok) {
      this.reportOnce(
        `vec:${entity.key}:${entity.lastModifiedAtBlock}`,
        { collection: name, key: entity.key, owner: entity.owner, reason: result.reason },
        'vector entity rejected',
      );
    }
    return result;
  }

  /** The candidates of `ids` that need decoding under the definition but whose content is not at hand. */
  missingVerdicts(
    state: CollectionUnderResolution,
    ids: Iterable<string>,
    table: TrackedEntities,
    fetched: Fetched,
  ): TrackedEntity[] {
    const missing: TrackedEntity[] = [];
    for (const id of ids)
      for (const key of this.#keysOf(state.name, id)) {
        const entity = table.get(key);
        if (entity === undefined || entity.oversize !== undefined) continue;
        if (this.judged(entity, state.definition)) continue;
        if (!countsInCollection(state.definition, state.definitionEntity.owner, entity)) continue;
        if (!entity.content && !fetched.has(key)) missing.push(entity);
      }
    return missing;
  }

  /** Reads the content of `entities` again from the chain at `block` (one round for all of them). */
  async fetch(entities: readonly TrackedEntity[], at: FlushAt, fetched: Fetched): Promise<void> {
    if (!entities.length) return;
    const reread = this.reread;
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
   * had to decode it anyway. The candidates needing a verdict have their content at hand (missingVerdicts).
   */
  resolveId(state: CollectionUnderResolution, id: string, table: TrackedEntities, fetched: Fetched) {
    let winner: Candidate | undefined;
    let valid = 0;
    let rejected = 0;
    for (const key of this.#keysOf(state.name, id)) {
      const entity = table.get(key);
      if (entity === undefined) continue;
      if (!countsInCollection(state.definition, state.definitionEntity.owner, entity)) continue;
      let record: VectorRecord | undefined;
      if (!this.judged(entity, state.definition)) {
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
  async records(
    state: { name: string; definition: CollectionDefinition; store: IndexedStore },
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
    await this.fetch(
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
}
