// One collection in memory (DESIGN.md §5): live records, an HNSW graph over their float32 vectors,
// per-attribute indexes, a keyword index over documents, and the planner on top. The chain indexer
// calls `apply` once per block; the service calls the read methods (search, count, get, records,
// keywordSearch, hybridSearch); snapshots go through save/load.
//
// Identifiers: a record lives in a *slot* (dense, reused; attribute postings, filter candidates, the
// vector slab and the exact scan use slots); the graph knows it by a *label* (fresh per insert,
// because hnswlib reuses the memory of deleted elements only for new labels). `labelSlot` maps back
// and is −1 for labels readers must not see — deleted ones, and those inserted by a block not yet
// committed.
//
// Vectors live once, in the slab (vectorSlab.ts); a slot keeps the rest of its record. Records read
// out (get, records, search hits) are fresh objects carrying their own copy of the vector (halfvec
// bytes derived from it on demand), so a caller never holds memory the store reuses.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type AttributeValue,
  checkDefinitionUpdate,
  type CollectionDefinition,
  DimensionMismatchError,
  ENTITY_KEY_FORM_REGEX,
  InvalidArgumentError,
  type VectorRecord,
} from '../collections/index.ts';
import { AttributeIndex } from './filter/attributeIndex.ts';
import { QUERY_VALUE_MAX } from './limits.ts';
import { compileFilter } from './filter/compile.ts';
import { allowedSlots, estimate, leafCount } from './filter/plan.ts';
import { buildPredicate, type Column, type RowSource } from './filter/predicate.ts';
import type { Cond, Field, Key } from './filter/types.ts';
import { HnswGraph } from './hnsw/graph.ts';
import { effectiveEf, REBUILD_DELETED_MIN, REBUILD_DELETED_RATIO } from './hnsw/params.ts';
import { KeywordIndex, rrf } from './keyword.ts';
import { type MetricOps, metricOps } from './metrics.ts';
import { plannedSearch, type PlannedResult, type PlannerContext, type SearchMode } from './planner.ts';
import { halfvecOf, VectorSlab } from './vectorSlab.ts';

export type { SearchMode };

export type SearchParams = {
  vector: ArrayLike<number>;
  k: number;
  where?: string;
  filter?: unknown;
  efSearch?: number;
};
export type SearchHit = { record: VectorRecord; distance: number; score: number };
export type SearchAnswer = { results: SearchHit[]; search_mode: SearchMode };
export type FilterParams = { where?: string; filter?: unknown };
export type KeywordSearchParams = { text: string; k: number; where?: string; filter?: unknown };
export type KeywordHit = { record: VectorRecord; score: number };
export type HybridSearchParams = {
  vector: ArrayLike<number>;
  text: string;
  k: number;
  where?: string;
  filter?: unknown;
};
export type HybridHit = { record: VectorRecord; score: number; distance?: number };
export type BlockChanges = { remove: readonly string[]; upsert: readonly VectorRecord[] };

/** What a slot keeps of a record: everything but the vector, which lives in the slab. */
type StoredRecord = Omit<VectorRecord, 'vector' | 'halfvec'>;

/**
 * A record read out of the store: it owns a copy of its vector (the slab slot may be reused later);
 * the halfvec bytes are derived from that copy on first read, since few readers ask and encoding
 * costs about twice the copy.
 */
class RecordView implements VectorRecord {
  key: string;
  owner: string;
  creator: string | undefined;
  collection: string;
  id: string;
  expiresAt: bigint;
  dim: number;
  vector: Float32Array;
  document: string;
  attributes: Record<string, AttributeValue>;
  #halfvec: Uint8Array | undefined;

  constructor(r: StoredRecord, vector: Float32Array) {
    this.key = r.key;
    this.owner = r.owner;
    this.creator = r.creator;
    this.collection = r.collection;
    this.id = r.id;
    this.expiresAt = r.expiresAt;
    this.dim = r.dim;
    this.vector = vector;
    this.document = r.document;
    this.attributes = r.attributes;
  }

