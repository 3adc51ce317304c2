// One collection in memory (DESIGN.md §5): live records, an HNSW graph over their float32 vectors,
// per-attribute indexes, a keyword index over documents, and the planner on top. The chain indexer
// calls `apply` once per block; the service calls the read methods (search, count, get, records,
// keywordSearch, hybridSearch); snapshots go through save/load.
//
// Identifiers: a record lives in a *slot* (dense, reused; attribute postings, filter candidates and
// the exact scan use slots); the graph knows it by a *label* (fresh per insert, because hnswlib
// reuses the memory of deleted elements only for new labels). `labelSlot` maps back and is −1 for
// labels readers must not see — deleted ones, and those inserted by a block not yet committed.

import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  type AttributeValue,
  checkDefinitionUpdate,
  type CollectionDefinition,
  DimensionMismatchError,
  HALF_TO_FLOAT32,
  InvalidArgumentError,
  type VectorRecord,
} from '../collections/index.ts'
import { AttributeIndex } from './filter/attributeIndex.ts'
import { compileFilter } from './filter/compile.ts'
import { allowedSlots, estimate, leafCount } from './filter/plan.ts'
import { buildPredicate, type Column, type RowSource } from './filter/predicate.ts'
import type { Cond, Field, Key } from './filter/types.ts'
import { inverseNorm } from './exact.ts'
import { HnswGraph } from './hnsw/graph.ts'
import { effectiveEf, REBUILD_DELETED_MIN, REBUILD_DELETED_RATIO } from './hnsw/params.ts'
import { KeywordIndex, rrf } from './keyword.ts'
import { type MetricOps, metricOps } from './metrics.ts'
import { plannedSearch, type PlannerContext, type SearchMode } from './planner.ts'

export type { SearchMode }

export type SearchParams = { vector: ArrayLike<number>; k: number; where?: string; filter?: unknown; efSearch?: number }
export type SearchHit = { record: VectorRecord; distance: number; score: number }
export type SearchAnswer = { results: SearchHit[]; search_mode: SearchMode }
export type FilterParams = { where?: string; filter?: unknown }
export type KeywordSearchParams = { text: string; k: number; where?: string; filter?: unknown }
export type KeywordHit = { record: VectorRecord; score: number }
export type HybridSearchParams = { vector: ArrayLike<number>; text: string; k: number; where?: string; filter?: unknown }
export type HybridHit = { record: VectorRecord; score: number; distance?: number }
export type BlockChanges = { remove: readonly string[]; upsert: readonly VectorRecord[] }

/** A block staged by `prepare`: inserted into the graph under invisible labels, not yet committed. */
type Stage = { commit(): void; rollback(): void }

/** Work between two yields to the event loop while applying a block or rebuilding. */
const SLICE_MS = 8
/** Compiled `where` strings kept per store (cleared when the definition changes). */
const FILTER_CACHE_SIZE = 256
/** Hybrid search ranks this many candidates per list: clamp(3k, 30, 150). */
const HYBRID_POOL_MIN = 30
const HYBRID_POOL_MAX = 150
/** Compact labels (full rebuild) once this many times more labels were issued than records live. */
const LABEL_COMPACT_RATIO = 4
const LABEL_COMPACT_MIN = 1 << 16

const SNAPSHOT_FORMAT = 1
const META_NAMES = ['$key', '$owner', '$creator'] as const

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

function lower(s: string | undefined): string | undefined {
  return s === undefined ? undefined : s.toLowerCase()
}

function attrKey(v: AttributeValue): Key {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v
}

function growInt32(a: Int32Array, min: number, fill: number): Int32Array {
  if (a.length >= min) return a
  const b = new Int32Array(Math.max(min, a.length * 2, 64)).fill(fill)
  b.set(a)
  return b
}

function growFloat32(a: Float32Array, min: number): Float32Array {
  if (a.length >= min) return a
  const b = new Float32Array(Math.max(min, a.length * 2, 64))
  b.set(a)
  return b
}

export class CollectionStore {
  readonly name: string
  private def: CollectionDefinition
  private readonly ops: MetricOps
  private graph: HnswGraph

