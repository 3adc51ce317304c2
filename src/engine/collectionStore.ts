// One collection in memory (ARCHITECTURE.md §1): live records, an HNSW graph over their vectors,
// per-attribute indexes, a keyword index over documents, and the planner on top. The chain indexer
// stages each block with `prepare` and commits it synchronously (storeContract.ts); the tests and the
// benchmark, which own a store alone, use `apply`. The service calls the read methods (search, count,
// get, records, keywordSearch, hybridSearch); snapshots go through save/load.
//
// The store composes its phases the way pgvector splits an index: the state they share
// (slotTable.ts: slots, labels, graph, maps), attribute columns and indexes (attributeColumns.ts),
// insert (staging.ts), vacuum (rebuild.ts), snapshot save/load (storeSnapshot.ts), and the search plan
// (plan/: store → plan → graph and back). All writes and saves run one at a time on a queue; graph
// rebuilds run in a worker thread beside it and are swapped in at a block boundary.
//
// Records read out by get and records are fresh objects carrying their own copy of the vector
// (halfvec bytes derived from it on demand), so a caller never holds memory the store reuses. Search
// hits (vector, keyword, hybrid) carry the store's own record summary instead, without the vector:
// answers never show one, and a per-hit record with a vector copy would cost a small collection much of
// its throughput. A summary is never changed once stored (a replaced record gets a new one), so a hit keeps the
// fields it was found with; `get(hit.record.key)` reads the vector.

import {
  checkDefinitionUpdate,
  type CollectionDefinition,
  ENTITY_KEY_FORM_REGEX,
  InvalidArgumentError,
  type VectorRecord,
} from '../collections/index.ts';
import { FilterCache } from './filter/cache.ts';
import type { Cond } from './filter/types.ts';
import type { Graph } from './hnsw/graph.ts';
import { effectiveEf, exactThreshold } from './hnsw/params.ts';
import { fuse, hybridK, hybridPool, vectorSide } from './hybrid.ts';
import { metricOps } from './metrics.ts';
import { countPassing } from './plan/enumerations.ts';
import { runHere } from './plan/run.ts';
import { runOnThreads } from './plan/threads.ts';
import { searchInKeyOrder } from './plan/ties.ts';
import type { AllowedMemo, Plan, PlannedResult, PlannerContext } from './plan/types.ts';
import { checkedQuery } from './queryVector.ts';
import { recallProbe } from './recallProbe.ts';
import { RECALL_K, type RecallEstimate, recallEstimate } from './recallEstimate.ts';
import { GraphRebuilder, type RebuildOptions } from './rebuild.ts';
import { RecordView } from './recordView.ts';
import type {
  FilterParams,
  HybridAnswer,
  HybridSearchParams,
  KeywordAnswer,
  KeywordSearchParams,
  RecordSummary,
  SearchAnswer,
  SearchHit,
  SearchMode,
  SearchParams,
} from './searchTypes.ts';
import { SlotTable } from './slotTable.ts';
import { type Stage, stageBlock } from './staging.ts';
import type { StoreChanges } from './storeContract.ts';
import { readStoreManifest, restoreStoreSnapshot, writeStoreSnapshot } from './storeSnapshot.ts';

/** One block's changes: the store contract's StoreChanges. */
export type BlockChanges = StoreChanges;

/** How a store runs its graph rebuilds (logger; tests inject a worker module and phase hooks). */
export type StoreOptions = { rebuild?: RebuildOptions };

/** A store's AllowedMemo and what it was made for. */
type Enumerations = Required<AllowedMemo> & { version: number; slotCount: number };

export class CollectionStore {
  readonly name: string;
  #def: CollectionDefinition;
  readonly #t: SlotTable;
  #converted = false;
  readonly #filters = new FilterCache();
  #queue: Promise<unknown> = Promise.resolve();
  #staged: Stage | undefined;
  /** Bumped when a block is staged, committed or rolled back and by definition updates (searchPinned). */
  #version = 0;
  /** Allocated at the first query: an empty collection holds nothing of the size of its dimension. */
  #queryBuf: Float32Array | undefined;
  readonly #ctx: PlannerContext;
  /**
   * The planner's enumerations of filters (AllowedMemo), valid for the store version and slot count they
   * were made at (a block reserves its slots before its stage bumps the version).
   */
  #enumerated: Enumerations = { version: -1, slotCount: -1, allowedMemo: new Map(), bitsMemo: new Map() };
  readonly #rebuilder: GraphRebuilder;

