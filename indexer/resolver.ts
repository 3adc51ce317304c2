// Derives the published collections from the tracked entities: which definition a name resolves to
// (first created wins; pinned owners; conflicts reported), which vector entities count (closed vs open
// collections), which one wins per id (most recently modified; the rest shadowed), and which are rejected.
// It turns every table change into staged store changes; `flush` returns one commit for all collections.
import type { Address, Hex } from 'viem';
import type { CollectionDefinition } from '../src/collections/index.ts';
import type { IndexedStore, StoreFactory } from '../src/engine/index.ts';
import type { DefinitionCap, DefinitionRefusal } from './admissionRounds.ts';
import { DefinitionResolver, type ResolvedDefinition } from './definitionResolver.ts';
import type { TrackedEntities, TrackedEntity } from './trackedEntities.ts';
import { OwnerHistory, publish, type CollectionState, type PublishedCollection } from './published.ts';
import { VectorResolver, type Candidate, type Fetched, type FlushAt, type Reread } from './vectorResolver.ts';

export type { CollectionStats, PublishedCollection } from './published.ts';

export interface ResolverLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

export type { DefinitionCap, DefinitionRefusal } from './admissionRounds.ts';

export interface ResolverOptions<S extends IndexedStore> {
  stores: StoreFactory<S>;
  /** --collection-owner: name -> the only owner whose definition counts. */
  pinnedOwners?: ReadonlyMap<string, Address>;
  /**
   * Follow only the definitions within these counts, shared out by creator and creation position
   * (admissionRounds.ts), so every node at the same block follows the same ones; the rest are skipped
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
  reread?: Reread;
}

/** Whether two definitions decode every entity alike (decodeVectorEntity reads only dim and attributes). */
function sameDecoding(a: CollectionDefinition, b: CollectionDefinition): boolean {
  const attributes = (d: CollectionDefinition) => JSON.stringify(Object.entries(d.attributes).sort());
  return a.dim === b.dim && attributes(a) === attributes(b);
}

/**
 * Stops a dropped store's background work (a graph rebuild in a worker would otherwise run to its end and be
 * swapped into a store no one publishes). A reader still holding the store keeps its answers.
 */
function closeStore(store: IndexedStore): void {
  void store.close?.().catch(() => undefined);
}

export class CollectionResolver<S extends IndexedStore = IndexedStore> {
  readonly #options: ResolverOptions<S>;
  readonly #definitions: DefinitionResolver;
  readonly #vectors: VectorResolver;
  readonly #states = new Map<string, CollectionState<S>>();
  readonly #dirtyCollections = new Set<string>();
  readonly #dirtyIds = new Map<string, Set<string>>();
  readonly #reported = new Set<string>();
  /** name -> the last owner published, and the recorded change of owner if one was seen. */
  readonly #owners: OwnerHistory;
  #published: ReadonlyMap<string, PublishedCollection<S>> = new Map();

