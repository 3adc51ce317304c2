// RSS growth per vector of a whole collection store (records, maps, attribute and keyword indexes, the
// graph) against its graph alone, for the engine ARKIVECTOR_ENGINE selects: what issue 23 item 1 counts
// (documents excluded: the records carry none). Records are made per block and dropped after apply, as the
// indexer does, so the store's growth is all it keeps. Memory is not affected by load.
//
// Usage: tsx scripts/measure-store-memory.ts [--n N] [--dim D] [--graph] [--own-strings] [--heap]
//   (default 20k × 384; --graph: the graph alone; --own-strings: each record brings its own copy of its
//   owner address, as records decoded from the chain do, instead of one string shared by all; --heap: also
//   the V8 heap's growth per record by kind of object, from heap snapshots before and after)

import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { VectorRecord } from '../src/collections/index.ts';
import { CollectionStore } from '../src/engine/index.ts';
import { createGraph, selectedEngine } from '../src/engine/hnsw/engine.ts';
import { nativeAddon } from '../src/engine/hnsw/nativeAddon.ts';
import { METRIC_OPS } from '../src/engine/metrics.ts';
import { benchDefinition, benchRecord } from './benchRecord.ts';
import { heapByGroup, heapNodes } from './heapSnapshot.ts';
import { mulberry32 } from './generators.ts';

const argv = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const N = Number(option('--n') ?? 20_000);
const DIM = Number(option('--dim') ?? 384);
const PARAMS = { m: 16, efConstruction: 64 };

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** RSS after a full collection and a pause (V8 returns freed pages to the OS in the background). */
const usage = async (): Promise<NodeJS.MemoryUsage> => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return process.memoryUsage();
};
const rss = async (): Promise<number> => (await usage()).rss;

// Vectors made one at a time into a reused buffer: a large input array, or the generator's garbage, would
// leave freed memory in the allocator that the store then reuses without growing RSS (memory does not
// depend on where the vectors lie).
const scratch = new Float32Array(DIM);
const noise = mulberry32(1);
const vectorOf = (_i: number): Float32Array => {
  for (let d = 0; d < DIM; d++) scratch[d] = noise() * 2 - 1;
  return scratch;
};
const cluster = Int32Array.from({ length: N }, (_, i) => i % 16);
const rand = mulberry32(7);
const bucket = Int32Array.from({ length: N }, () => Math.floor(rand() * 1000));
const engine = selectedEngine();
/** The C heap (glibc mallinfo2) when the native engine runs: live allocations against the allocator's slack. */
const mallocStats = () => (engine === 'native' ? nativeAddon().mallocStats() : undefined);
/** RSS growth per vector once the C heap's free pages are given back (how much of the rest is slack). */
const rssAfterTrim = async (from: number): Promise<number | undefined> => {
  if (engine !== 'native') return undefined;
  nativeAddon().trimMalloc();
  return Math.round(((await rss()) - from) / N);
};
/** Per vector, the growth of each C-heap figure since `from`. */
const mallocGrowth = (from: ReturnType<typeof mallocStats>) => {
  const to = mallocStats();
  if (from === undefined || to === undefined) return undefined;
  const per = (key: keyof typeof to) => Math.round((to[key] - from[key]) / N);
  return { heap: per('heap'), inUse: per('inUse'), free: per('free'), mmapped: per('mmapped') };
};

/** V8's committed size per heap space: the young generation grows with the allocation rate, not with N. */
const spaces = () => Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.physical_space_size]));
/** Per vector, the change of V8's young generation since `from`. */
const youngGrowth = (from: Record<string, number>) =>
  Math.round(((spaces().new_space ?? 0) - (from.new_space ?? 0)) / N);