  get halfvec(): Uint8Array {
    return (this.#halfvec ??= halfvecOf(this.vector));
  }

  set halfvec(bytes: Uint8Array) {
    this.#halfvec = bytes;
  }
}

/** A block staged by `prepare`: inserted into the graph under invisible labels, not yet committed. */
type Stage = { commit(): void; rollback(): void };

/** Work between two yields to the event loop while applying a block or rebuilding. */
const SLICE_MS = 8;
/** Compiled `where` strings kept per store (cleared when the definition changes). */
const FILTER_CACHE_SIZE = 256;
/** Hybrid search ranks this many candidates per list: clamp(3k, 30, 150). */
const HYBRID_POOL_MIN = 30;
const HYBRID_POOL_MAX = 150;
/** Compact labels (full rebuild) once this many times more labels were issued than records live. */
const LABEL_COMPACT_RATIO = 4;
const LABEL_COMPACT_MIN = 1 << 16;

const SNAPSHOT_FORMAT = 1;
const META_NAMES = ['$key', '$owner', '$creator'] as const;

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function lower(s: string | undefined): string | undefined {
  return s === undefined ? undefined : s.toLowerCase();
}

function attrKey(v: AttributeValue): Key {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}

function growInt32(a: Int32Array, min: number, fill: number): Int32Array {
  if (a.length >= min) return a;
  const b = new Int32Array(Math.max(min, a.length * 2, 64)).fill(fill);
  b.set(a);
  return b;
}

function stored(rec: VectorRecord): StoredRecord {
  // A fresh object with these fields only: keeping the caller's record would pin its vector arrays.
  return {
    key: rec.key,
    owner: rec.owner,
    creator: rec.creator,
    collection: rec.collection,
    id: rec.id,
    expiresAt: rec.expiresAt,
    dim: rec.dim,
    document: rec.document,
    attributes: rec.attributes,
  };
}

export class CollectionStore {
  readonly name: string;
  private def: CollectionDefinition;
  private readonly ops: MetricOps;
  private graph: HnswGraph;

  // Per slot.
  private slotRecord: (StoredRecord | undefined)[] = [];
  private readonly vectors: VectorSlab;
  private slotLabel: Int32Array = new Int32Array(64).fill(-1);
  /** Attribute values by slot, declared and meta, for the filter predicates. */
  private columns = new Map<string, Column>();
  private freeSlots: number[] = [];
  private slotCount = 0;
  private live = 0;

  // Per label.
  private labelSlot: Int32Array = new Int32Array(64).fill(-1);
  private nextLabel = 0;
  private pending = false;

  private readonly byId = new Map<string, number>();
  private readonly byKey = new Map<string, number>();
  private attrIndexes = new Map<string, AttributeIndex>();
  private keyword = new KeywordIndex();
  private readonly filterCache = new Map<string, Cond | undefined>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly queryBuf: Float32Array;
  private readonly rows: RowSource;
  private readonly ctx: PlannerContext;

  /**
   * An empty store.
   * @param name the collection name
   * @param definition its parsed definition (dim, metric, attributes, index params)
   * @example new CollectionStore('notes', definition)
   */
  constructor(name: string, definition: CollectionDefinition) {
    this.name = name;
    this.def = definition;
    this.ops = metricOps(definition.metric);
    this.graph = HnswGraph.create(this.ops, definition.dim, {
      m: definition.index.m,
      efConstruction: definition.index.ef_construction,
    });
    this.queryBuf = new Float32Array(definition.dim);
    this.vectors = new VectorSlab(definition.dim);
    this.resetAttributeIndexes();

    const store = this;
    this.rows = {
      column(field: Field): Column {
        let col = store.columns.get(field.name);
        if (col === undefined) {
          col = store.newColumn(field.type === 'str' ? 'str' : 'num');
          store.columns.set(field.name, col);
        }
        return col;
      },
    };
    // One context object, read live through getters, so the planner always sees the current graph.
    this.ctx = {
      ops: this.ops,
      get graph() {
        return store.graph;
      },
      exact: {
        get chunks() {
          return store.vectors.chunks;
        },
        get live() {
          return store.vectors.live;
        },
        get invNorms() {
          return store.vectors.invNorms;
        },
        get slotCount() {
          return store.slotCount;
        },
      },
      get labelSlot() {
        return store.labelSlot;
      },
      get pending() {
        return store.pending;
      },
      rows: this.rows,
      get liveCount() {
        return store.live;
      },
      index: (field: Field) => store.indexOf(field),
      forEachLive: (fn: (slot: number) => void) => {
        for (let s = 0; s < store.slotCount; s++) if (store.slotRecord[s] !== undefined) fn(s);
      },
    };
  }

