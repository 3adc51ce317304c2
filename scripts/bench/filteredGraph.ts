// `npm run bench -- filtered --graph`: the native engine's filtered paths, graph alone (no store):
// the ACORN-style walk (native/src/filteredSearch.h) at two widths, the exact scan of the allowed ids, and
// the planner's plan over them (`plan`, as src/engine/plan/filtered.ts chooses), against the unfiltered walk at
// the default width, for random, clustered and far allowed sets at 10 % and 1 %. The methods alternate in chunks of queries and each is
// timed in CPU time (the machine is shared), so the ratios to the unfiltered walk are side by side.
// Data as ARCHITECTURE.md §10.1 (clustered, 64-d latent); ground truth from the addon's exact scan of
// the allowed ids. Prints one line per case and method; --out writes the rows as JSON.
//
// Usage: npm run bench -- filtered --graph [--n N] [--dim D] [--queries Q] [--out FILE] [--graph-file FILE]
//   [--cases PREFIXES] [--efs WIDTHS] [--baseline ADDON]  (default 20k × 128; --graph-file keeps the built
//   graph between runs; --baseline FILE.node runs every method again on another build of the addon, e.g.
//   main's, loaded from the same graph file, in the same alternating chunks: old and new side by side)

import { existsSync } from 'node:fs';
import { clustered, mulberry32 } from '../../test/helpers/generators.ts';
import { benchArgs, numberOption } from './args.ts';
import { type AllowedSet, RawIndex } from './nativeCalls.ts';
import { log, writeJson } from './output.ts';

const args = benchArgs({
  graph: { type: 'boolean', default: false },
  n: { type: 'string' },
  dim: { type: 'string' },
  queries: { type: 'string' },
  out: { type: 'string' },
  cases: { type: 'string' },
  efs: { type: 'string' },
  'graph-file': { type: 'string' },
  baseline: { type: 'string' },
});
const N = numberOption(args.n, 20_000, 'n');
const DIM = numberOption(args.dim, 128, 'dim');
const NQ = numberOption(args.queries, 200, 'queries');
const OUT = args.out;
const ONLY = args.cases;
const EFS = (args.efs ?? '25,150').split(',').map(Number);
/** A graph file: loaded when it exists (built from the same data), else written after the build. */
const GRAPH = args['graph-file'];
const BASELINE = args.baseline;
if (BASELINE !== undefined && GRAPH === undefined)
  throw new Error('--baseline needs --graph-file (both builds load it)');
const K = 10;
/** The store's default width (ef_search 40 × EF_SEARCH_SCALE 2.5). */
const EF = 100;
const CHUNK = 20;
const ROUNDS = 3;

const data = clustered(N, DIM, 1, { latent: 64 });
const qgen = clustered(NQ, DIM, 2, { latent: 64 });
const rand = mulberry32(7);
const bucket = Array.from({ length: N }, () => Math.floor(rand() * 1000));
const params = { metric: 'cosine', dim: DIM, maxElements: N, m: 16, efConstruction: 64, seed: 100 } as const;
let t0 = performance.now();
const loaded = GRAPH !== undefined && existsSync(GRAPH);
const index = new RawIndex(loaded ? { ...params, path: GRAPH } : params);
if (!loaded) for (let i = 0; i < N; i++) index.add(data.vectors[i]!, i);
if (GRAPH !== undefined && !loaded) index.save(GRAPH);
const indexes = [{ prefix: '', index }];
if (BASELINE !== undefined)
  indexes.push({ prefix: 'base ', index: new RawIndex({ ...params, path: GRAPH! }, BASELINE) });
log(`filtered --graph: n=${N} dim=${DIM} queries=${NQ}, build ${((performance.now() - t0) / 1000).toFixed(0)} s`);

const labelSlot = Int32Array.from({ length: N }, (_, i) => i);

type Case = { name: string; allows: (i: number) => boolean; queries: Float32Array[] };
const all = qgen.vectors;
const away = qgen.vectors.filter((_, q) => qgen.cluster[q]! >= 2);
const cases: Case[] = [
  { name: 'random 10 %', allows: (i) => bucket[i]! < 100, queries: all },
  { name: 'random 1 %', allows: (i) => bucket[i]! < 10, queries: all },
  { name: 'clustered 10 %', allows: (i) => data.cluster[i]! < 2 && bucket[i]! < 800, queries: all },
  { name: 'clustered 1 %', allows: (i) => data.cluster[i]! < 1 && bucket[i]! < 160, queries: all },
  { name: 'far 10 %', allows: (i) => data.cluster[i]! < 2 && bucket[i]! < 800, queries: away },
  { name: 'far 1 %', allows: (i) => data.cluster[i]! < 1 && bucket[i]! < 160, queries: away },
];