// One measurement per process: the graph alone (--graph), or the whole store.
const GRAPH_ONLY = argv.includes('--graph');
const OWN_STRINGS = argv.includes('--own-strings');
const HEAP = argv.includes('--heap');
if (GRAPH_ONLY) {
  const before = await rss();
  const spacesBefore = spaces();
  const cBefore = mallocStats();
  const graph = createGraph(engine, METRIC_OPS.cosine, DIM, PARAMS, N);
  graph.reserve(N);
  for (let i = 0; i < N; i++) graph.add(vectorOf(i), i);
  const bytes = ((await rss()) - before) / N;
  console.log(
    JSON.stringify({
      engine,
      n: N,
      dim: DIM,
      graphBytesPerVector: Math.round(bytes),
      graphLessYoung: Math.round(bytes) - youngGrowth(spacesBefore),
      elements: graph.elementCount,
      capacity: graph.capacity,
      malloc: mallocGrowth(cBefore),
    }),
  );
  process.exit(0);
}

const definition = benchDefinition(DIM, PARAMS);
const heapBefore = HEAP ? heapByGroup(await heapNodes()) : undefined;
const before = await usage();
const spacesBefore = spaces();
const cBefore = mallocStats();
const store = new CollectionStore('bench', definition);
for (let i = 0; i < N; i += 1000) {
  const block: VectorRecord[] = [];
  for (let j = i; j < Math.min(N, i + 1000); j++) {
    const rec = benchRecord(j, vectorOf(j), { bucket: bucket[j] ?? 0, cluster: cluster[j] ?? 0 });
    // A flat copy (a slice would be a view pinning its parent).
    if (OWN_STRINGS) rec.owner = Buffer.from(rec.owner, 'latin1').toString('latin1');
    block.push(rec);
  }
  await store.apply({ remove: [], upsert: block });
}
// RSS split into the V8 heap's objects (records, maps, attribute indexes), typed arrays (label maps,
// columns, the slab when there is one) and the rest (the native graph, allocator slack). V8's young
// generation is sized by the allocation rate, not by N (0 to ~32 MB from run to run, never given back):
// `storeLessYoung` leaves its change out, so two runs compare.
const after = await usage();
const spacesAfter = spaces();
const per = (key: keyof NodeJS.MemoryUsage) => Math.round((after[key] - before[key]) / N);
const heapSpaces = Object.fromEntries(
  Object.keys(spacesAfter).map((name) => [
    name,
    Math.round(((spacesAfter[name] ?? 0) - (spacesBefore[name] ?? 0)) / N),
  ]),
);
const young = heapSpaces.new_space ?? 0;
const trimmed = await rssAfterTrim(before.rss);
console.log(
  JSON.stringify({
    engine,
    n: N,
    dim: DIM,
    ownStrings: OWN_STRINGS,
    storeBytesPerVector: per('rss'),
    storeLessYoung: per('rss') - young,
    heapUsed: per('heapUsed'),
    heapTotal: per('heapTotal'),
    arrayBuffers: per('arrayBuffers'),
    external: per('external'),
    size: store.size,
    capacity: store.graphStats.capacity,
    malloc: mallocGrowth(cBefore),
    lessYoungAfterTrim: trimmed === undefined ? undefined : trimmed - young,
    heapSpaces,
  }),
);

if (heapBefore !== undefined) {
  // Bytes per record of each kind of object the store added (self sizes: a Map's entries are its table's).
  const heapAfter = heapByGroup(await heapNodes());
  const rows = [...heapAfter]
    .map(([group, g]) => {
      const b = heapBefore.get(group) ?? { count: 0, bytes: 0 };
      return { group, perRecord: (g.bytes - b.bytes) / N, objectsPerRecord: (g.count - b.count) / N };
    })
    .filter((r) => Math.abs(r.perRecord) >= 0.5)
    .sort((a, b) => b.perRecord - a.perRecord);
  const total = rows.reduce((sum, r) => sum + r.perRecord, 0);
  console.log(JSON.stringify({ heapPerRecord: Math.round(total), size: store.size }));
  for (const r of rows)
    console.log(
      `${r.perRecord.toFixed(1).padStart(8)} B  ${r.objectsPerRecord.toFixed(3).padStart(7)} obj  ${r.group}`,
    );
}
