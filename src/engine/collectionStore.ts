// One collection in memory (ARCHITECTURE.md §1): live records, an HNSW graph over their float32 vectors,
// per-attribute indexes, a keyword index over documents, and the planner on top. The chain indexer
// stages each block with `prepare` and commits it synchronously (storeContract.ts); the tests and the
// benchmark, which own a store alone, use `apply`. The service calls the read methods (search, count,
// get, records, keywordSearch, hybridSearch); snapshots go through save/load.
//
// The store composes its phases the way pgvector splits an index: the state they share
// (slotTable.ts: slots, labels, slab, maps), attribute columns and indexes (attributeColumns.ts),
// insert (staging.ts), vacuum (rebuild.ts), snapshot save/load (storeSnapshot.ts); the scans (the
// read methods, the filter cache, the tie order) live here. All writes and saves run one at a time on
// a queue; graph rebuilds run in a worker thread beside it and are swapped in at a block boundary.
//
// Records read out by get and records are fresh objects carrying their own copy of the vector
// (halfvec bytes derived from it on demand), so a caller never holds memory the store reuses. Search
// hits (vector, keyword, hybrid) carry the store's own record summary instead, without the vector:
// answers never show one, and a per-hit record (with a vector copy deferred past the next block)
// cost 15–25 % of a small collection's QPS. A summary is never changed once stored (a replaced record
// gets a new one), so a hit keeps the fields it was found with; `get(hit.record.key)` reads the vector.

import {
  checkDefinitionUpdate,
  type CollectionDefinition,
  DimensionMismatchError,
  ENTITY_KEY_FORM_REGEX,
  InvalidArgumentError,
  type VectorRecord,
} from '../collections/index.ts';
import { compileFilter } from './filter/compile.ts';
import { filterCacheKey } from './filter/cacheKey.ts';
import { estimate, leafCount } from './filter/plan.ts';
import { buildPredicate } from './filter/predicate.ts';
import type { Cond } from './filter/types.ts';
import type { GraphEngine, GraphHits } from './hnsw/graph.ts';
import { effectiveEf, exactThreshold } from './hnsw/params.ts';
import { rrf } from './keyword.ts';
import { QUERY_VALUE_MAX } from './limits.ts';
import { metricOps } from './metrics.ts';
import {
  allowedCount,
  exactSearch,
  type AllowedMemo,
  type PlannedResult,
  type PlannerContext,
  plannedOnThreads,
  plannedSearch,
  type SearchMode,
  unfilteredFirstCall,
} from './planner.ts';
import { RECALL_K, type RecallEstimate, recallEstimate } from './recallEstimate.ts';
import { GraphRebuilder, type RebuildOptions } from './rebuild.ts';
import { RecordView, type StoredRecord } from './recordView.ts';
import { SlotTable } from './slotTable.ts';
import { type Stage, stageBlock } from './staging.ts';
import type { StoreChanges } from './storeContract.ts';
import { readStoreManifest, restoreStoreSnapshot, writeStoreSnapshot } from './storeSnapshot.ts';

export type { SearchMode };

export type SearchParams = {
  vector: ArrayLike<number>;
  k: number;
  where?: string;
  filter?: unknown;
  efSearch?: number;
};
/** A search hit: the record's stored summary (read only, no vector) with its distance and score. */
export type SearchHit = { record: RecordSummary; distance: number; score: number };
export type SearchAnswer = { results: SearchHit[]; search_mode: SearchMode };
export type FilterParams = { where?: string; filter?: unknown };
export type KeywordSearchParams = { text: string; k: number; where?: string; filter?: unknown };
export type KeywordHit = { record: RecordSummary; score: number };
export type HybridSearchParams = {
  vector: ArrayLike<number>;
  text: string;
  k: number;
  where?: string;
  filter?: unknown;
};
export type HybridHit = { record: RecordSummary; score: number; distance?: number };
/** One block's changes: the store contract's StoreChanges. */
export type BlockChanges = StoreChanges;

