// Vacuum phase of a collection store: once deletions or spent labels pile up, the graph is rebuilt
// from the live records with compact labels, in slices; readers keep using the old graph until the
// synchronous swap.

import type { CollectionDefinition } from '../collections/index.ts';
import { REBUILD_DELETED_MIN, REBUILD_DELETED_RATIO } from './hnsw/params.ts';
import { SLICE_MS, yieldToLoop } from './slices.ts';
import { emptyGraph, type SlotTable } from './slotTable.ts';

/** Compact labels (full rebuild) once this many times more labels were issued than records live. */
const LABEL_COMPACT_RATIO = 4;
const LABEL_COMPACT_MIN = 1 << 16;

/** Whether the graph carries enough deleted elements or spent labels to be rebuilt. */
export function needsRebuild(t: SlotTable): boolean {
  if (t.graph.deleted > Math.max(REBUILD_DELETED_MIN, t.live * REBUILD_DELETED_RATIO)) return true;
  return t.nextLabel > Math.max(LABEL_COMPACT_MIN, t.live * LABEL_COMPACT_RATIO);
}

/**
 * Rebuilds the graph from the live records with compact labels. The caller runs it on the store's
 * write queue, so no write interleaves.
 * @param t the store's table
 * @param def the collection's definition (build parameters)
 */
export async function rebuildGraph(t: SlotTable, def: CollectionDefinition): Promise<void> {
  const graph = emptyGraph(t.ops, def, Math.ceil(t.live * 1.25) + 16);
  const labelSlot = new Int32Array(Math.max(64, Math.ceil(t.live * 1.25))).fill(-1);
  const slotLabel = new Int32Array(t.slotLabel.length).fill(-1);
  let label = 0;
  let t0 = performance.now();
  for (let s = 0; s < t.slotCount; s++) {
    if (t.records[s] === undefined) continue;
    graph.add(t.vectors.view(s), label);
    labelSlot[label] = s;
    slotLabel[s] = label;
    label++;
    if ((label & 15) === 15 && performance.now() - t0 > SLICE_MS) {
      await yieldToLoop();
      t0 = performance.now();
    }
  }
  t.graph = graph;
  t.labelSlot = labelSlot;
  t.slotLabel = slotLabel;
  t.nextLabel = label;
}