  /**
   * An empty store.
   * @param name the collection name
   * @param definition its parsed definition (dim, metric, attributes, index params)
   * @param options how graph rebuilds run and are logged
   * @example new CollectionStore('notes', definition)
   */
  constructor(name: string, definition: CollectionDefinition, options: StoreOptions = {}) {
    this.name = name;
    this.#def = definition;
    const t = new SlotTable(metricOps(definition.metric), definition);
    this.#t = t;
    this.#rebuilder = new GraphRebuilder(
      t,
      name,
      () => this.#def,
      (task) => this.#enqueue(task),
      options.rebuild,
    );
    this.#ctx = t.plannerContext(() => this.#enumerations());
  }

  /** Runs `task` after every write and save queued before it; a failure does not stop the queue. */
  #enqueue<T>(task: () => T | Promise<T>): Promise<T> {
    const run = this.#queue.then(task);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /**
   * The enumeration memo of the store as it is: a block staged, committed or rolled back, or a definition
   * update, starts a new one.
   */
  #enumerations(): Enumerations {
    const e = this.#enumerated;
    const slotCount = this.#t.slotCount;
    if (e.version === this.#version && e.slotCount === slotCount) return e;
    this.#enumerated = { version: this.#version, slotCount, allowedMemo: new Map(), bitsMemo: new Map() };
    return this.#enumerated;
  }

  get definition(): CollectionDefinition {
    return this.#def;
  }

  /**
   * Whether `load` converted the store from a snapshot of the retired hnswlib-node engine: the snapshot it
   * came from is not this store's until it is written again (the indexer writes it at its next chance).
   */
  get converted(): boolean {
    return this.#converted;
  }

  /** Live records. */
  get size(): number {
    return this.#t.live;
  }

  /**
   * The graph's element and deleted counts (rebuilds reset both to the live records), the elements it
   * has room for, whether its native index exists (from the first insert on), and its engine.
   */
  get graphStats(): Pick<Graph, 'elementCount' | 'deleted' | 'capacity' | 'allocated' | 'engine'> {
    const graph = this.#t.graph;
    return {
      elementCount: graph.elementCount,
      deleted: graph.deleted,
      capacity: graph.capacity,
      allocated: graph.allocated,
      engine: graph.engine,
    };
  }

  /** Graph rebuilds: whether one is in flight, how many were swapped in, how many worker attempts failed. */
  get rebuildStats(): { running: boolean; rebuilds: number; failed: number } {
    const r = this.#rebuilder;
    return { running: r.running, rebuilds: r.rebuilds, failed: r.failed };
  }

  /**
   * Resolves once no graph rebuild is in flight: the worker's graph was swapped in at a block
   * boundary, or the attempt failed and the old graph stayed.
   */
  rebuilt(): Promise<void> {
    return this.#rebuilder.idle();
  }

  /**
   * Stops a running graph rebuild (terminates its worker, removes its file) and starts no more: for a
   * store being dropped or a node shutting down. Reads and writes keep working on the current graph.
   */
  close(): Promise<void> {
    return this.#rebuilder.close();
  }

  /**
   * Takes an allowed definition update (ef_search, added attributes, description…).
   * @param definition the new definition
   * @throws InvalidArgumentError when it changes dim, metric, attribute types or build parameters
   */
  updateDefinition(definition: CollectionDefinition): void {
    const violations = checkDefinitionUpdate(this.#def, definition);
    if (violations.length > 0) {
      throw new InvalidArgumentError(
        `definition update for ${this.name} is not allowed: ${violations.map((v) => v.message).join('; ')}`,
        violations.map((v) => ({ path: v.field, message: v.message })),
      );
    }
    this.#def = definition;
    this.#version++;
    this.#filters.clear();
    this.#t.reindexAttributes(definition);
  }

  // ---- writes ----

  /**
   * Applies one block's changes atomically for readers: removals are entity keys; upserts replace any
   * record with the same id or key. Graph inserts run in slices that yield to the event loop; new
   * records become visible together at the final synchronous commit. Same as `prepare` followed at once
   * by its commit, and waits for any graph rebuild in flight (the indexer, which uses `prepare`, never
   * waits for one).
   * @param changes `{ remove, upsert }`
   * @throws DimensionMismatchError for a record of the wrong dim (nothing is applied)
   * @example await store.apply({ remove: [], upsert: [record] })
   */
  async apply(changes: BlockChanges): Promise<void> {
    const commit = await this.prepare(changes);
    commit();
    await this.#queue;
    await this.#rebuilder.idle();
  }

  /**
   * Stages one block's changes (the indexer's contract, storeContract.ts): does the expensive
   * work, yielding to the event loop, and resolves to a synchronous commit that makes the block
   * visible, so the indexer can commit several collections in one tick. Nothing is visible before
   * the commit. A stage not committed before the next `prepare` is rolled back.
   * @param changes `{ remove, upsert }`
   * @returns the commit function
   * @throws DimensionMismatchError for a record of the wrong dim (nothing is staged)
   */
  prepare(changes: BlockChanges): Promise<() => void> {
    const run = this.#enqueue(() => {
      this.#staged?.rollback();
      return stageBlock(this.#t, this.#def.dim, changes, {
        name: this.name,
        staged: (stage) => {
          this.#staged = stage;
          this.#version++;
        },
        committed: () => {
          this.#version++;
          this.#rebuilder.committed();
        },
      });
    });
    return run.then((stage) => () => stage.commit());
  }

  // ---- reads ----

  /**
   * A record by entity key when `ref` has the key form (0x + 64 hex, case-insensitive), else by id. A
   * key-form ref is never an id: an entity whose id spelled another's key would otherwise take over its
   * look-ups (and deletes).
   * @param ref id or key
   * @returns the record or undefined
   */
  get(ref: string): VectorRecord | undefined {
    const s = ENTITY_KEY_FORM_REGEX.test(ref) ? this.#t.slotOfKey(ref) : this.#t.byId.get(ref);
    return s === undefined ? undefined : this.#recordAt(s);
  }

  /** Live records in slot order. */
  *records(): IterableIterator<VectorRecord> {
    for (let s = 0; s < this.#t.slotCount; s++) if (this.#t.records[s] !== undefined) yield this.#recordAt(s);
  }

  /** A live slot's record with its vector copied out of the slab (a fresh object each call). */
  #recordAt(slot: number): VectorRecord {
    return new RecordView(this.#t.records[slot]!, this.#t.copy(slot), this.name);
  }

  #compile(params: FilterParams): Cond | undefined {
    return this.#filters.compile(params, this.#def);
  }

  /**
   * The query as float32, checked.
   * @param fresh into a new buffer (one the caller keeps), not the one the next query reuses
   */
  #queryVector(vector: ArrayLike<number>, fresh = false): Float32Array {
    const dim = this.#def.dim;
    return checkedQuery(vector, fresh ? new Float32Array(dim) : (this.#queryBuf ??= new Float32Array(dim)));
  }

  /**
   * k nearest records, optionally filtered; never fewer than min(k, passing records).
   * @param params `{ vector, k, where?, filter?, efSearch? }` (k is validated by the caller, 1–50)
   * @returns results nearest first with pgvector distance and score (records without their vector:
   *   read one with `get(record.key)`), and `search_mode`
   * @throws DimensionMismatchError, InvalidFilterError
   * @example store.search({ vector: [1, 0, 0, 0], k: 2, where: "topic = str('pets')" })
   */
  search(params: SearchParams): SearchAnswer {
    return this.#answer(this.#searchSlots(params));
  }

  /**
   * `search`, with its graph calls on the graph's threads (plan/threads.ts), so the main thread serves
   * other requests meanwhile: the walks and the exact scans of the plan, the plan and the filter's
   * allowed set staying on the main thread. A store with a block staged answers synchronously. The
   * answer is exactly `search`'s at the moment of the call: it resolves to undefined instead when the
   * store changed before the threads answered (a block staged, committed or rolled back, a rebuilt graph
   * swapped in, a definition update: about once per block), and the caller asks `search` again against
   * a fresh view.
   * @throws what `search` throws, before anything runs
   */
  async searchPinned(params: SearchParams): Promise<SearchAnswer | undefined> {
    const res = await this.#slotsPinned(params);
    return res === undefined ? undefined : this.#answer(res);
  }

  /** searchPinned's planned slots (undefined: the store changed meanwhile). */
  #slotsPinned(params: SearchParams): Promise<PlannedResult | undefined> {
    const t = this.#t;
    // A buffer of its own: the plan reads it again after a thread answered, and the store's buffer
    // serves the queries made meanwhile.
    const plan = this.#plan(params, this.#queryVector(params.vector, true));
    if (t.pending) return Promise.resolve(runHere(this.#ctx, plan));
    const version = this.#version;
    const graph = t.graph;
    const changes = graph.changes;
    const unchanged = () => this.#version === version && t.graph === graph && graph.changes === changes && !t.pending;
    return runOnThreads(this.#ctx, plan, unchanged);
  }

  #answer(res: PlannedResult): SearchAnswer {
    const score = this.#t.ops.score;
    const records = this.#t.records;
    const results: SearchHit[] = new Array(res.slots.length);
    for (let i = 0; i < res.slots.length; i++) {
      const d = res.distances[i]!;
      results[i] = { record: records[res.slots[i]!]!, distance: d, score: score(d) };
    }
    return { results, search_mode: res.mode };
  }

  /** One leave-one-out probe of the recall estimate (recallProbe.ts). */
  recallProbe(sample: number, k: number): { found: number; wanted: number; mode: SearchMode } | undefined {
    return recallProbe(this.#t, this.#ctx, (fetch) => effectiveEf(this.#def, fetch, this.#t.live), sample, k);
  }

  /**
   * The node's own recall estimate for this collection (cached; measured in idle time, recallEstimate.ts).
   * A collection small enough that every unfiltered search scans exactly has recall 1 by construction,
   * reported without measuring.
   */
  recallEstimate(): RecallEstimate | null {
    const live = this.#t.live;
    if (live > RECALL_K && live <= exactThreshold(this.#def.dim))
      return { recall_at_10: 1, queries: 0, records: live, search_mode: 'exact', measured_at: null };
    return recallEstimate(this);
  }

  /** Entity key of a live slot: the order of equal scores, the same on every node. */
  readonly #tieKey = (slot: number): string => this.#t.records[slot]!.key;

  /** `search`'s planned slots, answered here. */
  #searchSlots(params: SearchParams): PlannedResult {
    return runHere(this.#ctx, this.#plan(params, this.#queryVector(params.vector)));
  }

  /**
   * The plan of a search, its filter compiled now (a bad filter throws before anything runs). k is
   * validated by the caller (1–50); anything else must still not allocate k-sized buffers (the plan
   * answers nothing for k < 1).
   */
  #plan(params: SearchParams, q: Float32Array): Plan<PlannedResult> {
    const cond = this.#compile(params);
    const k = Math.min(Math.floor(params.k), this.#t.live);
    const widthOf = (fetch: number) => effectiveEf(this.#def, fetch, this.#t.live, params.efSearch);
    return searchInKeyOrder(this.#ctx, q, k, cond, widthOf, this.#tieKey);
  }

  /**
   * Exactly how many live records pass a filter.
   * @param params `{ where?, filter? }`
   * @returns the count
   * @throws InvalidFilterError
   */
  count(params: FilterParams = {}): number {
    return countPassing(this.#ctx, this.#compile(params));
  }

  /**
   * The live records passing a filter, without their vectors (listings and deletes by filter).
   * @param params `{ where?, filter? }`
   * @returns the store's own record objects, in slot order: read them, never change them
   * @throws InvalidFilterError
   */
  select(params: FilterParams = {}): RecordSummary[] {
    const accept = this.#acceptor(params);
    const out: RecordSummary[] = [];
    for (let s = 0; s < this.#t.slotCount; s++) {
      const rec = this.#t.records[s];
      if (rec !== undefined && accept(s)) out.push(rec);
    }
    return out;
  }

  #acceptor(params: FilterParams): (slot: number) => boolean {
    return this.#t.acceptor(this.#compile(params));
  }

  /**
   * BM25 keyword search over documents.
   * @param params `{ text, k, where?, filter? }`
   * @returns results best first with their BM25 score
   * @throws InvalidFilterError
   */
  keywordSearch(params: KeywordSearchParams): KeywordAnswer {
    const hits = this.#keywordSlots(params);
    const records = this.#t.records;
    return { results: hits.slots.map((s, i) => ({ record: records[s]!, score: hits.scores[i]! })) };
  }

  #keywordSlots(params: KeywordSearchParams): { slots: number[]; scores: number[] } {
    const accept = this.#acceptor(params);
    const k = Math.floor(params.k);
    if (!(k >= 1) || this.#t.live === 0) return { slots: [], scores: [] };
    return this.#t.keyword.search(params.text, k, accept, this.#tieKey);
  }

  /**
   * Vector + keyword search fused by reciprocal rank (k = 60); `distance` is the vector distance.
   * @param params `{ vector, text, k, where?, filter? }`
   * @returns fused results, best first, and the vector side's `search_mode`
   * @throws DimensionMismatchError, InvalidFilterError
   */
  hybridSearch(params: HybridSearchParams): HybridAnswer {
    const k = hybridK(params, this.#def.dim);
    if (!(k >= 1)) return { results: [], search_mode: 'exact' };
    return this.#fused(params, k, this.#searchSlots(vectorSide(params, k)));
  }

  /**
   * `hybridSearch` with its vector part's graph calls on threads, as searchPinned (the keyword part runs
   * on the main thread once they answered); undefined when the store changed meanwhile: ask again.
   * @throws what `hybridSearch` throws, before anything runs
   */
  async hybridSearchPinned(params: HybridSearchParams): Promise<HybridAnswer | undefined> {
    const k = hybridK(params, this.#def.dim);
    if (!(k >= 1)) return { results: [], search_mode: 'exact' };
    const vec = await this.#slotsPinned(vectorSide(params, k));
    return vec === undefined ? undefined : this.#fused(params, k, vec);
  }

  /** The vector side's answer and the keyword side's, fused by reciprocal rank. */
  #fused(params: HybridSearchParams, k: number, vec: PlannedResult): HybridAnswer {
    const kw = this.#keywordSlots({ text: params.text, k: hybridPool(k), where: params.where, filter: params.filter });
    const t = this.#t;
    const q = this.#queryVector(params.vector);
    return fuse(vec, kw.slots, k, {
      record: (slot) => t.records[slot]!,
      distance: (slot) => t.ops.distance(q, t.view(slot)),
    });
  }

  // ---- snapshots ----

  /**
   * Writes the store to `dir` (created if missing): graph (hnswlib writeIndex), records, halfvec
   * bytes, keyword index, manifest last.
   * @param dir target directory
   */
  save(dir: string): Promise<void> {
    return this.#enqueue(() => {
      // The graph file would carry the staged labels as live elements.
      if (this.#staged !== undefined)
        throw new Error(`collection ${this.name}: cannot save while a block is staged (commit it first)`);
      return writeStoreSnapshot(dir, this.#t, this.name, this.#def);
    });
  }

  /**
   * Restores a store written by `save`.
   * @param dir the snapshot directory
   * @param name the collection name
   * @param definition its current definition (dim and metric must match the snapshot's)
   * @param options how graph rebuilds run and are logged
   * @returns the store
   * @throws InvalidArgumentError when the snapshot does not fit the definition
   */
  static async load(
    dir: string,
    name: string,
    definition: CollectionDefinition,
    options: StoreOptions = {},
  ): Promise<CollectionStore> {
    const manifest = await readStoreManifest(dir, definition);
    const store = new CollectionStore(name, definition, options);
    store.#converted = await restoreStoreSnapshot(dir, manifest, store.#t, name, definition, options.rebuild);
    return store;
  }
}