  get definition(): CollectionDefinition {
    return this.def;
  }

  /** Live records. */
  get size(): number {
    return this.live;
  }

  /**
   * Takes an allowed definition update (ef_search, added attributes, description…).
   * @param definition the new definition
   * @throws InvalidArgumentError when it changes dim, metric, attribute types or build parameters
   */
  updateDefinition(definition: CollectionDefinition): void {
    const violations = checkDefinitionUpdate(this.def, definition);
    if (violations.length > 0) {
      throw new InvalidArgumentError(
        `definition update for ${this.name} is not allowed: ${violations.map((v) => v.message).join('; ')}`,
        violations.map((v) => ({ path: v.field, message: v.message })),
      );
    }
    this.def = definition;
    this.filterCache.clear();
    this.resetAttributeIndexes();
  }

  private newColumn(kind: 'str' | 'num'): Column {
    return kind === 'str' ? { kind, data: [] } : { kind, data: new Float64Array(this.vectors.capacity).fill(NaN) };
  }

  private resetAttributeIndexes(): void {
    const indexes = new Map<string, AttributeIndex>();
    const columns = new Map<string, Column>();
    for (const [name, type] of Object.entries(this.def.attributes)) {
      indexes.set(name, new AttributeIndex());
      columns.set(name, this.newColumn(type === 'str' ? 'str' : 'num'));
    }
    for (const name of META_NAMES) {
      indexes.set(name, new AttributeIndex());
      columns.set(name, this.newColumn('str'));
    }
    this.attrIndexes = indexes;
    this.columns = columns;
    for (let s = 0; s < this.slotCount; s++) {
      const rec = this.slotRecord[s];
      if (rec === undefined) continue;
      this.setColumns(s, rec);
      this.indexAttributes(s, true);
    }
  }

  /** Writes a record's values into the columns (undefined clears the slot). */
  private setColumns(slot: number, rec: StoredRecord | undefined): void {
    for (const [name, col] of this.columns) {
      let v: Key | undefined;
      if (rec !== undefined) {
        if (name === '$key') v = rec.key.toLowerCase();
        else if (name === '$owner') v = rec.owner.toLowerCase();
        else if (name === '$creator') v = lower(rec.creator);
        else {
          const a = rec.attributes[name];
          v = a === undefined ? undefined : attrKey(a);
        }
      }
      if (col.kind === 'num') col.data[slot] = typeof v === 'number' ? v : NaN;
      else col.data[slot] = typeof v === 'string' ? v : undefined;
    }
  }

  private indexOf(field: Field): AttributeIndex {
    let idx = this.attrIndexes.get(field.name);
    if (idx === undefined) {
      idx = new AttributeIndex();
      this.attrIndexes.set(field.name, idx);
    }
    return idx;
  }

  private indexAttributes(slot: number, add: boolean): void {
    for (const [name, idx] of this.attrIndexes) {
      const col = this.columns.get(name);
      if (col === undefined) continue;
      const key: Key | undefined = col.kind === 'num' ? col.data[slot] : col.data[slot];
      if (key === undefined || Number.isNaN(key)) continue;
      if (add) idx.add(key, slot);
      else idx.remove(key, slot);
    }
  }

  // ---- writes ----

