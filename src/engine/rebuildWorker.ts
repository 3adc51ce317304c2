// Worker-thread entry of a graph rebuild (started by rebuildThread.ts): builds an HNSW graph over the
// vectors it was handed, labels 0 … count − 1 in order, with the collection's build parameters, and
// writes it to the path it was given. The native graph cannot cross threads, so the main thread reads
// the file back (HalfGraph.read). Any throw reaches the main thread as the
// worker's 'error' event.

import { parentPort, workerData } from 'node:worker_threads';
import type { Metric } from '../collections/index.ts';
import { HalfGraph } from './hnsw/halfGraph.ts';
import { metricOps } from './metrics.ts';

/** What the main thread hands over (`vectors` is transferred, not copied). */
export type RebuildTask = {
  path: string;
  metric: Metric;
  dim: number;
  m: number;
  efConstruction: number;
  /** Elements the graph allocates for: the build plus room for the changes replayed after it. */
  capacity: number;
  /** count × dim float32 values, label i at offset i × dim. */
  vectors: Float32Array;
};

/** The worker's one message: the graph is written. */
export type RebuildDone = { written: number };

async function build(task: RebuildTask): Promise<number> {
  const { dim, vectors } = task;
  const count = Math.floor(vectors.length / dim);
  const graph = HalfGraph.create(
    metricOps(task.metric),
    dim,
    { m: task.m, efConstruction: task.efConstruction },
    Math.max(task.capacity, count),
  );
  for (let i = 0; i < count; i++) graph.add(vectors.subarray(i * dim, (i + 1) * dim), i);
  await graph.write(task.path);
  return count;
}

if (parentPort !== null) {
  const port = parentPort;
  const written = await build(workerData as RebuildTask);
  port.postMessage({ written } satisfies RebuildDone);
}
