// The engine suite's timing: exact ground truth, recall@10, a timed pass over the queries (with a time
// budget), and two systems side by side in alternating chunks (scripts/bench/engine.ts explains why).
import type { ExactSource } from '../../src/engine/exact.ts';
import { exactTopK } from '../../src/engine/exact.ts';
import { type CollectionStore, METRIC_OPS } from '../../src/engine/index.ts';
import { log, progress } from './output.ts';

export const K = 10;
export const WARMUP = 20;
/** Queries per chunk of a side-by-side round: short enough that a load spike hits both systems. */
const SIDE_BY_SIDE_CHUNK = 25;
/** A measurement with a time budget answers at least this many queries. */
export const BUDGET_MIN_QUERIES = 20;
const tty = process.stderr.isTTY === true;

/** Exact top-10 ids over the allowed base vectors (the halfvec-rounded values both systems index). */
export function groundTruth(
  src: ExactSource,
  queries: Float32Array[],
  allowed: Int32Array | undefined,
  label: string,
): Int32Array[] {
  const out: Int32Array[] = [];
  for (let i = 0; i < queries.length; i++) {
    out.push(Int32Array.from(exactTopK(METRIC_OPS.cosine, queries[i]!, src, allowed, K).slots));
    progress(label, i + 1, queries.length);
  }
  return out;
}

/**
 * What a timed search returns: raw labels, or the store's answer, whose ids are read only after the
 * clock stops (turning hits into numbers is the bench's bookkeeping, not part of a search).
 */
export type Answer = ArrayLike<number> | ReturnType<CollectionStore['search']>;
const idsOf = (got: Answer): ArrayLike<number> =>
  'results' in got ? got.results.map((r) => Number(r.record.id)) : got;

export function recallOf(answer: Answer, truth: Int32Array): number {
  const got = idsOf(answer);
  let hit = 0;
  for (let i = 0; i < got.length; i++) if (truth.includes(got[i]!)) hit++;
  return hit / truth.length;
}

/**
 * Runs `fn` over the queries (after a warm-up) and returns QPS and mean recall; with `budgetS`, stops
 * once that many seconds have gone by and BUDGET_MIN_QUERIES were answered (`count` says how many).
 */
export function measure(
  label: string,
  queries: Float32Array[],
  truth: Int32Array[],
  fn: (q: Float32Array, i: number) => Answer,
  budgetS = Number.POSITIVE_INFINITY,
): { qps: number; recall: number; count: number } {
  for (let i = 0; i < Math.min(WARMUP, queries.length); i++) fn(queries[i]!, i);
  const got: Answer[] = [];
  const t0 = performance.now();
  for (let i = 0; i < queries.length; i++) {
    got.push(fn(queries[i]!, i));
    if (tty && i % 50 === 49) progress(label, i + 1, queries.length);
    if (i + 1 >= BUDGET_MIN_QUERIES && i + 1 < queries.length && performance.now() - t0 > budgetS * 1000) {
      log(`${label}: time budget (${budgetS} s) spent, ${i + 1} of ${queries.length} queries answered`);
      break;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  progress(label, got.length, got.length);
  let r = 0;
  for (let i = 0; i < got.length; i++) r += recallOf(got[i]!, truth[i]!);
  return { qps: got.length / seconds, recall: r / got.length, count: got.length };
}

/**
 * Two systems over the same queries, side by side (see the header): each system's best-round QPS and
 * mean recall, and the median over rounds of b's queries per CPU second ÷ a's.
 */
export function sideBySide(
  label: string,
  queries: Float32Array[],
  truth: Int32Array[],
  a: (q: Float32Array, i: number) => Answer,
  b: (q: Float32Array, i: number) => Answer,
  rounds: number,
): { a: { qps: number; recall: number }; b: { qps: number; recall: number }; ratio: number } {
  for (let i = 0; i < Math.min(WARMUP, queries.length); i++) {
    a(queries[i]!, i);
    b(queries[i]!, i);
  }
  const gotA: Answer[] = [];
  const gotB: Answer[] = [];
  let bestA = 0;
  let bestB = 0;
  const ratios: number[] = [];
  const cpuMs = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  for (let round = 0; round < rounds; round++) {
    let msA = 0;
    let msB = 0;
    let cpuA = 0;
    let cpuB = 0;
    for (let start = 0, chunk = 0; start < queries.length; start += SIDE_BY_SIDE_CHUNK, chunk++) {
      const end = Math.min(queries.length, start + SIDE_BY_SIDE_CHUNK);
      for (let turn = 0; turn < 2; turn++) {
        const first = (chunk + round + turn) % 2 === 0;
        const fn = first ? a : b;
        const got = first ? gotA : gotB;
        const t0 = performance.now();
        const c0 = cpuMs();
        for (let i = start; i < end; i++) {
          const ids = fn(queries[i]!, i);
          if (round === 0) got[i] = ids;
        }
        const cpu = cpuMs() - c0;
        const ms = performance.now() - t0;
        if (first) {
          msA += ms;
          cpuA += cpu;
        } else {
          msB += ms;
          cpuB += cpu;
        }
      }
    }
    bestA = Math.max(bestA, (1000 * queries.length) / msA);
    bestB = Math.max(bestB, (1000 * queries.length) / msB);
    ratios.push(cpuA / cpuB);
    progress(label, round + 1, rounds);
  }
  ratios.sort((x, y) => x - y);
  const recall = (got: Answer[]): number =>
    got.reduce((sum, ids, i) => sum + recallOf(ids, truth[i]!), 0) / queries.length;
  return {
    a: { qps: bestA, recall: recall(gotA) },
    b: { qps: bestB, recall: recall(gotB) },
    ratio: ratios[ratios.length >> 1]!,
  };
}
