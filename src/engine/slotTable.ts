// The state every phase of a collection store works on (ARCHITECTURE.md §1): records in dense, reused
// *slots*, the HNSW graph that knows them by *labels* (fresh per insert, because hnswlib reuses the
// memory of deleted elements only for new labels) and keeps their vectors, the occupied flags, the
// attribute columns, the id and key maps and the keyword index. The phases (staging.ts inserts, rebuild.ts compacts, snapshot.ts
// saves and loads, collectionStore.ts reads) share it as pgvector's build/insert/scan/vacuum share an
// index's pages; the fields are public to them and the table is not exported from the engine.
//
// `labelSlot` maps a label back to its slot and is −1 for labels readers must not see: deleted ones,
// and those inserted by a block not yet committed (`pending`).

import type { CollectionDefinition } from '../collections/index.ts';
import { grownLength } from './arrayGrowth.ts';
import { AttributeColumns } from './attributeColumns.ts';
import { buildPredicate } from './filter/predicate.ts';
import type { Cond } from './filter/types.ts';
import type { Graph } from './hnsw/graph.ts';
import { HalfGraph } from './hnsw/halfGraph.ts';
import { KeywordIndex } from './keyword.ts';
import type { MetricOps } from './metrics.ts';
import type { AllowedMemo, PlannerContext } from './plan/types.ts';
import type { StoredRecord } from './recordView.ts';
import { SlotHash } from './slotHash.ts';
import { VectorSlab } from './vectorSlab.ts';

/**
 * An Int32Array of at least `min` entries holding `a`'s, the rest `fill`.
 * @returns `a` itself when it is long enough, else a grown copy (arrayGrowth.ts)
 */
export function growInt32(a: Int32Array, min: number, fill: number): Int32Array {
  if (a.length >= min) return a;
  const b = new Int32Array(grownLength(a.length, min)).fill(fill);
  b.set(a);
  return b;
}

/** The definition's graph build parameters. */
export function graphParams(def: CollectionDefinition): { m: number; efConstruction: number } {
  return { m: def.index.m, efConstruction: def.index.ef_construction };
}

/** A new, empty graph with the definition's build parameters. */
export function emptyGraph(ops: MetricOps, def: CollectionDefinition, capacity?: number): Graph {
  return HalfGraph.create(ops, def.dim, graphParams(def), capacity);
}

export class SlotTable {
  readonly ops: MetricOps;
  /** The store's graph, which keeps the only copy of the vectors. */
  graph: Graph;

  // Per slot.
  records: (StoredRecord | undefined)[] = [];
  /** The occupied flags (the graph keeps the vectors: the slab holds none). */
  readonly vectors: VectorSlab;
  slotLabel: Int32Array = new Int32Array(0);
  /** Attribute values by slot and their indexes, declared and meta, for the filter predicates. */
  readonly columns: AttributeColumns;
  freeSlots: number[] = [];
  slotCount = 0;
  live = 0;

  // Per label.
  labelSlot: Int32Array = new Int32Array(0);
  nextLabel = 0;
  /** A block is staged: its labels are in the graph but not visible. */
  pending = false;

  /** Live slots by record id (the ids are read back from `records`: the table holds no strings). */
  readonly byId = new SlotHash((slot) => this.records[slot]!.id);
  /** Made when first used: an empty collection holds no MiniSearch. */
  #keyword: KeywordIndex | undefined;
  /** The last expiry placed: the records of a block mostly share one, and a BigInt costs ~24 bytes each. */
  #expiry = 0n;
  /** What `view` decodes a graph's vector into. */
  #scratch: Float32Array | undefined;

  constructor(ops: MetricOps, def: CollectionDefinition) {
    this.ops = ops;
    this.graph = emptyGraph(ops, def);
    this.vectors = new VectorSlab(def.dim, false);
    this.columns = new AttributeColumns(() => this.vectors.capacity);
    this.columns.reset(def.attributes);
  }