  constructor(options: ResolverOptions<S>) {
    this.#options = options;
    this.#owners = new OwnerHistory(options.logger);
    const reportOnce = (key: string, fields: Record<string, unknown>, message: string) =>
      this.#reportOnce(key, fields, message);
    this.#definitions = new DefinitionResolver({
      pinnedOwners: options.pinnedOwners,
      definitionCap: options.definitionCap,
      warn: options.logger && ((fields, message) => options.logger?.warn(fields, message)),
      reportOnce,
      onAdmissionChange: (name) => this.#dirtyCollections.add(name),
    });
    this.#vectors = new VectorResolver(reportOnce, options.reread);
  }

  /** The collections as of the last commit. Replaced (never mutated) at each commit. */
  get published(): ReadonlyMap<string, PublishedCollection<S>> {
    return this.#published;
  }

  /** Definition entities skipped (invalid, over the bounds) among the live ones. */
  get rejectedDefinitions(): number {
    return this.#definitions.rejectedDefinitions;
  }

  /** Live definition entities over the cap (per creator or in all), not followed; recomputed, not accumulated. */
  get skippedDefinitions(): number {
    return this.#definitions.skippedDefinitions;
  }

  /** Why the live definition `key` is not followed, as of the last resolve (undefined: followed, or unknown). */
  refusal(key: Hex): DefinitionRefusal | undefined {
    return this.#definitions.refusal(key);
  }

  /** Whether a definition of `name` that `creator` writes next would be followed (undefined) or why not. */
  refusalOfNext(creator: Address, name: string): DefinitionRefusal | undefined {
    return this.#definitions.refusalOfNext(creator, name);
  }

  /** Table listener: keeps the name/id indexes and marks what must be recomputed. */
  readonly onEntityChange = (previous: TrackedEntity | undefined, next: TrackedEntity | undefined): void => {
    for (const entity of [previous, next]) {
      if (!entity) continue;
      if (entity.kind === 'collection') {
        this.#dirtyCollections.add(entity.collection);
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
    if (entity.kind === 'collection') this.#definitions.index(entity, add);
    else this.#vectors.index(entity, add);
  }

  #reportOnce(key: string, fields: Record<string, unknown>, message: string): void {
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    this.#options.logger?.warn(fields, message);
  }

  /**
   * What a snapshot keeps of an entity's verdict: null (valid) or the reason under the definition its
   * collection publishes now, undefined when it has none under it.
   */
  keptVerdict(entity: TrackedEntity): string | null | undefined {
    const published = this.#published.get(entity.collection);
    if (!published || !this.#vectors.judged(entity, published.definition)) return undefined;
    return entity.verdict?.reason ?? null;
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
    this.#definitions.admit(table);
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
          ? this.#definitions.resolve(name, table)
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
      if (definitionChanged && !redecode) this.#vectors.keepDecoding(resolved.definition, current.definition);
      const ids = definitionChanged
        ? new Set([...current.winners.keys(), ...this.#vectors.ids(name)])
        : (dirtyIds.get(name) ?? new Set<string>());
      // Per-id results are staged as deltas and applied by the commit: copying the winner maps of a large
      // collection for every block would cost more than the block itself.
      const state: CollectionState<S> = {
        ...current,
        definitionEntity: resolved.entity,
        definition: sameContent ? current.definition : resolved.definition,
        conflicts: resolved.conflicts,
      };
      await this.#vectors.fetch(this.#vectors.missingVerdicts(state, ids, table, fetched), at, fetched);
      const winnerChanges = new Map<string, TrackedEntity | undefined>();
      const countChanges = new Map<string, { rejected: number; shadowed: number } | undefined>();
      const remove: string[] = [];
      const changed: (Candidate & { before: TrackedEntity | undefined })[] = [];
      for (const id of ids) {
        const { winner, rejected, shadowed } = this.#vectors.resolveId(state, id, table, fetched);
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
      const upsert = await this.#vectors.records(state, changed, at, fetched);
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
    resolved: ResolvedDefinition,
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
    const ids = [...this.#vectors.ids(name)];
    await this.#vectors.fetch(this.#vectors.missingVerdicts(state, ids, table, fetched), at, fetched);
    const changed: Candidate[] = [];
    for (const id of ids) {
      const { winner, rejected, shadowed } = this.#vectors.resolveId(state, id, table, fetched);
      state.rejected += rejected;
      state.shadowed += shadowed;
      if (rejected || shadowed) state.perId.set(id, { rejected, shadowed });
      if (winner) {
        state.winners.set(id, winner.entity);
        if (!store) changed.push(winner);
      }
    }
    if (!store) {
      const upsert = await this.#vectors.records(state, changed, at, fetched);
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
    for (const name of this.#definitions.names()) {
      const resolved = this.#definitions.resolve(name, table);
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
    const resolved = this.#definitions.resolve(name, table);
    if (
      resolved?.entity.key !== decodedUnder.key ||
      resolved.entity.lastModifiedAtBlock !== decodedUnder.lastModifiedAtBlock
    )
      return;
    for (const [key, reason] of verdicts) {
      const entity = table.get(key);
      if (entity?.kind !== 'vector' || entity.collection !== name) continue;
      entity.verdict = this.#vectors.verdict(resolved.definition, reason);
    }
  }

  #publish(block: number): void {
    this.#published = publish(this.#states, this.#owners, block);
  }
}
