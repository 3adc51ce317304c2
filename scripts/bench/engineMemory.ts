// The engine suite's memory per vector: each system built alone in a child process of its own over the
// same vectors (scripts/bench/engine.ts explains why), and the report's memory line.
import { fork } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import hnswlib from 'hnswlib-node';
import type { VectorRecord } from '../../src/collections/index.ts';
import { CollectionStore } from '../../src/engine/index.ts';
import { benchDefinition, benchRecord } from '../../test/helpers/benchRecord.ts';
import { BENCH_ENTRY, childArgs } from './args.ts';
import { trimCHeap } from './nativeCalls.ts';
import { log, progress } from './output.ts';

/** What a memory child builds: its size and graph parameters. */
export type MemoryShape = { n: number; dim: number; m: number; efConstruction: number };

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (() => void) | undefined;

/** RSS after full collections with pauses (V8 frees array buffers off the main thread after a collection). */
export async function settledRss(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return process.memoryUsage().rss;
}

/** The systems whose memory a child process measures. */
export type MemorySystem = 'hnswlib-node' | 'arkivector';
/**
 * A memory child's answer, per vector: RSS growth, and the same less the growth of V8's young generation
 * (sized by the allocation rate, not by the count: it moves from run to run by as much as a small build
 * keeps); the slope, RSS growth less the young generation's from the build's halfway
 * point to its end per vector added (what each further vector costs, without the costs paid once: the
 * first pages of the C heap, V8's code and maps, the store's fixed tables); the build's seconds in the child.
 */
export type MemoryFigure = { bytes: number; lessYoung: number; slope: number; buildS: number };
/** Committed bytes of V8's young generation (the new space). */
const youngBytes = (): number =>
  getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.physical_space_size ?? 0;

/** Files a memory child reads: the halfvec-rounded vectors (row-major float32) and the two attributes. */
export const DATA_FILES = { vectors: 'vectors.f32', bucket: 'bucket.i32', cluster: 'cluster.i32' } as const;

/** Reads a whole file into `into` without an intermediate buffer (no freed memory for a build to reuse). */
function readInto(path: string, into: Float32Array | Int32Array): void {
  const bytes = new Uint8Array(into.buffer, into.byteOffset, into.byteLength);
  const fd = openSync(path, 'r');
  try {
    for (let off = 0; off < bytes.length; ) {
      const got = readSync(fd, bytes, off, Math.min(1 << 26, bytes.length - off), off);
      if (got <= 0) throw new Error(`${path}: ${off} of ${bytes.length} bytes`);
      off += got;
    }
  } finally {
    closeSync(fd);
  }
}

