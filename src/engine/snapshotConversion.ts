// A store snapshot the retired hnswlib-node engine wrote (its graph is of no use to the native engine):
// the graph is built again from the snapshot's own binary16 vectors (`halfvec.bin`, slot order) in a
// rebuild worker, so upgrading never makes a node re-read its collections from the chain (a public RPC
// paces such reads). binary16 → float32 → binary16 is exact.

import { HALF_TO_FLOAT32 } from '../collections/index.ts';
import { buildInWorker, type WorkerBuild } from './rebuildThread.ts';
import type { RebuildTask } from './rebuildWorker.ts';

/**
 * Starts the build of a graph over the vectors of `slots`, label i for `slots[i]`
 * (compact labels, as a rebuild gives); the caller reads the file it writes, then disposes of it.
 * @param task the collection's metric and build parameters
 * @param halves `halfvec.bin`: slotCount × dim little-endian binary16 values in slot order
 * @param slots the occupied slots, ascending
 * @param where the store's rebuild worker module and temporary folder
 */
export function buildFromHalves(
  task: Omit<RebuildTask, 'path' | 'vectors' | 'capacity'>,
  halves: Uint8Array,
  slots: readonly number[],
  where: { workerUrl?: URL; tmpDir?: string },
): WorkerBuild {
  const { dim } = task;
  const vectors = new Float32Array(slots.length * dim);
  for (let i = 0; i < slots.length; i++) {
    const from = slots[i]! * dim * 2;
    const to = i * dim;
    for (let j = 0; j < dim; j++) {
      const o = from + 2 * j;
      vectors[to + j] = HALF_TO_FLOAT32[halves[o]! | (halves[o + 1]! << 8)]!;
    }
  }
  return buildInWorker({ ...task, capacity: Math.max(16, slots.length), vectors }, where);
}