  // Per slot.
  private slotRecord: (VectorRecord | undefined)[] = []
  private slotVector: (Float32Array | undefined)[] = []
  private invNorms: Float32Array = new Float32Array(64)
  private slotLabel: Int32Array = new Int32Array(64).fill(-1)
  /** Attribute values by slot, declared and meta, for the filter predicates. */
  private columns = new Map<string, Column>()
  private freeSlots: number[] = []
  private slotCount = 0
  private live = 0

  // Per label.
  private labelSlot: Int32Array = new Int32Array(64).fill(-1)
  private nextLabel = 0
  private pending = false

  private readonly byId = new Map<string, number>()
  private readonly byKey = new Map<string, number>()
  private attrIndexes = new Map<string, AttributeIndex>()
  private keyword = new KeywordIndex()
  private readonly filterCache = new Map<string, Cond | undefined>()
  private queue: Promise<unknown> = Promise.resolve()
  private readonly queryBuf: Float32Array
  private readonly rows: RowSource
  private readonly ctx: PlannerContext

  /**
   * An empty store.
   * @param name the collection name
   * @param definition its parsed definition (dim, metric, attributes, index params)
   * @example new CollectionStore('notes', definition)
   */
  constructor(name: string, definition: CollectionDefinition) {
    this.name = name
    this.def = definition
    this.ops = metricOps(definition.metric)
    this.graph = HnswGraph.create(this.ops, definition.dim, { m: definition.index.m, efConstruction: definition.index.ef_construction })
    this.queryBuf = new Float32Array(definition.dim)
    this.resetAttributeIndexes()

    const store = this
    this.rows = {
      column(field: Field): Column {
        let col = store.columns.get(field.name)
        if (col === undefined) {
          col = store.newColumn(field.type === 'str' ? 'str' : 'num')
          store.columns.set(field.name, col)
        }
        return col
      },
    }
    // One context object, read live through getters, so the planner always sees the current graph.
    this.ctx = {
      ops: this.ops,
      get graph() {
        return store.graph
      },
      exact: {
        get vectors() {
          return store.slotVector
        },
        get invNorms() {
          return store.invNorms
        },
        get slotCount() {
          return store.slotCount
        },
      },
      get labelSlot() {
        return store.labelSlot
      },
      get pending() {
        return store.pending
      },
      rows: this.rows,
      get liveCount() {
        return store.live
      },
      index: (field: Field) => store.indexOf(field),
      forEachLive: (fn: (slot: number) => void) => {
        for (let s = 0; s < store.slotCount; s++) if (store.slotRecord[s] !== undefined) fn(s)
      },
    }
  }

  get definition(): CollectionDefinition {
    return this.def
  }

  /** Live records. */
  get size(): number {
    return this.live
  }

  /**
   * Takes an allowed definition update (ef_search, added attributes, description…).
   * @param definition the new definition
   * @throws InvalidArgumentError when it changes dim, metric, attribute types or build parameters
   */
  updateDefinition(definition: CollectionDefinition): void {
    const violations = checkDefinitionUpdate(this.def, definition)
    if (violations.length > 0) {
      throw new InvalidArgumentError(
        `definition update for ${this.name} is not allowed: ${violations.map((v) => v.message).join('; ')}`,
        violations.map((v) => ({ path: v.field, message: v.message })),
      )
    }
    this.def = definition
    this.filterCache.clear()
    this.resetAttributeIndexes()
  }

  private newColumn(kind: 'str' | 'num'): Column {
    return kind === 'str' ? { kind, data: [] } : { kind, data: new Float64Array(this.invNorms.length).fill(NaN) }
  }