/** How a store runs its graph rebuilds (logger; tests inject a worker module and phase hooks). */
export type StoreOptions = { rebuild?: RebuildOptions };

/** A record as listings see it: everything but the vector. */
export type RecordSummary = Readonly<StoredRecord>;
/** A store's AllowedMemo and what it was made for. */
type Enumerations = Required<AllowedMemo> & { version: number; slotCount: number };
/** Compiled filters kept per store, by filterCacheKey (cleared when the definition changes). */
const FILTER_CACHE_SIZE = 256;
/** Hybrid search ranks this many candidates per list: clamp(3k, 30, 150). */
const HYBRID_POOL_MIN = 30;
const HYBRID_POOL_MAX = 150;

/** A sum of squares above this may hold a value beyond ±QUERY_VALUE_MAX (each value's square is at most this). */
const QUERY_SQUARES_MAX = QUERY_VALUE_MAX * QUERY_VALUE_MAX;

/**
 * Throws for the first value of a query that is not a finite number within ±QUERY_VALUE_MAX (NaN fails
 * both comparisons; out-of-range values would overflow float32 distances into NaN); returns when the
 * large sum of squares came from values all in range.
 */
function rejectQueryValue(vector: ArrayLike<number>): void {
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i]!;
    if (!(x >= -QUERY_VALUE_MAX && x <= QUERY_VALUE_MAX))
      throw new InvalidArgumentError(
        `vector[${i}]: ${x} is not a finite number within ±${QUERY_VALUE_MAX.toExponential()}`,
      );
  }
}

function hybridPool(k: number): number {
  return Math.min(HYBRID_POOL_MAX, Math.max(HYBRID_POOL_MIN, k * 3));
}

