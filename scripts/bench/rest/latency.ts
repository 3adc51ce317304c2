// Latency statistics of sequential calls: nearest-rank percentiles over every sample (no histogram
// buckets), so p99 of 1,000 calls is the 990th fastest.

/** The q-quantile (0 < q <= 1) of ascending `sorted` by nearest rank; NaN when empty. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}

export interface LatencySummary {
  calls: number;
  seconds: number;
  per_s: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
}

/**
 * Runs `call` `count` times one after another (after `warmup` untimed calls) and times each.
 * @param deadlineMs stop early (and report what was measured) once this much time has passed
 */
export async function timeSequential(
  call: (i: number) => Promise<void>,
  count: number,
  warmup: number,
  deadlineMs: number,
): Promise<LatencySummary> {
  for (let i = 0; i < warmup; i++) await call(i);
  const samples: number[] = [];
  const started = process.hrtime.bigint();
  const deadline = performance.now() + deadlineMs;
  for (let i = 0; i < count && performance.now() < deadline; i++) {
    const t0 = process.hrtime.bigint();
    await call(warmup + i);
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  samples.sort((a, b) => a - b);
  return {
    calls: samples.length,
    seconds,
    per_s: samples.length / seconds,
    p50_ms: percentile(samples, 0.5),
    p90_ms: percentile(samples, 0.9),
    p99_ms: percentile(samples, 0.99),
  };
}
