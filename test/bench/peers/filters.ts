// The filter cases of `npm run bench:peers -- --filters`, drawn as scripts/bench/engine.ts draws them: `random-10`
// and `random-1` (bucket < 100 and < 10: each base vector's bucket is floor(mulberry32(7)() × 1000), drawn
// in id order, so the allowed set is spread like the data), `clustered-10` (cluster < 2 && bucket < 800:
// two of the data's 16 clusters, ~10 % of the points) and `clustered-1` (cluster < 1 && bucket < 160, ~1 %),
// asked by queries from every cluster, so most queries lie away from the allowed set, and `far-10` / `far-1`
// (the same sets, asked only by the queries of the clusters outside them). Each case carries its condition
// in every peer's filter language; `freshWhere` spells arkivector's differently at every call.

import { mulberry32 } from '../../helpers/generators.ts';
import {
  type Dataset,
  type Job,
  K,
  log,
  measure,
  measuredRow,
  type Row,
  EF_SWEEP,
  type SystemName,
  sweep,
} from './common.ts';

export type SearchFn = (q: Float32Array, first: boolean) => ArrayLike<number> | Promise<ArrayLike<number>>;

export type FilterCase = {
  name: 'random-10' | 'random-1' | 'clustered-10' | 'clustered-1' | 'far-10' | 'far-1';
  /** arkivector's `where` (src/query grammar). */
  where: string;
  /** SQL (LanceDB / DataFusion, libSQL). */
  sql: string;
  /** Orama's `where`. */
  orama: Record<string, unknown>;
  /** Vectra's metadata filter (MongoDB-style). */
  vectra: Record<string, unknown>;
  allows: (bucket: number, cluster: number) => boolean;
  /** Which queries ask this case, by the query's own cluster; absent: every query. */
  asks?: (queryCluster: number) => boolean;
};

/** The points of the first `clusters` clusters whose bucket is below `limit`. */
const clusteredSet = (clusters: number, limit: number) => ({
  where: `cluster < ${clusters} && bucket < ${limit}`,
  sql: `cluster < ${clusters} AND bucket < ${limit}`,
  orama: { cluster: { lt: clusters }, bucket: { lt: limit } },
  vectra: { cluster: { $lt: clusters }, bucket: { $lt: limit } },
  allows: (b: number, c: number) => c < clusters && b < limit,
});

const randomSet = (limit: number) => ({
  where: `bucket < ${limit}`,
  sql: `bucket < ${limit}`,
  orama: { bucket: { lt: limit } },
  vectra: { bucket: { $lt: limit } },
  allows: (b: number) => b < limit,
});

export const FILTER_CASES: readonly FilterCase[] = [
  { name: 'random-10', ...randomSet(100) },
  { name: 'random-1', ...randomSet(10) },
  { name: 'clustered-10', ...clusteredSet(2, 800) },
  { name: 'clustered-1', ...clusteredSet(1, 160) },
  { name: 'far-10', ...clusteredSet(2, 800), asks: (qc) => qc >= 2 },
  { name: 'far-1', ...clusteredSet(1, 160), asks: (qc) => qc >= 1 },
];

/** The variant of arkivector's filtered rows whose filter text changes at every call ({@link freshWhere}). */
export const FRESH_FILTER = 'fresh-filter';

/**
 * The case's `where` spelt anew for call number `call`: led by call + 1 in binary, a space for each 0 and a
 * tab for each 1. The filter, its cost and its truth stay the case's, while the text, and so the compiled
 * filter and whatever the store keeps per filter, differs at every call (a memo per filter never helps).
 */
export function freshWhere(c: FilterCase, call: number): string {
  return (call + 1).toString(2).replace(/0/g, ' ').replace(/1/g, '\t') + c.where;
}

/**
 * The filter cases a `--filters` value names: every case for a bare `--filters` (value undefined or
 * ''), else the comma list.
 * @throws for a name that is no case
 */
export function parseFilterCases(value: string | undefined): FilterCase['name'][] {
  if (value === undefined || value === '') return FILTER_CASES.map((c) => c.name);
  const names = value.split(',');
  const unknown = names.filter((n) => !FILTER_CASES.some((c) => c.name === n));
  if (unknown.length > 0)
    throw new Error(`--filters: unknown ${unknown.join(', ')} (known: ${FILTER_CASES.map((c) => c.name).join(', ')})`);
  return [...new Set(names)] as FilterCase['name'][];
}

/**
 * The dataset a case is measured on: its queries (all, or those it `asks`, packed in order) and its truth.
 */