  /**
   * Applies one block's changes atomically for readers: removals are entity keys; upserts replace any
   * record with the same id or key. Graph inserts run in slices that yield to the event loop; new
   * records become visible together at the final synchronous commit. Same as `prepare` followed at once
   * by its commit (and any rebuild that commit triggers).
   * @param changes `{ remove, upsert }`
   * @throws DimensionMismatchError for a record of the wrong dim (nothing is applied)
   * @example await store.apply({ remove: [], upsert: [record] })
   */
  async apply(changes: BlockChanges): Promise<void> {
    const commit = await this.prepare(changes);
    commit();
    await this.queue;
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
    const run = this.queue.then(() => {
      this.staged?.rollback();
      return this.stage(changes);
    });
    this.queue = run.catch(() => undefined);
    return run.then((stage) => () => stage.commit());
  }

  private staged: Stage | undefined;

  private async stage({ remove, upsert }: BlockChanges): Promise<Stage> {
    const dim = this.def.dim;
    // Last upsert of an id or key in the block wins.
    const byId = new Map<string, VectorRecord>();
    const idOfKey = new Map<string, string>();
    for (const rec of upsert) {
      if (rec.vector.length !== dim) throw new DimensionMismatchError({ expected: dim, got: rec.vector.length });
      const key = rec.key.toLowerCase();
      const prevId = idOfKey.get(key);
      if (prevId !== undefined && prevId !== rec.id) byId.delete(prevId);
      byId.delete(rec.id);
      byId.set(rec.id, rec);
      idOfKey.set(key, rec.id);
    }
    const incoming = [...byId.values()];

    const removeSlots = new Set<number>();
    for (const key of remove) {
      const s = this.byKey.get(key.toLowerCase());
      if (s !== undefined) removeSlots.add(s);
    }
    for (const rec of incoming) {
      const a = this.byId.get(rec.id);
      if (a !== undefined) removeSlots.add(a);
      const b = this.byKey.get(rec.key.toLowerCase());
      if (b !== undefined) removeSlots.add(b);
    }
    if (incoming.length === 0 && removeSlots.size === 0) return { commit: () => undefined, rollback: () => undefined };

    // Reserve slots (never ones freed by this block: their old record stays visible until commit).
    const slots: number[] = new Array(incoming.length);
    for (let i = 0; i < incoming.length; i++)
      slots[i] = this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.slotCount++;
    const labels: number[] = [];
    this.pending = true;
    try {
      this.graph.reserve(incoming.length);
      this.labelSlot = growInt32(this.labelSlot, this.nextLabel + incoming.length, -1);
      // Reserved slots are not live, so scans skip them until the commit marks them.
      this.ensureSlotCapacity(this.slotCount);
      let t0 = performance.now();
      for (let i = 0; i < incoming.length; i++) {
        const label = this.nextLabel++;
        this.vectors.write(slots[i]!, incoming[i]!.vector);
        this.graph.add(this.vectors.view(slots[i]!), label);
        labels.push(label);
        if ((i & 15) === 15 && performance.now() - t0 > SLICE_MS) {
          await yieldToLoop();
          t0 = performance.now();
        }
      }
    } catch (err) {
      this.unstage(labels, slots);
      throw err;
    }

    const graph = this.graph;
    let done: 'committed' | 'rolled back' | undefined;
    const stage: Stage = {
      // Synchronous, so no reader sees part of the block.
      commit: () => {
        if (done === 'committed') return;
        if (done === 'rolled back')
          throw new Error(`collection ${this.name}: a block was committed after a newer prepare rolled it back`);
        done = 'committed';
        this.staged = undefined;
        for (const s of removeSlots) this.removeSlot(s);
        this.ensureSlotCapacity(this.slotCount);
        for (let i = 0; i < incoming.length; i++) {
          this.placeSlot(slots[i]!, stored(incoming[i]!), labels[i]!);
          // Here, not in prepare: staged documents would change BM25 statistics for readers mid-block.
          this.keyword.add(slots[i]!, incoming[i]!.document);
        }
        this.pending = false;
        if (this.needsRebuild()) {
          const run = this.queue.then(() => this.rebuild());
          this.queue = run.catch(() => undefined);
        }
      },
      rollback: () => {
        if (done !== undefined) return;
        done = 'rolled back';
        this.staged = undefined;
        // A rebuild never runs while a stage is open, so the labels still belong to this graph.
        if (this.graph === graph) this.unstage(labels, slots);
      },
    };
    this.staged = stage;
    return stage;
  }

