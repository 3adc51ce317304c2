// `npm run bench -- filtered`: the filtered searches of a whole CollectionStore (the planner, the filter's
// enumeration, the native engine), against the same store's unfiltered search, in alternating chunks of
// 10 queries timed in CPU time (the machine is shared): random 10 % and 1 % sets, a clustered ~10 % set
// with queries from everywhere, and the same set with queries from the other clusters only (far), on the
// data of the engine suite (ARCHITECTURE.md §10.1). Recall@10 against the engine's native exact scan of the
// stored binary16 values (this checkout's, test/bench/peers/exactScan.ts, whichever checkout is measured). `--graph` measures the native graph's filtered methods alone (scripts/bench/filteredGraph.ts).
//
// Usage: npm run bench -- filtered [--n N] [--dim D] [--queries Q] [--out FILE] [--root CHECKOUT]
//   default 100k × 384, 100 queries (the build takes minutes); --root measures another checkout's code
//   (an export of another commit with its addon built): run it at the same time as this one to compare
//   two builds under the same load.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ExactScan } from '../../test/bench/peers/exactScan.ts';
import { benchArgs, numberOption } from './args.ts';
import { loadAvg, log, writeJson } from './output.ts';

const args = benchArgs({
  n: { type: 'string' },
  dim: { type: 'string' },
  queries: { type: 'string' },
  out: { type: 'string' },
  root: { type: 'string' },
});
const ROOT = args.root ?? fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const N = numberOption(args.n, 100_000, 'n');
const DIM = numberOption(args.dim, 384, 'dim');
const NQ = numberOption(args.queries, 100, 'queries');
/** Where a checkout keeps the bench's generators and records (older checkouts: scripts/). */
const helper = (name: string): string =>
  existsSync(`${ROOT}/test/helpers/${name}`) ? `${ROOT}/test/helpers/${name}` : `${ROOT}/scripts/${name}`;
const { CollectionStore } = await import(`${ROOT}/src/engine/index.ts`);
const { HALF_TO_FLOAT32, floatToHalfBits } = await import(`${ROOT}/src/collections/index.ts`);
const { clustered, mulberry32 } = await import(helper('generators.ts'));
const { benchDefinition, benchRecord } = await import(helper('benchRecord.ts'));
const data = clustered(N, DIM, 1, { latent: 64 });
const qgen = clustered(NQ * 2, DIM, 2, { latent: 64 });
const rand = mulberry32(7);
const bucket = Array.from({ length: N }, () => Math.floor(rand() * 1000));
const halves = data.vectors.map((v: Float32Array) =>
  Float32Array.from(v, (x) => HALF_TO_FLOAT32[floatToHalfBits(x, { overflow: 'clamp' })]!),
);
const store = new CollectionStore('bench', benchDefinition(DIM, { m: 16, efConstruction: 64 }));
const t0 = performance.now();
for (let i = 0; i < N; i += 1000) {
  const block = [];
  for (let j = i; j < Math.min(N, i + 1000); j++)
    block.push(benchRecord(j, data.vectors[j]!, { bucket: bucket[j]!, cluster: data.cluster[j]! }));
  await store.apply({ remove: [], upsert: block });
}
log(`${ROOT}: ${N} × ${DIM}, build ${((performance.now() - t0) / 1000).toFixed(0)} s`);
const slab = new Float32Array(N * DIM);
halves.forEach((v: Float32Array, i: number) => {
  slab.set(v, i * DIM);
});
const scan = new ExactScan(slab, N, DIM);
/** The exact top 10 of a case's query among the ids it allows. */
const truthOf = (q: Float32Array, allowed: Uint32Array): Set<string> => new Set(scan.topK(q, 10, allowed).map(String));
const all = qgen.vectors.slice(0, NQ);
const away = qgen.vectors.filter((_: unknown, q: number) => qgen.cluster[q]! >= 2).slice(0, NQ);
const near = (i: number) => data.cluster[i]! < 2 && bucket[i]! < 800;
const cases = [
  { name: 'random 10 %', where: 'bucket < 100', allows: (i: number) => bucket[i]! < 100, qs: all },
  { name: 'random 1 %', where: 'bucket < 10', allows: (i: number) => bucket[i]! < 10, qs: all },
  { name: 'clustered 10 %', where: 'cluster < 2 && bucket < 800', allows: near, qs: all },
  { name: 'far 10 %', where: 'cluster < 2 && bucket < 800', allows: near, qs: away },
];
const rows: Record<string, unknown>[] = [];
for (const c of cases) {
  const ids: number[] = [];
  for (let i = 0; i < N; i++) if (c.allows(i)) ids.push(i);
  const allowed = Uint32Array.from(ids);
  const truth = c.qs.map((q: Float32Array) => truthOf(q, allowed));
  let cpuF = 0,
    cpuU = 0,
    hit = 0,
    want = 0;
  const modes: Record<string, number> = {};
  for (let round = 0; round < 3; round++) {
    for (let s = 0; s < c.qs.length; s += 10) {
      const chunk = c.qs.slice(s, s + 10);
      const runF = () => {
        const u0 = process.cpuUsage();
        chunk.forEach((q: Float32Array, j: number) => {
          const res = store.search({ vector: q, k: 10, where: c.where });
          if (round === 0) {
            modes[res.search_mode] = (modes[res.search_mode] ?? 0) + 1;
            for (const r of res.results)
              if (truth[s + j]!.has(String(Number((r as { record: { id: string } }).record.id)))) hit++;
            want += 10;
          }
        });
        const u = process.cpuUsage(u0);
        cpuF += u.user + u.system;
      };
      const runU = () => {
        const u0 = process.cpuUsage();
        for (const q of chunk) store.search({ vector: q, k: 10 });
        const u = process.cpuUsage(u0);
        cpuU += u.user + u.system;
      };
      if ((s / 10 + round) & 1) {
        runF();
        runU();
      } else {
        runU();
        runF();
      }
    }
  }
  const n = 3 * c.qs.length;
  const [caseName, share] = c.name.split(' ');
  rows.push({
    system: 'arkivector',
    n: N,
    dim: DIM,
    case: caseName,
    selectivity: Number(share) / 100,
    where: c.where,
    recall_at_10: hit / want,
    qps: (n * 1e6) / cpuF,
    qps_basis: 'per CPU second',
    unfiltered_qps: (n * 1e6) / cpuU,
    vs_unfiltered: cpuU / cpuF,
    search_modes: modes,
    load_avg: loadAvg(),
  });
  console.log(
    `${ROOT.padEnd(24)} ${c.name.padEnd(15)} recall ${(hit / want).toFixed(3)}  filtered ${Math.round((n * 1e6) / cpuF)} q/CPU-s  unfiltered ${Math.round((n * 1e6) / cpuU)}  ${(cpuU / cpuF).toFixed(2)}×  ${JSON.stringify(modes)}`,
  );
}
writeJson(args.out, rows);