export function caseData(c: FilterCase, data: Dataset, dim: number): Dataset {
  const truth = data.filteredTruth?.[c.name];
  if (truth === undefined) throw new Error(`the dataset has no truth for ${c.name}`);
  const ids = data.caseQueries?.[c.name];
  if (ids === undefined) return { ...data, truth };
  const queries = new Float32Array(ids.length * dim);
  for (let i = 0; i < ids.length; i++) queries.set(data.queries.subarray(ids[i]! * dim, (ids[i]! + 1) * dim), i * dim);
  return { ...data, queries, truth };
}

/** scripts/bench/engine.ts's bucket per base id: floor(mulberry32(7)() × 1000), in id order. */
export function buckets(n: number): Int32Array {
  const rand = mulberry32(7);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(rand() * 1000);
  return out;
}

/** The allowed base ids of a case, ascending. */
export function allowedIds(c: FilterCase, data: Dataset): Int32Array {
  const out: number[] = [];
  const { bucket, cluster } = data;
  if (bucket === undefined || cluster === undefined) throw new Error('the dataset has no filter attributes');
  for (let i = 0; i < bucket.length; i++) if (c.allows(bucket[i]!, cluster[i]!)) out.push(i);
  return Int32Array.from(out);
}

/** A per-id test of a case, for systems that post-filter in the caller. */
export function allowsId(c: FilterCase, data: Dataset): (id: number) => boolean {
  const { bucket, cluster } = data;
  if (bucket === undefined || cluster === undefined) throw new Error('the dataset has no filter attributes');
  return (id) => c.allows(bucket[id]!, cluster[id]!);
}

/** The cases to run: all of them when the job asks for filters and the dataset has their truth. */
export function casesFor(job: Job, data: Dataset): FilterCase[] {
  if (job.filters !== true || data.filteredTruth === undefined) return [];
  return FILTER_CASES.filter((c) => data.filteredTruth![c.name] !== undefined);
}

/**
 * One filtered case swept over EF_SWEEP (stopping at SWEEP_STOP_RECALL, or once a point is slower than
 * the exact scan of the case: {@link sweep}), as rows.
 */
export async function filteredSweep(
  system: SystemName,
  job: Job,
  data: Dataset,
  c: FilterCase,
  point: (ef: number) => SearchFn | Promise<SearchFn>,
  options: { variant?: string; note?: string; efs?: readonly number[]; count?: number } = {},
): Promise<Row[]> {
  const cd = caseData(c, data, job.dim);
  const selectivity = allowedIds(c, data).length / job.n;
  const points = await sweep(
    async (ef) =>
      measure(`${system} ${c.name} ef=${ef}`, cd, job.dim, options.count ?? job.queries, await point(ef), cd.truth),
    options.efs ?? EF_SWEEP,
    c.name,
    `${c.name}${options.variant ? ` (${options.variant})` : ''} `,
  );
  return points.map((p) =>
    measuredRow(system, job, p, {
      ef: p.ef,
      selectivity,
      ...(p.stop !== undefined ? { sweep_stop: p.stop } : {}),
      ...caseFields(c, options),
    }),
  );
}

/** One filtered case measured once (an exact scan: no width to sweep), as a row with ef null. */
export async function filteredOnce(
  system: SystemName,
  job: Job,
  data: Dataset,
  c: FilterCase,
  fn: (q: Float32Array, first: boolean) => ArrayLike<number> | Promise<ArrayLike<number>>,
  options: { variant?: string; note?: string; count?: number } = {},
): Promise<Row> {
  const cd = caseData(c, data, job.dim);
  const selectivity = allowedIds(c, data).length / job.n;
  const m = await measure(`${system} ${c.name}`, cd, job.dim, options.count ?? job.queries, fn, cd.truth);
  log(
    `  ${c.name}${options.variant ? ` (${options.variant})` : ''}: recall@10 ${m.recall.toFixed(3)}, ${m.qps.toFixed(1)} QPS over ${m.count}${m.count < m.asked ? ` of ${m.asked} (time budget)` : ''} queries`,
  );
  return measuredRow(system, job, m, { selectivity, ...caseFields(c, options) });
}

/** The fields a filtered row adds: its case, and how it was measured when that is not the common way. */
function caseFields(c: FilterCase, options: { variant?: string; note?: string }): Partial<Row> {
  return {
    case: c.name,
    ...(options.variant ? { variant: options.variant } : {}),
    ...(options.note ? { note: options.note } : {}),
  };
}

/** Keeps the first K ids that pass (the caller's post-filter over a wider unfiltered answer). */
export function firstAllowed(ids: ArrayLike<number>, allows: (id: number) => boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < ids.length && out.length < K; i++) if (allows(ids[i]!)) out.push(ids[i]!);
  return out;
}