  private unstage(labels: number[], slots: number[]): void {
    for (const label of labels) this.graph.remove(label);
    this.freeSlots.push(...slots);
    this.pending = false;
  }

  private ensureSlotCapacity(n: number): void {
    this.vectors.grow(n);
    const cap = this.vectors.capacity;
    this.slotLabel = growInt32(this.slotLabel, cap, -1);
    for (const col of this.columns.values()) {
      if (col.kind === 'num' && col.data.length < cap) {
        // The slab grows a chunk at a time; columns double, so they are not copied at every chunk.
        const data = new Float64Array(Math.max(cap, col.data.length * 2)).fill(NaN);
        data.set(col.data);
        col.data = data;
      }
    }
  }

  private removeSlot(slot: number): void {
    const rec = this.slotRecord[slot];
    if (rec === undefined) return;
    this.indexAttributes(slot, false);
    const label = this.slotLabel[slot]!;
    this.graph.remove(label);
    this.labelSlot[label] = -1;
    this.slotLabel[slot] = -1;
    this.keyword.remove(slot, rec.document);
    if (this.byId.get(rec.id) === slot) this.byId.delete(rec.id);
    const key = rec.key.toLowerCase();
    if (this.byKey.get(key) === slot) this.byKey.delete(key);
    this.setColumns(slot, undefined);
    this.slotRecord[slot] = undefined;
    this.vectors.live[slot] = 0;
    this.freeSlots.push(slot);
    this.live--;
  }

  /** Makes a slot live; its vector is already in the slab. */
  private placeSlot(slot: number, rec: StoredRecord, label: number): void {
    this.slotRecord[slot] = rec;
    this.vectors.live[slot] = 1;
    this.slotLabel[slot] = label;
    this.labelSlot[label] = slot;
    this.setColumns(slot, rec);
    this.indexAttributes(slot, true);
    this.byId.set(rec.id, slot);
    this.byKey.set(rec.key.toLowerCase(), slot);
    this.live++;
  }

  private needsRebuild(): boolean {
    if (this.graph.deleted > Math.max(REBUILD_DELETED_MIN, this.live * REBUILD_DELETED_RATIO)) return true;
    return this.nextLabel > Math.max(LABEL_COMPACT_MIN, this.live * LABEL_COMPACT_RATIO);
  }

  /**
   * Rebuilds the graph from the live records with compact labels, in slices; readers keep using the
   * old graph until the synchronous swap. Runs inside apply, so no write interleaves.
   */
  private async rebuild(): Promise<void> {
    const graph = HnswGraph.create(
      this.ops,
      this.def.dim,
      { m: this.def.index.m, efConstruction: this.def.index.ef_construction },
      Math.ceil(this.live * 1.25) + 16,
    );
    const labelSlot = new Int32Array(Math.max(64, Math.ceil(this.live * 1.25))).fill(-1);
    const slotLabel = new Int32Array(this.slotLabel.length).fill(-1);
    let label = 0;
    let t0 = performance.now();
    for (let s = 0; s < this.slotCount; s++) {
      if (this.slotRecord[s] === undefined) continue;
      graph.add(this.vectors.view(s), label);
      labelSlot[label] = s;
      slotLabel[s] = label;
      label++;
      if ((label & 15) === 15 && performance.now() - t0 > SLICE_MS) {
        await yieldToLoop();
        t0 = performance.now();
      }
    }
    this.graph = graph;
    this.labelSlot = labelSlot;
    this.slotLabel = slotLabel;
    this.nextLabel = label;
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
    const s = ENTITY_KEY_FORM_REGEX.test(ref) ? this.byKey.get(ref.toLowerCase()) : this.byId.get(ref);
    return s === undefined ? undefined : this.recordAt(s);
  }

  /** Live records in slot order. */
  *records(): IterableIterator<VectorRecord> {
    for (let s = 0; s < this.slotCount; s++) if (this.slotRecord[s] !== undefined) yield this.recordAt(s);
  }