  private resetAttributeIndexes(): void {
    const indexes = new Map<string, AttributeIndex>()
    const columns = new Map<string, Column>()
    for (const [name, type] of Object.entries(this.def.attributes)) {
      indexes.set(name, new AttributeIndex())
      columns.set(name, this.newColumn(type === 'str' ? 'str' : 'num'))
    }
    for (const name of META_NAMES) {
      indexes.set(name, new AttributeIndex())
      columns.set(name, this.newColumn('str'))
    }
    this.attrIndexes = indexes
    this.columns = columns
    for (let s = 0; s < this.slotCount; s++) {
      const rec = this.slotRecord[s]
      if (rec === undefined) continue
      this.setColumns(s, rec)
      this.indexAttributes(s, true)
    }
  }

  /** Writes a record's values into the columns (undefined clears the slot). */
  private setColumns(slot: number, rec: VectorRecord | undefined): void {
    for (const [name, col] of this.columns) {
      let v: Key | undefined
      if (rec !== undefined) {
        if (name === '$key') v = rec.key.toLowerCase()
        else if (name === '$owner') v = rec.owner.toLowerCase()
        else if (name === '$creator') v = lower(rec.creator)
        else {
          const a = rec.attributes[name]
          v = a === undefined ? undefined : attrKey(a)
        }
      }
      if (col.kind === 'num') col.data[slot] = typeof v === 'number' ? v : NaN
      else col.data[slot] = typeof v === 'string' ? v : undefined
    }
  }

  private indexOf(field: Field): AttributeIndex {
    let idx = this.attrIndexes.get(field.name)
    if (idx === undefined) {
      idx = new AttributeIndex()
      this.attrIndexes.set(field.name, idx)
    }
    return idx
  }

