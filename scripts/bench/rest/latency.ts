// Latency statistics of timed calls: nearest-rank percentiles over every sample (no histogram buckets),
// so p99 of 1,000 calls is the 990th fastest. Calls are made one after another, or by several workers
// at once (each one after another) for a fixed time.

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

function summarize(samples: number[], seconds: number): LatencySummary {
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

/** Milliseconds `call` took. */
async function timed(call: () => Promise<void>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await call();
  return Number(process.hrtime.bigint() - t0) / 1e6;
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
  for (let i = 0; i < count && performance.now() < deadline; i++) samples.push(await timed(() => call(warmup + i)));
  return summarize(samples, Number(process.hrtime.bigint() - started) / 1e9);
}

/**
 * Each of `workers` calls its function one call after another until `durationMs` has passed (a call
 * started before then is finished and counted); every call is timed. The rate is over the whole span,
 * until the last worker's last call ended.
 * @param workers one function per concurrent caller, given the caller's running call number
 */
export async function timeConcurrent(
  workers: readonly ((i: number) => Promise<void>)[],
  durationMs: number,
): Promise<LatencySummary> {
  const samples: number[] = [];
  const started = process.hrtime.bigint();
  const deadline = performance.now() + durationMs;
  await Promise.all(
    workers.map(async (call) => {
      for (let i = 0; performance.now() < deadline; i++) samples.push(await timed(() => call(i)));
    }),
  );
  return summarize(samples, Number(process.hrtime.bigint() - started) / 1e9);
}