  /** A live slot's record with its vector copied out of the slab (a fresh object each call). */
  private recordAt(slot: number): VectorRecord {
    return new RecordView(this.slotRecord[slot]!, this.vectors.copy(slot));
  }

  private compile(params: FilterParams): Cond | undefined {
    if (params.filter === undefined || params.filter === null) {
      if (params.where === undefined) return undefined;
      const hit = this.filterCache.get(params.where);
      if (hit !== undefined || this.filterCache.has(params.where)) return hit;
      const cond = compileFilter(params, this.def);
      if (this.filterCache.size >= FILTER_CACHE_SIZE) this.filterCache.delete(this.filterCache.keys().next().value!);
      this.filterCache.set(params.where, cond);
      return cond;
    }
    return compileFilter(params, this.def);
  }

  private queryVector(vector: ArrayLike<number>): Float32Array {
    if (vector.length !== this.def.dim)
      throw new DimensionMismatchError({ expected: this.def.dim, got: vector.length });
    const q = this.queryBuf;
    for (let i = 0; i < q.length; i++) {
      const x = vector[i]!;
      // NaN fails both comparisons; out-of-range values would overflow float32 distances into NaN.
      if (!(x >= -QUERY_VALUE_MAX && x <= QUERY_VALUE_MAX))
        throw new InvalidArgumentError(
          `vector[${i}]: ${x} is not a finite number within ±${QUERY_VALUE_MAX.toExponential()}`,
        );
      q[i] = x;
    }
    return q;
  }

  /**
   * k nearest records, optionally filtered; never fewer than min(k, passing records).
   * @param params `{ vector, k, where?, filter?, efSearch? }` (k is validated by the caller, 1–50)
   * @returns results nearest first with pgvector distance and score, and `search_mode`
   * @throws DimensionMismatchError, InvalidFilterError
   * @example store.search({ vector: [1, 0, 0, 0], k: 2, where: "topic = str('pets')" })
   */
  search(params: SearchParams): SearchAnswer {
    const res = this.searchSlots(params);
    const score = this.ops.score;
    const results: SearchHit[] = new Array(res.slots.length);
    for (let i = 0; i < res.slots.length; i++) {
      const d = res.distances[i]!;
      results[i] = { record: this.recordAt(res.slots[i]!), distance: d, score: score(d) };
    }
    return { results, search_mode: res.mode };
  }

  /** Entity key of a live slot: the order of equal scores, the same on every node. */
  private readonly tieKey = (slot: number): string => this.slotRecord[slot]!.key;

  private searchSlots(params: SearchParams): PlannedResult {
    const q = this.queryVector(params.vector);
    const cond = this.compile(params);
    // k is validated by the caller (1–50); anything else must still not allocate k-sized buffers.
    const k = Math.min(Math.floor(params.k), this.live);
    if (!(k >= 1)) return { slots: [], distances: [], mode: 'exact' };
    // Equal distances are ordered by entity key, not by slot (which depends on each node's history).
    // One more than k shows whether a tie runs past the k-th place; while it might, fetch twice as many
    // (bounded by the live count: duplicates of one vector can tie across the whole collection).
    for (let fetch = Math.min(k + 1, this.live); ; fetch = Math.min(fetch * 2, this.live)) {
      const res = plannedSearch(this.ctx, q, fetch, effectiveEf(this.def, fetch, params.efSearch), cond);
      const n = res.slots.length;
      const boundary = res.distances[k - 1];
      if (n < fetch || fetch >= this.live || n <= k || res.distances[n - 1] !== boundary)
        return this.byDistanceThenKey(res, k);
    }
  }

  private byDistanceThenKey(res: PlannedResult, k: number): PlannedResult {
    const order = res.slots.map((slot, i) => ({ slot, distance: res.distances[i]!, key: this.tieKey(slot) }));
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
    const cond = this.compile(params);
    if (cond === undefined || cond.t === 'all') return this.live;
    if (cond.t !== 'and' && cond.t !== 'or') return leafCount(cond, this.indexOf(cond.field));
    const predicate = buildPredicate(cond, this.rows);
    if (estimate(cond, this.ctx) <= this.live / 2) return allowedSlots(cond, this.ctx, predicate).length;
    let n = 0;
    for (let s = 0; s < this.slotCount; s++) if (this.slotRecord[s] !== undefined && predicate(s)) n++;
    return n;
  }