  get keyword(): KeywordIndex {
    this.#keyword ??= new KeywordIndex();
    return this.#keyword;
  }

  set keyword(index: KeywordIndex) {
    this.#keyword = index;
  }

  /** Re-declares the attribute columns for a new definition and refills them from the live records. */
  reindexAttributes(def: CollectionDefinition): void {
    this.columns.reset(def.attributes);
    for (let s = 0; s < this.slotCount; s++) {
      const rec = this.records[s];
      if (rec === undefined) continue;
      this.columns.set(s, rec);
      this.columns.indexSlot(s, true);
    }
  }

  /**
   * The live slot of an entity key. The `$key` index answers it: a second key → slot map would hold
   * the same key string and entry again for every record.
   * @param key an entity key, any case
   */
  slotOfKey(key: string): number | undefined {
    return this.columns.slotOfKey(key.toLowerCase());
  }

  /**
   * A slot's vector as float32 in a buffer reused by the next call (callers hand it straight to a graph
   * or a distance), read from the graph under the slot's label.
   */
  view(slot: number): Float32Array {
    this.#scratch ??= new Float32Array(this.vectors.dim);
    return this.graph.vector(this.slotLabel[slot]!, this.#scratch);
  }

  /** A copy of a slot's vector, the caller's to keep. */
  copy(slot: number): Float32Array {
    return this.graph.vector(this.slotLabel[slot]!, new Float32Array(this.vectors.dim));
  }

  ensureCapacity(n: number): void {
    this.vectors.grow(n);
    const cap = this.vectors.capacity;
    this.slotLabel = growInt32(this.slotLabel, cap, -1);
    this.columns.grow(cap);
  }

  /** Makes a slot live; its vector is already in the graph under `label`. `rec` becomes the table's own. */
  place(slot: number, rec: StoredRecord, label: number): void {
    if (rec.expiresAt === this.#expiry) rec.expiresAt = this.#expiry;
    else this.#expiry = rec.expiresAt;
    this.records[slot] = rec;
    this.vectors.live[slot] = 1;
    this.slotLabel[slot] = label;
    this.labelSlot[label] = slot;
    this.columns.set(slot, rec);
    this.columns.share(slot, rec, this.records);
    this.columns.indexSlot(slot, true);
    this.byId.set(rec.id, slot);
    this.live++;
  }

  /** Drops a live slot's record everywhere and frees the slot. */
  remove(slot: number): void {
    const rec = this.records[slot];
    if (rec === undefined) return;
    this.columns.indexSlot(slot, false);
    const label = this.slotLabel[slot]!;
    this.graph.remove(label);
    this.labelSlot[label] = -1;
    this.slotLabel[slot] = -1;
    this.keyword.remove(slot, rec.document);
    this.byId.delete(rec.id, slot);
    this.columns.set(slot, undefined);
    this.records[slot] = undefined;
    this.vectors.live[slot] = 0;
    this.freeSlots.push(slot);
    this.live--;
  }

  /** Whether a slot holds a live record passing `cond` (every live record without one). */
  acceptor(cond: Cond | undefined): (slot: number) => boolean {
    const predicate = cond === undefined ? undefined : buildPredicate(cond, this.columns);
    const recs = this.records;
    return predicate === undefined ? (s) => recs[s] !== undefined : (s) => recs[s] !== undefined && predicate(s);
  }

  /**
   * What the planner reads of this table, read live through getters (so a plan sees the graph a rebuild
   * swapped in), with the store's enumeration memo.
   */
  plannerContext(memo: () => Required<AllowedMemo>): PlannerContext {
    const t = this;
    return {
      get allowedMemo() {
        return memo().allowedMemo;
      },
      get bitsMemo() {
        return memo().bitsMemo;
      },
      get graph() {
        return t.graph;
      },
      get labelSlot() {
        return t.labelSlot;
      },
      get slotLabel() {
        return t.slotLabel;
      },
      get slotCount() {
        return t.slotCount;
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
}
