// Insert phase of a collection store: stages one block's changes (graph inserts under invisible
// labels, in slices that yield to the event loop) and hands back a synchronous
// commit that makes the whole block visible at once, or a rollback that takes it out again.

import { DimensionMismatchError, type VectorRecord } from '../collections/index.ts';
import { type StoredRecord, storedRecord } from './recordView.ts';
import { SLICE_MS, yieldToLoop } from './slices.ts';
import { growInt32, type SlotTable } from './slotTable.ts';
import type { StoreChanges } from './storeContract.ts';

/** A block staged by `prepare`: inserted into the graph under invisible labels, not yet committed. */
export type Stage = { commit(): void; rollback(): void };

export type StageHooks = {
  /** The collection name, for errors. */
  name: string;
  /** The open stage changed (undefined once it is committed or rolled back). */
  staged(stage: Stage | undefined): void;
  /** Runs at the end of the synchronous commit. */
  committed(): void;
};

const noStage: Stage = { commit: () => undefined, rollback: () => undefined };

function unstage(t: SlotTable, labels: number[], slots: number[]): void {
  for (const label of labels) t.graph.remove(label);
  t.freeSlots.push(...slots);
  t.pending = false;
}

/**
 * Stages a block: removals are entity keys; upserts replace any record with the same id or key (the
 * last upsert of an id or key in the block wins).
 * @param t the store's table
 * @param dim the collection's dimension
 * @param changes `{ remove, upsert }`
 * @param hooks where the stage is tracked and what runs after its commit
 * @returns the stage
 * @throws DimensionMismatchError for a record of the wrong dim (nothing is staged)
 */
export async function stageBlock(
  t: SlotTable,
  dim: number,
  { remove, upsert }: StoreChanges,
  hooks: StageHooks,
): Promise<Stage> {
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
    const s = t.slotOfKey(key);
    if (s !== undefined) removeSlots.add(s);
  }
  for (const rec of incoming) {
    const a = t.byId.get(rec.id);
    if (a !== undefined) removeSlots.add(a);
    const b = t.slotOfKey(rec.key);
    if (b !== undefined) removeSlots.add(b);
  }
  if (incoming.length === 0 && removeSlots.size === 0) return noStage;

  // Reserve slots (never ones freed by this block: their old record stays visible until commit).
  const slots: number[] = new Array(incoming.length);
  for (let i = 0; i < incoming.length; i++) slots[i] = t.freeSlots.length > 0 ? t.freeSlots.pop()! : t.slotCount++;
  const labels: number[] = [];
  // Made here, in slices, not in the synchronous commit: copying the attributes costs about a microsecond.
  const stored: StoredRecord[] = [];
  t.pending = true;
  try {
    t.graph.reserve(incoming.length);
    t.labelSlot = growInt32(t.labelSlot, t.nextLabel + incoming.length, -1);
    // Reserved slots are not live, so scans skip them until the commit marks them.
    t.ensureCapacity(t.slotCount);
    let t0 = performance.now();
    for (let i = 0; i < incoming.length; i++) {
      const label = t.nextLabel++;
      const vector = incoming[i]!.vector;
      t.graph.add(vector, label);
      labels.push(label);
      stored.push(storedRecord(incoming[i]!));
      if ((i & 15) === 15 && performance.now() - t0 > SLICE_MS) {
        await yieldToLoop();
        t0 = performance.now();
      }
    }
  } catch (err) {
    unstage(t, labels, slots);
    throw err;
  }

  const graph = t.graph;
  let done: 'committed' | 'rolled back' | undefined;
  const stage: Stage = {
    // Synchronous, so no reader sees part of the block.
    commit: () => {
      if (done === 'committed') return;
      if (done === 'rolled back')
        throw new Error(`collection ${hooks.name}: a block was committed after a newer prepare rolled it back`);
      done = 'committed';
      hooks.staged(undefined);
      for (const s of removeSlots) t.remove(s);
      t.ensureCapacity(t.slotCount);
      for (let i = 0; i < incoming.length; i++) {
        t.place(slots[i]!, stored[i]!, labels[i]!);
        // Here, not in prepare: staged documents would change BM25 statistics for readers mid-block.
        t.keyword.add(slots[i]!, incoming[i]!.document);
      }
      t.pending = false;
      hooks.committed();
    },
    rollback: () => {
      if (done !== undefined) return;
      done = 'rolled back';
      hooks.staged(undefined);
      // A rebuild never runs while a stage is open, so the labels still belong to this graph.
      if (t.graph === graph) unstage(t, labels, slots);
    },
  };
  hooks.staged(stage);
  return stage;
}
