// The node's own recall estimate per collection, for /v1/status and the console: the
// recall@10 of the store's default unfiltered search against the exact answer, measured on a sample of
// the collection's own records as queries (leave-one-out: the record itself is dropped from both
// answers, so the free self-match does not count). Measured in idle time: one sampled query per turn of
// the event loop (setImmediate), started by a status read when the estimate is missing or stale (the
// collection grew or shrank by RECALL_STALE_CHANGE since, or RECALL_MAX_AGE_MS passed), and reported from
// the cache meanwhile: a status call never waits for it.

import type { SearchMode } from './searchTypes.ts';

/** Sampled queries per estimate: enough neighbours compared for a binomial error of a few hundredths. */
export const RECALL_SAMPLE_QUERIES = 32;
/** The estimate is refreshed once the live count moved by this share… */
export const RECALL_STALE_CHANGE = 0.1;
/** …or after this long (a collection churning in place keeps its size). */
export const RECALL_MAX_AGE_MS = 10 * 60_000;
/** The neighbours compared per query. */
export const RECALL_K = 10;

/** What a store offers the estimator: one leave-one-out probe (see CollectionStore.recallProbe). */
export interface RecallProbeSource {
  readonly size: number;
  recallProbe(sample: number, k: number): { found: number; wanted: number; mode: SearchMode } | undefined;
}

export type RecallEstimate = {
  /** Share of the exact 10 nearest the default search returned, over the sampled queries. */
  recall_at_10: number;
  queries: number;
  /** Live records when measured. */
  records: number;
  /** `exact`: the collection is small enough that every unfiltered search scans exactly (recall 1). */
  search_mode: SearchMode;
  /** null: not measured (recall 1 by construction, as for a collection scanned exactly). */
  measured_at: string | null;
};

type State = { estimate?: RecallEstimate; measuredAt?: number; running?: Promise<RecallEstimate | undefined> };
const states = new WeakMap<RecallProbeSource, State>();

function stateOf(store: RecallProbeSource): State {
  let s = states.get(store);
  if (s === undefined) states.set(store, (s = {}));
  return s;
}

function stale(s: State, size: number, now: number): boolean {
  const e = s.estimate;
  if (e === undefined || s.measuredAt === undefined) return true;
  if (now - s.measuredAt >= RECALL_MAX_AGE_MS) return true;
  return Math.abs(size - e.records) > RECALL_STALE_CHANGE * Math.max(1, e.records);
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Measures the estimate now, one query per event-loop turn.
 * @returns the estimate, or undefined when the collection holds too few records (≤ 10)
 */
export function measureRecall(store: RecallProbeSource): Promise<RecallEstimate | undefined> {
  const s = stateOf(store);
  s.running ??= (async () => {
    try {
      let found = 0;
      let wanted = 0;
      let queries = 0;
      let hnsw = false;
      const records = store.size;
      for (let i = 0; i < RECALL_SAMPLE_QUERIES; i++) {
        await nextTurn();
        const p = store.recallProbe(i, RECALL_K);
        if (p === undefined) break;
        found += p.found;
        wanted += p.wanted;
        queries++;
        if (p.mode === 'hnsw') hnsw = true;
      }
      if (queries === 0 || wanted === 0) return undefined;
      const now = Date.now();
      s.estimate = {
        recall_at_10: found / wanted,
        queries,
        records,
        search_mode: hnsw ? 'hnsw' : 'exact',
        measured_at: new Date(now).toISOString(),
      };
      s.measuredAt = now;
      return s.estimate;
    } finally {
      s.running = undefined;
    }
  })();
  return s.running;
}

/**
 * The cached estimate (null before the first one), starting a measurement in the background when it is
 * missing or stale.
 */
export function recallEstimate(store: RecallProbeSource): RecallEstimate | null {
  const s = stateOf(store);
  if (s.running === undefined && store.size > RECALL_K && stale(s, store.size, Date.now()))
    void measureRecall(store).catch(() => undefined);
  return s.estimate ?? null;
}