type Method = { name: string; run: (q: Float32Array) => number[] };
const rows: Record<string, unknown>[] = [];
t0 = performance.now();
for (const c of cases) {
  if (ONLY !== undefined && !ONLY.split(',').some((w) => c.name.startsWith(w))) continue;
  const allowedIds: number[] = [];
  for (let i = 0; i < N; i++) if (c.allows(i)) allowedIds.push(i);
  const candidates = Uint32Array.from(allowedIds);
  const bits = new Uint8Array((N + 7) >>> 3);
  for (const i of allowedIds) bits[i >>> 3]! |= 1 << (i & 7);
  const passing = allowedIds.length;
  const qs = c.queries.slice(0, NQ);
  const truth = qs.map((q) => new Set(index.exact(q, K, candidates)));
  const allowed: AllowedSet = { bits, labelSlot, passing };
  // The planner's choices for the ACORN walk (src/engine/plan/filtered.ts and walk.ts), with the store's default
  // width and k 10: the exact scan for small sets, the post-filter where it costs one unfiltered search,
  // else the walk, narrowed by the allowed share where its descent lands among allowed elements, stopped
  // where it does not, answered then by the exact scan (within reach of it).
  const threshold = Math.max(1000, 40 * EF);
  const postWide = Math.ceil((2 * K * N) / passing);
  const farEf = passing <= 16 * threshold ? 0 : Math.ceil(EF * 1.5);
  const planExact: Record<string, number> = {};
  const methodsOf = ({ prefix, index }: (typeof indexes)[number]): Method[] => {
    const exactRun = (q: Float32Array): number[] => index.exact(q, K, candidates);
    const postFilter = (q: Float32Array): number[] => index.search(q, postWide, EF).filter(c.allows).slice(0, K);
    return [
      {
        name: `${prefix}unfiltered`,
        run: (q) => index.search(q, K, EF),
      },
      ...EFS.map(
        (ef): Method => ({
          name: `${prefix}acorn ef ${ef}`,
          run: (q) => index.filtered(q, K, ef, allowed),
        }),
      ),
      { name: `${prefix}exact`, run: exactRun },
      {
        name: `${prefix}plan`,
        run: (q) => {
          if (passing <= threshold) {
            planExact[prefix] = (planExact[prefix] ?? 0) + 1;
            return exactRun(q);
          }
          if (postWide <= EF) {
            const got = postFilter(q);
            if (got.length >= K) return got;
          }
          const walked = index.filtered(q, K, EF, allowed, farEf, 2.5);
          if (walked.length >= K) return walked;
          planExact[prefix] = (planExact[prefix] ?? 0) + 1;
          return exactRun(q);
        },
      },
    ];
  };
  const methods = indexes.flatMap(methodsOf);
  const cpu = methods.map(() => 0);
  const found = methods.map(() => 0);
  for (let round = 0; round < ROUNDS; round++) {
    for (let s = 0; s < qs.length; s += CHUNK) {
      const order = methods.map((_, m) => (((s / CHUNK + round) & 1) === 0 ? m : methods.length - 1 - m));
      for (const m of order) {
        const u0 = process.cpuUsage();
        for (let i = s; i < Math.min(qs.length, s + CHUNK); i++) {
          const got = methods[m]!.run(qs[i]!);
          if (round === 0) for (const l of got) if (truth[i]!.has(l)) found[m]!++;
        }
        const u = process.cpuUsage(u0);
        cpu[m]! += (u.user + u.system) / 1000;
      }
    }
  }
  const qps = cpu.map((ms) => (ROUNDS * qs.length * 1000) / ms);
  const want = truth.reduce((a, t) => a + Math.min(K, t.size), 0);
  methods.forEach((m, i) => {
    const plan = m.name.endsWith('plan')
      ? (planExact[m.name.slice(0, -'plan'.length)] ?? 0) / (ROUNDS * qs.length)
      : undefined;
    const row = {
      case: c.name,
      passing,
      queries: qs.length,
      method: m.name,
      recall_at_10: found[i]! / want,
      qps_per_cpu_s: qps[i]!,
      vs_unfiltered: qps[i]! / qps[0]!,
      ...(plan !== undefined ? { plan_exact_share: plan } : {}),
    };
    rows.push(row);
    log(
      `${c.name.padEnd(15)} ${m.name.padEnd(20)} recall ${row.recall_at_10.toFixed(3)}  ${Math.round(row.qps_per_cpu_s)
        .toString()
        .padStart(
          7,
        )} q/CPU-s  ${row.vs_unfiltered.toFixed(2)}×${plan !== undefined ? `  (exact ${Math.round(100 * plan)} %)` : ''}`,
    );
  });
}
log(`measured in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
writeJson(OUT, rows);