  private indexAttributes(slot: number, add: boolean): void {
    for (const [name, idx] of this.attrIndexes) {
      const col = this.columns.get(name)
      if (col === undefined) continue
      const key: Key | undefined = col.kind === 'num' ? col.data[slot] : col.data[slot]
      if (key === undefined || key !== key) continue
      if (add) idx.add(key, slot)
      else idx.remove(key, slot)
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
    const commit = await this.prepare(changes)
    commit()
    await this.queue
  }

  /**
   * Stages one block's changes (the indexer's contract, indexer/storeContract.ts): does the expensive
   * work, yielding to the event loop, and resolves to a synchronous commit that makes the block
   * visible, so the indexer can commit several collections in one tick. Nothing is visible before
   * the commit. A stage not committed before the next `prepare` is rolled back.
   * @param changes `{ remove, upsert }`
   * @returns the commit function
   * @throws DimensionMismatchError for a record of the wrong dim (nothing is staged)
   */
  prepare(changes: BlockChanges): Promise<() => void> {
    const run = this.queue.then(() => {
      this.staged?.rollback()
      return this.stage(changes)
    })
    this.queue = run.catch(() => undefined)
    return run.then((stage) => () => stage.commit())
  }

  private staged: Stage | undefined

  private async stage({ remove, upsert }: BlockChanges): Promise<Stage> {
    const dim = this.def.dim
    // Last upsert of an id or key in the block wins.
    const byId = new Map<string, VectorRecord>()
    const idOfKey = new Map<string, string>()
    for (const rec of upsert) {
      if (rec.vector.length !== dim) throw new DimensionMismatchError({ expected: dim, got: rec.vector.length })
      const key = rec.key.toLowerCase()
      const prevId = idOfKey.get(key)
      if (prevId !== undefined && prevId !== rec.id) byId.delete(prevId)
      byId.delete(rec.id)
      byId.set(rec.id, rec)
      idOfKey.set(key, rec.id)
    }
    const incoming = [...byId.values()]

    const removeSlots = new Set<number>()
    for (const key of remove) {
      const s = this.byKey.get(key.toLowerCase())
      if (s !== undefined) removeSlots.add(s)
    }
    for (const rec of incoming) {
      const a = this.byId.get(rec.id)
      if (a !== undefined) removeSlots.add(a)
      const b = this.byKey.get(rec.key.toLowerCase())
      if (b !== undefined) removeSlots.add(b)
    }
    if (incoming.length === 0 && removeSlots.size === 0) return { commit: () => undefined, rollback: () => undefined }

    // Reserve slots (never ones freed by this block: their old record stays visible until commit).
    const slots: number[] = new Array(incoming.length)
    for (let i = 0; i < incoming.length; i++) slots[i] = this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.slotCount++
    const labels: number[] = []
    this.pending = true
    try {
      this.graph.reserve(incoming.length)
      this.labelSlot = growInt32(this.labelSlot, this.nextLabel + incoming.length, -1)
      let t0 = performance.now()
      for (let i = 0; i < incoming.length; i++) {
        const label = this.nextLabel++
        this.graph.add(incoming[i]!.vector, label)
        labels.push(label)
        this.keyword.add(slots[i]!, incoming[i]!.document)
        if ((i & 15) === 15 && performance.now() - t0 > SLICE_MS) {
          await yieldToLoop()
          t0 = performance.now()
        }
      }
    } catch (err) {
      this.unstage(labels, slots)
      throw err
    }

    const graph = this.graph
    let done: 'committed' | 'rolled back' | undefined
    const stage: Stage = {
      // Synchronous, so no reader sees part of the block.
      commit: () => {
        if (done === 'committed') return
        if (done === 'rolled back') throw new Error(`collection ${this.name}: a block was committed after a newer prepare rolled it back`)
        done = 'committed'
        this.staged = undefined
        for (const s of removeSlots) this.removeSlot(s)
        this.ensureSlotCapacity(this.slotCount)
        for (let i = 0; i < incoming.length; i++) this.placeSlot(slots[i]!, incoming[i]!, labels[i]!)
        this.pending = false
        if (this.needsRebuild()) {
          const run = this.queue.then(() => this.rebuild())
          this.queue = run.catch(() => undefined)
        }
      },
      rollback: () => {
        if (done !== undefined) return
        done = 'rolled back'
        this.staged = undefined
        // A rebuild never runs while a stage is open, so the labels still belong to this graph.
        if (this.graph === graph) this.unstage(labels, slots)
      },
    }
    this.staged = stage
    return stage
  }

  private unstage(labels: number[], slots: number[]): void {
    for (const label of labels) this.graph.remove(label)
    for (const s of slots) this.keyword.remove(s)
    this.freeSlots.push(...slots)
    this.pending = false
  }


  private ensureSlotCapacity(n: number): void {
    this.invNorms = growFloat32(this.invNorms, n)
    this.slotLabel = growInt32(this.slotLabel, n, -1)
    for (const col of this.columns.values()) {
      if (col.kind === 'num' && col.data.length < this.invNorms.length) {
        const data = new Float64Array(this.invNorms.length).fill(NaN)
        data.set(col.data)
        col.data = data
      }
    }
  }

  private removeSlot(slot: number): void {
    const rec = this.slotRecord[slot]
    if (rec === undefined) return
    this.indexAttributes(slot, false)
    const label = this.slotLabel[slot]!
    this.graph.remove(label)
    this.labelSlot[label] = -1
    this.slotLabel[slot] = -1
    this.keyword.remove(slot)
    if (this.byId.get(rec.id) === slot) this.byId.delete(rec.id)
    const key = rec.key.toLowerCase()
    if (this.byKey.get(key) === slot) this.byKey.delete(key)
    this.setColumns(slot, undefined)
    this.slotRecord[slot] = undefined
    this.slotVector[slot] = undefined
    this.freeSlots.push(slot)
    this.live--
  }

  private placeSlot(slot: number, rec: VectorRecord, label: number): void {
    this.slotRecord[slot] = rec
    this.slotVector[slot] = rec.vector
    this.invNorms[slot] = inverseNorm(rec.vector)
    this.slotLabel[slot] = label
    this.labelSlot[label] = slot
    this.setColumns(slot, rec)
    this.indexAttributes(slot, true)
    this.byId.set(rec.id, slot)
    this.byKey.set(rec.key.toLowerCase(), slot)
    this.live++
  }

  private needsRebuild(): boolean {
    if (this.graph.deleted > Math.max(REBUILD_DELETED_MIN, this.live * REBUILD_DELETED_RATIO)) return true
    return this.nextLabel > Math.max(LABEL_COMPACT_MIN, this.live * LABEL_COMPACT_RATIO)
  }

  /**
   * Rebuilds the graph from the live records with compact labels, in slices; readers keep using the
   * old graph until the synchronous swap. Runs inside apply, so no write interleaves.
   */
  private async rebuild(): Promise<void> {
    const graph = HnswGraph.create(this.ops, this.def.dim, { m: this.def.index.m, efConstruction: this.def.index.ef_construction }, Math.ceil(this.live * 1.25) + 16)
    const labelSlot = new Int32Array(Math.max(64, Math.ceil(this.live * 1.25))).fill(-1)
    const slotLabel = new Int32Array(this.slotLabel.length).fill(-1)
    let label = 0
    let t0 = performance.now()
    for (let s = 0; s < this.slotCount; s++) {
      const v = this.slotVector[s]
      if (v === undefined) continue
      graph.add(v, label)
      labelSlot[label] = s
      slotLabel[s] = label
      label++
      if ((label & 15) === 15 && performance.now() - t0 > SLICE_MS) {
        await yieldToLoop()
        t0 = performance.now()
      }
    }
    this.graph = graph
    this.labelSlot = labelSlot
    this.slotLabel = slotLabel
    this.nextLabel = label
  }

  // ---- reads ----

  /**
   * A record by id, else by entity key (0x…, case-insensitive).
   * @param ref id or key
   * @returns the record or undefined
   */
  get(ref: string): VectorRecord | undefined {
    let s = this.byId.get(ref)
    if (s === undefined && ref.startsWith('0x')) s = this.byKey.get(ref.toLowerCase())
    if (s === undefined && ref.startsWith('0X')) s = this.byKey.get(ref.toLowerCase())
    return s === undefined ? undefined : this.slotRecord[s]
  }

  /** Live records in slot order. */
  *records(): IterableIterator<VectorRecord> {
    for (let s = 0; s < this.slotCount; s++) {
      const rec = this.slotRecord[s]
      if (rec !== undefined) yield rec
    }
  }

  private compile(params: FilterParams): Cond | undefined {
    if (params.filter === undefined || params.filter === null) {
      if (params.where === undefined) return undefined
      const hit = this.filterCache.get(params.where)
      if (hit !== undefined || this.filterCache.has(params.where)) return hit
      const cond = compileFilter(params, this.def)
      if (this.filterCache.size >= FILTER_CACHE_SIZE) this.filterCache.delete(this.filterCache.keys().next().value!)
      this.filterCache.set(params.where, cond)
      return cond
    }
    return compileFilter(params, this.def)
  }

  private queryVector(vector: ArrayLike<number>): Float32Array {
    if (vector.length !== this.def.dim) throw new DimensionMismatchError({ expected: this.def.dim, got: vector.length })
    const q = this.queryBuf
    for (let i = 0; i < q.length; i++) q[i] = vector[i]!
    return q
  }

  /**
   * k nearest records, optionally filtered; never fewer than min(k, passing records).
   * @param params `{ vector, k, where?, filter?, efSearch? }` (k is validated by the caller, 1–50)
   * @returns results nearest first with pgvector distance and score, and `search_mode`
   * @throws DimensionMismatchError, InvalidFilterError
   * @example store.search({ vector: [1, 0, 0, 0], k: 2, where: "topic = str('pets')" })
   */
  search(params: SearchParams): SearchAnswer {
    const q = this.queryVector(params.vector)
    const cond = this.compile(params)
    // k is validated by the caller (1–50); anything else must still not allocate k-sized buffers.
    const k = Math.min(Math.floor(params.k), this.live)
    if (!(k >= 1)) return { results: [], search_mode: 'exact' }
    const ef = effectiveEf(this.def, k, params.efSearch)
    const res = plannedSearch(this.ctx, q, k, ef, cond)
    const score = this.ops.score
    const results: SearchHit[] = new Array(res.slots.length)
    for (let i = 0; i < res.slots.length; i++) {
      const d = res.distances[i]!
      results[i] = { record: this.slotRecord[res.slots[i]!]!, distance: d, score: score(d) }
    }
    return { results, search_mode: res.mode }
  }

  /**
   * Exactly how many live records pass a filter.
   * @param params `{ where?, filter? }`
   * @returns the count
   * @throws InvalidFilterError
   */
  count(params: FilterParams = {}): number {
    const cond = this.compile(params)
    if (cond === undefined || cond.t === 'all') return this.live
    if (cond.t !== 'and' && cond.t !== 'or') return leafCount(cond, this.indexOf(cond.field))
    const predicate = buildPredicate(cond, this.rows)
    if (estimate(cond, this.ctx) <= this.live / 2) return allowedSlots(cond, this.ctx, predicate).length
    let n = 0
    for (let s = 0; s < this.slotCount; s++) if (this.slotRecord[s] !== undefined && predicate(s)) n++
    return n
  }

  private acceptor(params: FilterParams): (slot: number) => boolean {
    const cond = this.compile(params)
    const predicate = cond === undefined ? undefined : buildPredicate(cond, this.rows)
    const recs = this.slotRecord
    return predicate === undefined ? (s) => recs[s] !== undefined : (s) => recs[s] !== undefined && predicate(s)
  }

  /**
   * BM25 keyword search over documents.
   * @param params `{ text, k, where?, filter? }`
   * @returns results best first with their BM25 score
   * @throws InvalidFilterError
   */
  keywordSearch(params: KeywordSearchParams): { results: KeywordHit[] } {
    const accept = this.acceptor(params)
    const k = Math.floor(params.k)
    if (!(k >= 1)) return { results: [] }
    const hits = this.keyword.search(params.text, k, accept)
    return { results: hits.slots.map((s, i) => ({ record: this.slotRecord[s]!, score: hits.scores[i]! })) }
  }

  /**
   * Vector + keyword search fused by reciprocal rank (k = 60); `distance` is the vector distance.
   * @param params `{ vector, text, k, where?, filter? }`
   * @returns fused results, best first, and the vector side's `search_mode`
   * @throws DimensionMismatchError, InvalidFilterError
   */
  hybridSearch(params: HybridSearchParams): { results: HybridHit[]; search_mode: SearchMode } {
    const k = Math.floor(params.k)
    if (params.vector.length !== this.def.dim) throw new DimensionMismatchError({ expected: this.def.dim, got: params.vector.length })
    if (!(k >= 1)) return { results: [], search_mode: 'exact' }
    const pool = Math.min(HYBRID_POOL_MAX, Math.max(HYBRID_POOL_MIN, k * 3))
    const filter = { where: params.where, filter: params.filter }
    const vec = this.search({ vector: params.vector, k: pool, ...filter })
    const kw = this.keywordSearch({ text: params.text, k: pool, ...filter })
    const slotOf = (r: VectorRecord): number => this.byId.get(r.id)!
    const distance = new Map<number, number>()
    for (const h of vec.results) distance.set(slotOf(h.record), h.distance)
    const fused = rrf([vec.results.map((h) => slotOf(h.record)), kw.results.map((h) => slotOf(h.record))]).slice(0, k)
    const q = this.queryVector(params.vector)
    const results = fused.map(({ slot, score }) => {
      const record = this.slotRecord[slot]!
      return { record, score, distance: distance.get(slot) ?? this.ops.distance(q, record.vector) }
    })
    return { results, search_mode: vec.search_mode }
  }

  // ---- snapshots ----

  /**
   * Writes the store to `dir` (created if missing): graph (hnswlib writeIndex), records, halfvec
   * bytes, keyword index, manifest last.
   * @param dir target directory
   */
  save(dir: string): Promise<void> {
    const run = this.queue.then(() => this.saveNow(dir))
    this.queue = run.catch(() => undefined)
    return run
  }

  private async saveNow(dir: string): Promise<void> {
    // The graph file would carry the staged labels as live elements.
    if (this.staged !== undefined) throw new Error(`collection ${this.name}: cannot save while a block is staged (commit it first)`)
    await mkdir(dir, { recursive: true })
    const dim = this.def.dim
    await this.graph.write(join(dir, 'hnsw.bin'))
    const lines: string[] = []
    const halves = new Uint8Array(this.live * dim * 2)
    let o = 0
    for (let s = 0; s < this.slotCount; s++) {
      const rec = this.slotRecord[s]
      if (rec === undefined) continue
      const attributes: Record<string, AttributeValue | string> = {}
      for (const [name, v] of Object.entries(rec.attributes)) {
        // JSON has no ±Infinity, which f32 attributes may hold.
        attributes[name] = typeof v === 'number' && !Number.isFinite(v) ? String(v) : v
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
      )
      halves.set(rec.halfvec, o)
      o += dim * 2
    }
    await writeFile(join(dir, 'records.jsonl'), lines.join('\n'))
    await writeFile(join(dir, 'halfvec.bin'), halves)
    await writeFile(join(dir, 'keyword.json'), JSON.stringify(this.keyword.toJSON()))
    const manifest = {
      format: SNAPSHOT_FORMAT,
      name: this.name,
      dim,
      metric: this.def.metric,
      live: this.live,
      slotCount: this.slotCount,
      nextLabel: this.nextLabel,
      deleted: this.graph.deleted,
    }
    await writeFile(join(dir, 'store.json'), JSON.stringify(manifest))
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
      format: number
      dim: number
      metric: string
      live: number
      slotCount: number
      nextLabel: number
      deleted: number
    }
    if (manifest.format !== SNAPSHOT_FORMAT) throw new InvalidArgumentError(`snapshot format ${manifest.format} is not supported`)
    if (manifest.dim !== definition.dim || manifest.metric !== definition.metric) {
      throw new InvalidArgumentError(`snapshot is ${manifest.metric} halfvec(${manifest.dim}), definition is ${definition.metric} halfvec(${definition.dim})`)
    }
    const store = new CollectionStore(name, definition)
    const dim = definition.dim
    store.graph = await HnswGraph.read(store.ops, dim, { m: definition.index.m, efConstruction: definition.index.ef_construction }, join(dir, 'hnsw.bin'))
    store.graph.deleted = manifest.deleted
    const text = await readFile(join(dir, 'records.jsonl'), 'utf8')
    const halves = new Uint8Array(await readFile(join(dir, 'halfvec.bin')))
    store.slotCount = manifest.slotCount
    store.nextLabel = manifest.nextLabel
    store.ensureSlotCapacity(manifest.slotCount)
    store.labelSlot = growInt32(store.labelSlot, manifest.nextLabel, -1)
    const occupied = new Uint8Array(manifest.slotCount)
    let o = 0
    for (const line of text.length === 0 ? [] : text.split('\n')) {
      const r = JSON.parse(line) as {
        slot: number
        label: number
        key: string
        owner: string
        creator: string | null
        id: string
        expiresAt: string
        document: string
        attributes: Record<string, AttributeValue>
      }
      const halfvec = halves.slice(o, o + dim * 2)
      o += dim * 2
      const vector = new Float32Array(dim)
      for (let i = 0; i < dim; i++) vector[i] = HALF_TO_FLOAT32[halfvec[2 * i]! | (halfvec[2 * i + 1]! << 8)]!
      const attributes: Record<string, AttributeValue> = Object.create(null)
      for (const [k, v] of Object.entries(r.attributes)) attributes[k] = definition.attributes[k] === 'f32' && typeof v === 'string' ? Number(v) : v
      const rec: VectorRecord = {
        key: r.key,
        owner: r.owner,
        creator: r.creator ?? undefined,
        collection: name,
        id: r.id,
        expiresAt: BigInt(r.expiresAt),
        dim,
        vector,
        halfvec,
        document: r.document,
        attributes,
      }
      store.placeSlot(r.slot, rec, r.label)
      occupied[r.slot] = 1
    }
    for (let s = 0; s < manifest.slotCount; s++) if (occupied[s] === 0) store.freeSlots.push(s)
    store.keyword = KeywordIndex.fromJSON(await readFile(join(dir, 'keyword.json'), 'utf8'))
    return store
  }
}