/** In a memory child: builds one system over the data files and answers its RSS growth per vector. */
export async function memoryChild(system: MemorySystem, dir: string, shape: MemoryShape): Promise<MemoryFigure> {
  const { n: N, dim: DIM, m: M, efConstruction: EF_CONSTRUCTION } = shape;
  const slab = new Float32Array(N * DIM);
  const bucket = new Int32Array(N);
  const cluster = new Int32Array(N);
  readInto(join(dir, DATA_FILES.vectors), slab);
  readInto(join(dir, DATA_FILES.bucket), bucket);
  readInto(join(dir, DATA_FILES.cluster), cluster);
  const vector = (i: number): Float32Array => slab.subarray(i * DIM, (i + 1) * DIM);
  // What module loading freed stays in the C heap's free lists, where a build would reuse it without RSS
  // growing: give it back first (glibc's malloc_trim, through the addon when built).
  const trimmed = trimCHeap();
  const before = await settledRss();
  const youngBefore = youngBytes();
  // The halfway point of the slope: its settling pauses are left out of the build's seconds.
  const half = N >> 1;
  let atHalf = { rss: before, young: youngBefore };
  let pausedMs = 0;
  const markHalf = async (): Promise<void> => {
    const t = performance.now();
    atHalf = { rss: await settledRss(), young: youngBytes() };
    pausedMs += performance.now() - t;
  };
  const t0 = performance.now();
  let built: unknown;
  if (system === 'hnswlib-node') {
    const index = new hnswlib.HierarchicalNSW('cosine', DIM);
    index.initIndex(N, M, EF_CONSTRUCTION, 100, true);
    const buf = new Array<number>(DIM);
    for (let i = 0; i < N; i++) {
      const v = vector(i);
      for (let d = 0; d < DIM; d++) buf[d] = v[d]!;
      index.addPoint(buf, i);
      progress(`memory: ${system} build`, i + 1, N);
      if (i + 1 === half) await markHalf();
    }
    built = index;
  } else {
    const store = new CollectionStore('bench', benchDefinition(DIM, { m: M, efConstruction: EF_CONSTRUCTION }));
    // Blocks of at most 1,000 records, one of them ending at the halfway point.
    for (let i = 0; i < N; ) {
      const end = Math.min(i < half ? half : N, i + 1000);
      const block: VectorRecord[] = [];
      for (let j = i; j < end; j++) block.push(benchRecord(j, vector(j), { bucket: bucket[j]!, cluster: cluster[j]! }));
      await store.apply({ remove: [], upsert: block });
      progress(`memory: ${system} build`, end, N);
      if (end === half) await markHalf();
      i = end;
    }
    built = store;
  }
  const buildS = (performance.now() - t0 - pausedMs) / 1000;
  const after = await settledRss();
  const bytes = (after - before) / N;
  const young = youngBytes();
  const lessYoung = bytes - (young - youngBefore) / N;
  const slope = (after - atHalf.rss - (young - atHalf.young)) / Math.max(1, N - half);
  log(
    `memory child ${system}: RSS ${(before / 2 ** 20).toFixed(0)} MiB before the build${trimmed ? ' (C heap trimmed)' : ' (C heap not trimmed: no native addon)'}, ${(atHalf.rss / 2 ** 20).toFixed(0)} MiB at ${half} vectors, ${(after / 2 ** 20).toFixed(0)} MiB after, young generation ${((youngBytes() - youngBefore) / 2 ** 20).toFixed(1)} MiB more`,
  );
  // The inputs and the built system stay referenced past the reading: a slab V8 could collect once the
  // build is done would leave RSS with it, understating the system by that much.
  if (built === undefined || slab.length + bucket.length + cluster.length !== N * (DIM + 2))
    throw new Error('memory child: lost its inputs');
  return { bytes, lessYoung, slope, buildS };
}

/** Forks the bench entry as a memory child for `system` and waits for its answer. */
export function measureMemory(system: MemorySystem, dir: string, shape: MemoryShape): Promise<MemoryFigure> {
  const { n: N, dim: DIM } = shape;
  return new Promise((resolve, reject) => {
    const args = ['--memory-child', system, '--data', dir, '--n', String(N), '--dim', String(DIM)];
    // A young generation of fixed size (1 MB semi-spaces): V8 otherwise sizes it by the allocation rate,
    // and its growth or shrinking would land in the per-vector figure.
    const execArgv = [...process.execArgv, '--max-semi-space-size=1', '--min-semi-space-size=1'];
    const proc = fork(BENCH_ENTRY, childArgs(args), {
      execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answer: MemoryFigure | undefined;
    proc.on('message', (m) => {
      answer = m as MemoryFigure;
    });
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      if (answer !== undefined) resolve(answer);
      else reject(new Error(`memory child ${system} exited with ${signal ?? `code ${code}`} before answering`));
    });
  });
}

/** The report's memory line, from the memory children's answers. */
export function memoryLine(memory: Partial<Record<MemorySystem, MemoryFigure>>, shape: MemoryShape): string {
  const { n: N, dim: DIM } = shape;
  const raw = memory['hnswlib-node'];
  const ours = memory.arkivector;
  if (raw === undefined || ours === undefined) return 'memory per vector: not measured (--no-memory)';
  return `memory per vector, each system built alone in a child process (RSS growth; less V8's young generation; slope from n/2 to n): hnswlib-node ${Math.round(raw.bytes)} B; ${Math.round(raw.lessYoung)} B; ${Math.round(raw.slope)} B (graph), arkivector ${Math.round(ours.bytes)} B; ${Math.round(ours.lessYoung)} B; ${Math.round(ours.slope)} B (graph, vectors, records and indexes; ${(ours.lessYoung / raw.lessYoung).toFixed(2)}×, slope ${(ours.slope / raw.slope).toFixed(2)}×), n=${N} dim=${DIM}`;
}