export class CollectionStore {
  readonly name: string;
  #def: CollectionDefinition;
  readonly #t: SlotTable;
  #converted = false;
  readonly #filterCache = new Map<string, Cond | undefined>();
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
      (task) => {
        const run = this.#queue.then(task);
        this.#queue = run.catch(() => undefined);
        return run;
      },
      options.rebuild,
    );
    // One context object, read live through getters, so the planner always sees the current graph.
    const enumerations = () => this.#enumerations();
    this.#ctx = {
      get allowedMemo() {
        return enumerations().allowedMemo;
      },
      get bitsMemo() {
        return enumerations().bitsMemo;
      },
      ops: t.ops,
      get graph() {
        return t.graph;
      },
      get slotCount() {
        return t.slotCount;
      },
      get labelSlot() {
        return t.labelSlot;
      },
      get slotLabel() {
        return t.slotLabel;
      },
      get pending() {
        return t.pending;
      },
      rows: t.columns,
      get liveCount() {
        return t.live;
      },
      index: (field) => t.columns.index(field),
      forEachLive: (fn: (slot: number) => void) => {
        for (let s = 0; s < t.slotCount; s++) if (t.records[s] !== undefined) fn(s);
      },
    };
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
   * Whether `load` converted the store from another engine's snapshot: the snapshot it came from is not
   * this store's until it is written again (the indexer writes it at its next chance).
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
   * has room for, whether its native index exists (from the first insert on), and its engine (kept for the
   * store's life).
   */
  get graphStats(): {
    elementCount: number;
    deleted: number;
    capacity: number;
    allocated: boolean;
    engine: GraphEngine;
  } {
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
    this.#filterCache.clear();
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
    const run = this.#queue.then(() => {
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
    this.#queue = run.catch(() => undefined);
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
    if (params.where === undefined && (params.filter === undefined || params.filter === null)) return undefined;
    const key = filterCacheKey(params);
    if (key === undefined) return compileFilter(params, this.#def);
    const hit = this.#filterCache.get(key);
    if (hit !== undefined || this.#filterCache.has(key)) return hit;
    const cond = compileFilter(params, this.#def);
    if (this.#filterCache.size >= FILTER_CACHE_SIZE) this.#filterCache.delete(this.#filterCache.keys().next().value!);
    this.#filterCache.set(key, cond);
    return cond;
  }

  /**
   * The query as float32, checked.
   * @param fresh into a new buffer (one the caller keeps), not the one the next query reuses
   */
  #queryVector(vector: ArrayLike<number>, fresh = false): Float32Array {
    if (vector.length !== this.#def.dim)
      throw new DimensionMismatchError({ expected: this.#def.dim, got: vector.length });
    const q = fresh ? new Float32Array(this.#def.dim) : (this.#queryBuf ??= new Float32Array(this.#def.dim));
    // One sum of squares stands in for a range check per value (at dim 384 the copy took 0.6 µs, not 1.1):
    // it is NaN or infinite when a value is, and above QUERY_SQUARES_MAX whenever one is out of range.
    let squares = 0;
    try {
      for (let i = 0; i < q.length; i++) {
        const x = vector[i]!;
        q[i] = x;
        squares += x * x;
      }
    } catch (conversion) {
      // A value whose conversion to a number throws (an object with a broken toString): an earlier value
      // may be out of range, and that is the error the caller gets, as from the value-by-value check.
      rejectQueryValue(vector);
      throw conversion;
    }
    if (!(squares <= QUERY_SQUARES_MAX)) rejectQueryValue(vector);
    return q;
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
   * `search`, with its graph calls on threads of the native engine, so the main thread serves other
   * requests meanwhile: the first call of an unfiltered plan (the walk, or the exact scan of a small
   * collection), and every call of a filtered one (the filtered walk, its post-filter's walk, the exact
   * scan over the allowed records; planner.ts plannedOnThreads), the plan and the filter's allowed set
   * staying on the main thread. Another engine, or a block staged, answers synchronously. The answer is
   * exactly `search`'s at the moment of the call: it resolves to undefined instead when the store changed
   * before the threads answered (a block staged, committed or rolled back, a rebuilt graph swapped in, a
   * definition update: about once per block), and the caller asks `search` again against a fresh view.
   * @throws what `search` throws, before anything runs
   */
  async searchPinned(params: SearchParams): Promise<SearchAnswer | undefined> {
    const res = await this.#slotsPinned(params);
    return res === undefined ? undefined : this.#answer(res);
  }

  /** searchPinned's planned slots (undefined: the store changed meanwhile). */
  async #slotsPinned(params: SearchParams): Promise<PlannedResult | undefined> {
    const t = this.#t;
    const graph = t.graph;
    // A buffer of its own: the plan reads it again after the thread answered, and the store's buffer
    // serves the queries made meanwhile.
    const q = this.#queryVector(params.vector, true);
    const cond = this.#compile(params);
    const k = Math.min(Math.floor(params.k), t.live);
    const version = this.#version;
    const changes = graph.changes;
    const unchanged = () => this.#version === version && t.graph === graph && graph.changes === changes && !t.pending;
    if (k >= 1 && cond !== undefined && cond.t !== 'all' && !t.pending)
      return plannedOnThreads(this.#ctx, (ctx) => this.#searchSlots(params, q, cond, undefined, ctx), unchanged);
    const fetch = Math.min(k + 1, t.live);
    const ef = effectiveEf(this.#def, fetch, t.live, params.efSearch);
    const call = k >= 1 ? unfilteredFirstCall(this.#ctx, q.length, fetch, ef, cond) : undefined;
    if (call === undefined) return this.#searchSlots(params, q, cond);
    const first = await (call.exact ? graph.exactAsync(q, fetch) : graph.searchAsync(q, fetch, call.width));
    if (!unchanged()) return undefined;
    return this.#searchSlots(params, q, cond, first);
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

  /**
   * One leave-one-out probe of the recall estimate (recallEstimate.ts): the `sample`-th sampled live
   * record's vector as the query, this store's default unfiltered search against the exact scan, the
   * record itself dropped from both answers.
   * @returns the exact neighbours the search found, out of how many, and the mode it used; undefined
   *   when k or fewer records are live
   */
  recallProbe(sample: number, k: number): { found: number; wanted: number; mode: SearchMode } | undefined {
    const t = this.#t;
    if (t.live <= k || t.slotCount === 0) return undefined;
    // Samples spread over the slots by the golden ratio; free slots skip to the next live one.
    let slot = Math.floor(((sample * 0.6180339887498949 + 0.5) % 1) * t.slotCount);
    for (let tries = 0; t.records[slot] === undefined; tries++) {
      if (tries >= t.slotCount) return undefined;
      slot = (slot + 1) % t.slotCount;
    }
    // From the slab or, in a native store, from the graph (its only copy).
    const q = t.copy(slot);
    const fetch = k + 1;
    const got = plannedSearch(this.#ctx, q, fetch, effectiveEf(this.#def, fetch, t.live), undefined);
    const truth = exactSearch(this.#ctx, q, fetch);
    const others = (slots: number[]) => slots.filter((s) => s !== slot).slice(0, k);
    const want = new Set(others(truth.slots));
    let found = 0;
    for (const s of others(got.slots)) if (want.has(s)) found++;
    return { found, wanted: want.size, mode: got.mode };
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

  /**
   * @param first the hits of the plan's first graph call, made already (searchPinned)
   * @param ctx what the planner reads (plannedOnThreads's, whose graph calls go to threads)
   */
  #searchSlots(
    params: SearchParams,
    q = this.#queryVector(params.vector),
    cond = this.#compile(params),
    first?: GraphHits,
    ctx = this.#ctx,
  ): PlannedResult {
    // k is validated by the caller (1–50); anything else must still not allocate k-sized buffers.
    const k = Math.min(Math.floor(params.k), this.#t.live);
    if (!(k >= 1)) return { slots: [], distances: [], mode: 'exact' };
    // Equal distances are ordered by entity key, not by slot (which depends on each node's history).
    // One more than k shows whether a tie runs past the k-th place; while it might, fetch twice as many
    // (bounded by the live count: duplicates of one vector can tie across the whole collection).
    let made = first;
    for (let fetch = Math.min(k + 1, this.#t.live); ; fetch = Math.min(fetch * 2, this.#t.live)) {
      const ef = effectiveEf(this.#def, fetch, this.#t.live, params.efSearch);
      const res = plannedSearch(ctx, q, fetch, ef, cond, made);
      made = undefined;
      const n = res.slots.length;
      const boundary = res.distances[k - 1];
      if (n < fetch || fetch >= this.#t.live || n <= k || res.distances[n - 1] !== boundary)
        return this.#byDistanceThenKey(res, k);
    }
  }

  #byDistanceThenKey(res: PlannedResult, k: number): PlannedResult {
    // Nearly every answer arrives strictly ascending with no tie at the k-th place: keep its first k
    // as they are, without building and sorting a keyed copy.
    const d = res.distances;
    const n = Math.min(d.length, k + 1);
    let i = 1;
    while (i < n && d[i - 1]! < d[i]!) i++;
    if (i >= n) {
      // Usually one past k (the tie check's): pop, not a length set (a call into the runtime).
      if (d.length === k + 1) {
        res.slots.pop();
        d.pop();
      } else if (d.length > k) {
        res.slots.length = k;
        d.length = k;
      }
      return res;
    }
    const order = res.slots.map((slot, i) => ({ slot, distance: res.distances[i]!, key: this.#tieKey(slot) }));
    order.sort((a, b) => a.distance - b.distance || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const top = order.slice(0, k);
    return { slots: top.map((o) => o.slot), distances: top.map((o) => o.distance), mode: res.mode };
  }

  /**
   * Exactly how many live records pass a filter.
   * @param params `{ where?, filter? }`
   * @returns the count
   * @throws InvalidFilterError
   */
  count(params: FilterParams = {}): number {
    const cond = this.#compile(params);
    if (cond === undefined || cond.t === 'all') return this.#t.live;
    if (cond.t !== 'and' && cond.t !== 'or') return leafCount(cond, this.#t.columns.index(cond.field));
    const predicate = buildPredicate(cond, this.#t.columns);
    if (estimate(cond, this.#ctx) <= this.#t.live / 2) return allowedCount(cond, this.#ctx, predicate);
    let n = 0;
    for (let s = 0; s < this.#t.slotCount; s++) if (this.#t.records[s] !== undefined && predicate(s)) n++;
    return n;
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
    const cond = this.#compile(params);
    const predicate = cond === undefined ? undefined : buildPredicate(cond, this.#t.columns);
    const recs = this.#t.records;
    return predicate === undefined ? (s) => recs[s] !== undefined : (s) => recs[s] !== undefined && predicate(s);
  }

  /**
   * BM25 keyword search over documents.
   * @param params `{ text, k, where?, filter? }`
   * @returns results best first with their BM25 score
   * @throws InvalidFilterError
   */
  keywordSearch(params: KeywordSearchParams): { results: KeywordHit[] } {
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
  hybridSearch(params: HybridSearchParams): { results: HybridHit[]; search_mode: SearchMode } {
    const k = this.#hybridK(params);
    if (!(k >= 1)) return { results: [], search_mode: 'exact' };
    return this.#fused(params, k, this.#searchSlots(this.#hybridPool(params, k)));
  }

  /**
   * `hybridSearch` with its vector part's graph calls on threads, as searchPinned (the keyword part runs
   * on the main thread once they answered); undefined when the store changed meanwhile: ask again.
   * @throws what `hybridSearch` throws, before anything runs
   */
  async hybridSearchPinned(
    params: HybridSearchParams,
  ): Promise<{ results: HybridHit[]; search_mode: SearchMode } | undefined> {
    const k = this.#hybridK(params);
    if (!(k >= 1)) return { results: [], search_mode: 'exact' };
    const vec = await this.#slotsPinned(this.#hybridPool(params, k));
    return vec === undefined ? undefined : this.#fused(params, k, vec);
  }

  #hybridK(params: HybridSearchParams): number {
    if (params.vector.length !== this.#def.dim)
      throw new DimensionMismatchError({ expected: this.#def.dim, got: params.vector.length });
    return Math.floor(params.k);
  }

  /** The vector side's search: the candidate pool, with the same filter. */
  #hybridPool(params: HybridSearchParams, k: number): SearchParams {
    return { vector: params.vector, k: hybridPool(k), where: params.where, filter: params.filter };
  }

  /** The vector side's answer and the keyword side's, fused by reciprocal rank. */
  #fused(params: HybridSearchParams, k: number, vec: PlannedResult): { results: HybridHit[]; search_mode: SearchMode } {
    const kw = this.#keywordSlots({ text: params.text, k: hybridPool(k), where: params.where, filter: params.filter });
    const distance = new Map<number, number>();
    for (let i = 0; i < vec.slots.length; i++) distance.set(vec.slots[i]!, vec.distances[i]!);
    const fused = rrf([vec.slots, kw.slots])
      .map((f) => ({ ...f, key: this.#tieKey(f.slot) }))
      .sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, k);
    const q = this.#queryVector(params.vector);
    const results = fused.map(({ slot, score }) => ({
      record: this.#t.records[slot]! as RecordSummary,
      score,
      distance: distance.get(slot) ?? this.#t.ops.distance(q, this.#t.view(slot)),
    }));
    return { results, search_mode: vec.mode };
  }

  // ---- snapshots ----

  /**
   * Writes the store to `dir` (created if missing): graph (hnswlib writeIndex), records, halfvec
   * bytes, keyword index, manifest last.
   * @param dir target directory
   */
  save(dir: string): Promise<void> {
    const run = this.#queue.then(() => {
      // The graph file would carry the staged labels as live elements.
      if (this.#staged !== undefined)
        throw new Error(`collection ${this.name}: cannot save while a block is staged (commit it first)`);
      return writeStoreSnapshot(dir, this.#t, this.name, this.#def);
    });
    this.#queue = run.catch(() => undefined);
    return run;
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