  private acceptor(params: FilterParams): (slot: number) => boolean {
    const cond = this.compile(params);
    const predicate = cond === undefined ? undefined : buildPredicate(cond, this.rows);
    const recs = this.slotRecord;
    return predicate === undefined ? (s) => recs[s] !== undefined : (s) => recs[s] !== undefined && predicate(s);
  }

  /**
   * BM25 keyword search over documents.
   * @param params `{ text, k, where?, filter? }`
   * @returns results best first with their BM25 score
   * @throws InvalidFilterError
   */
  keywordSearch(params: KeywordSearchParams): { results: KeywordHit[] } {
    const hits = this.keywordSlots(params);
    return { results: hits.slots.map((s, i) => ({ record: this.recordAt(s), score: hits.scores[i]! })) };
  }

  private keywordSlots(params: KeywordSearchParams): { slots: number[]; scores: number[] } {
    const accept = this.acceptor(params);
    const k = Math.floor(params.k);
    if (!(k >= 1)) return { slots: [], scores: [] };
    return this.keyword.search(params.text, k, accept, this.tieKey);
  }

  /**
   * Vector + keyword search fused by reciprocal rank (k = 60); `distance` is the vector distance.
   * @param params `{ vector, text, k, where?, filter? }`
   * @returns fused results, best first, and the vector side's `search_mode`
   * @throws DimensionMismatchError, InvalidFilterError
   */
  hybridSearch(params: HybridSearchParams): { results: HybridHit[]; search_mode: SearchMode } {
    const k = Math.floor(params.k);
    if (params.vector.length !== this.def.dim)
      throw new DimensionMismatchError({ expected: this.def.dim, got: params.vector.length });
    if (!(k >= 1)) return { results: [], search_mode: 'exact' };
    const pool = Math.min(HYBRID_POOL_MAX, Math.max(HYBRID_POOL_MIN, k * 3));
    const filter = { where: params.where, filter: params.filter };
    const vec = this.searchSlots({ vector: params.vector, k: pool, ...filter });
    const kw = this.keywordSlots({ text: params.text, k: pool, ...filter });
    const distance = new Map<number, number>();
    for (let i = 0; i < vec.slots.length; i++) distance.set(vec.slots[i]!, vec.distances[i]!);
    const fused = rrf([vec.slots, kw.slots])
      .map((f) => ({ ...f, key: this.tieKey(f.slot) }))
      .sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, k);
    const q = this.queryVector(params.vector);
    const results = fused.map(({ slot, score }) => ({
      record: this.recordAt(slot),
      score,
      distance: distance.get(slot) ?? this.ops.distance(q, this.vectors.view(slot)),
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
    const run = this.queue.then(() => this.saveNow(dir));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async saveNow(dir: string): Promise<void> {
    // The graph file would carry the staged labels as live elements.
    if (this.staged !== undefined)
      throw new Error(`collection ${this.name}: cannot save while a block is staged (commit it first)`);
    await mkdir(dir, { recursive: true });
    const dim = this.def.dim;
    await this.graph.write(join(dir, 'hnsw.bin'));
    const lines: string[] = [];
    const halves = new Uint8Array(this.live * dim * 2);
    let o = 0;
    for (let s = 0; s < this.slotCount; s++) {
      const rec = this.slotRecord[s];
      if (rec === undefined) continue;
      const attributes: Record<string, AttributeValue | string> = {};
      for (const [name, v] of Object.entries(rec.attributes)) {
        // JSON has no ±Infinity, which f32 attributes may hold.
        attributes[name] = typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
      }
      lines.push(
        JSON.stringify({
          slot: s,
          label: this.slotLabel[s],
          key: rec.key,
          owner: rec.owner,
          creator: rec.creator ?? null,
          id: rec.id,
          expiresAt: rec.expiresAt.toString(),
          document: rec.document,
          attributes,
        }),
      );
      this.vectors.writeHalfvec(s, halves, o);
      o += dim * 2;
    }
    await writeFile(join(dir, 'records.jsonl'), lines.join('\n'));
    await writeFile(join(dir, 'halfvec.bin'), halves);
    await writeFile(join(dir, 'keyword.json'), JSON.stringify(this.keyword.toJSON()));
    const manifest = {
      format: SNAPSHOT_FORMAT,
      name: this.name,
      dim,
      metric: this.def.metric,
      live: this.live,
      slotCount: this.slotCount,
      nextLabel: this.nextLabel,
      deleted: this.graph.deleted,
    };
    await writeFile(join(dir, 'store.json'), JSON.stringify(manifest));
  }

  /**
   * Restores a store written by `save`.
   * @param dir the snapshot directory
   * @param name the collection name
   * @param definition its current definition (dim and metric must match the snapshot's)
   * @returns the store
   * @throws InvalidArgumentError when the snapshot does not fit the definition
   */
  static async load(dir: string, name: string, definition: CollectionDefinition): Promise<CollectionStore> {
    const manifest = JSON.parse(await readFile(join(dir, 'store.json'), 'utf8')) as {
      format: number;
      dim: number;
      metric: string;
      live: number;
      slotCount: number;
      nextLabel: number;
      deleted: number;
    };
    if (manifest.format !== SNAPSHOT_FORMAT)
      throw new InvalidArgumentError(`snapshot format ${manifest.format} is not supported`);
    if (manifest.dim !== definition.dim || manifest.metric !== definition.metric) {
      throw new InvalidArgumentError(
        `snapshot is ${manifest.metric} halfvec(${manifest.dim}), definition is ${definition.metric} halfvec(${definition.dim})`,
      );
    }
    const store = new CollectionStore(name, definition);
    const dim = definition.dim;
    store.graph = await HnswGraph.read(
      store.ops,
      dim,
      { m: definition.index.m, efConstruction: definition.index.ef_construction },
      join(dir, 'hnsw.bin'),
    );
    store.graph.deleted = manifest.deleted;
    const text = await readFile(join(dir, 'records.jsonl'), 'utf8');
    const halves = new Uint8Array(await readFile(join(dir, 'halfvec.bin')));
    store.slotCount = manifest.slotCount;
    store.nextLabel = manifest.nextLabel;
    store.ensureSlotCapacity(manifest.slotCount);
    store.labelSlot = growInt32(store.labelSlot, manifest.nextLabel, -1);
    const occupied = new Uint8Array(manifest.slotCount);
    let o = 0;
    for (const line of text.length === 0 ? [] : text.split('\n')) {
      const r = JSON.parse(line) as {
        slot: number;
        label: number;
        key: string;
        owner: string;
        creator: string | null;
        id: string;
        expiresAt: string;
        document: string;
        attributes: Record<string, AttributeValue>;
      };
      store.vectors.writeHalf(r.slot, halves, o);
      o += dim * 2;
      const attributes: Record<string, AttributeValue> = Object.create(null);
      for (const [k, v] of Object.entries(r.attributes))
        attributes[k] = definition.attributes[k] === 'f32' && typeof v === 'string' ? Number(v) : v;
      const rec: StoredRecord = {
        key: r.key,
        owner: r.owner,
        creator: r.creator ?? undefined,
        collection: name,
        id: r.id,
        expiresAt: BigInt(r.expiresAt),
        dim,
        document: r.document,
        attributes,
      };
      store.placeSlot(r.slot, rec, r.label);
      occupied[r.slot] = 1;
    }
    for (let s = 0; s < manifest.slotCount; s++) if (occupied[s] === 0) store.freeSlots.push(s);
    store.keyword = KeywordIndex.fromJSON(await readFile(join(dir, 'keyword.json'), 'utf8'));
    if (store.keyword.dirty) {
      // Older snapshots discarded documents lazily; rebuild so scores depend on the documents only.
      store.keyword = new KeywordIndex();
      for (let s = 0; s < store.slotCount; s++) {
        const rec = store.slotRecord[s];
        if (rec !== undefined) store.keyword.add(s, rec.document);
      }
    }
    return store;
  }
}
