// The search planner: chooses between an exact scan and the HNSW graph for one query and guarantees
// that k results come back whenever k live records pass the filter. Called by CollectionStore.search
// (and through it hybridSearch). Reports its choice as `search_mode`.
//
// Plan (ARCHITECTURE.md §10.4):
//   1. Estimate how many records pass from the attribute indexes (exact for single conditions, an upper
//      bound for AND). Nothing passes → empty answer.
//   2. Few pass (≤ exactThreshold(dim), ~1M multiply-adds, and ≤ √(2 · ef · n), where the graph's
//      ~ef·n/passing filtered steps start to cost less) → enumerate them and scan exactly. For an
//      AND whose bound is up to 16× that, enumerate too: the true count is often far lower.
//   3. A broad set (≥ 5 % pass, and ≤ 1000 neighbours needed): one unfiltered graph search of
//      2k / share neighbours (at least ef wide), filtered afterwards. Enough pass → that is the answer
//      (`hnsw`); none pass and the scan is affordable → the set lies away from the query: exact; some
//      → step 5 (this search stands in for the probe of step 4).
//   4. If the exact scan would still be affordable (passing ≤ 8× the threshold), probe first: an
//      unfiltered graph search of a few dozen neighbours, sized so that ~4 of them should pass when
//      the allowed set is spread like the data. None pass → the set lies away from the query, where
//      the filtered walk below would crawl the graph for tens of milliseconds to reach it: enumerate
//      the allowed slots and scan them exactly instead. The probe costs about a tenth of a filtered
//      walk; a spread set misread as far (~2 %) only costs a scan the rescue rule would accept anyway.
//      A filter (the same compiled Cond, i.e. a repeated `where`) found spread by 8 probes in a row is
//      then probed only every 8th query, until a probe or the walk finds it far again: random filters
//      keep ~1 % of the probe's cost, and a far query that slips through is still caught by step 6.
//   5. Otherwise search the graph with the filter applied during traversal, at a width scaled down
//      by the share that passes (2 · ef · share, between 2k and ef: the walk stops after that many
//      passing nodes, so its work grows like width / share). If it returns fewer than min(k, passing),
//      widen ×4 up to HNSW_MAX_WIDEN_EF, then fall back to exact.
//   6. The traversal filter collapses when the allowed set lies away from the query (recall 0.71–0.89
//      in ARCHITECTURE.md §10.4), and it shows: the filter is consulted far more often per result than for an
//      allowed set spread like the data. Then, if the exact scan is affordable (≤ 8× the threshold)
//      or would have cost no more than the calls already made, the answer is recomputed exactly;
//      otherwise ef widens (×4) until the graph reaches the set.
//
// A graph whose filtered walk moves through allowed elements only, from entry points inside the set
// (the native engine's ACORN-style walk, `graph.filteredWalk === 'acorn'`, ARCHITECTURE.md §10.8) is
// planned apart (`acornPlan`): the exact scan (in the same SIMD kernels) takes the sets it reads for no
// more than the walk costs at that width (acornScanLimit.ts); the post-filter of step 3 only
// sets broad enough that it costs one unfiltered search; everything else goes to the walk, which tells
// by itself whether the set lies around the query: its unfiltered descent lands among allowed elements
// (its two-hop neighbourhood holds a quarter of the allowed elements the set's share predicts) or not.
// Landed (a set spread like the data, or the query inside a correlated set), the walk's width follows the
// allowed share around the landing (× ACORN_NEAR_SCALE): a sparse set is walked narrow at recall ~0.99,
// a dense one at the whole width (README "Native engine"); not landed, the set lies away from the query, where the walk's recall is 0.87–0.93
// even at twice the width: the exact scan answers when it is within ACORN_FAR_EXACT_FACTOR × the threshold,
// else the walk at ef × ACORN_EF_SCALE. The test depends only on the query and the set (no memo of
// earlier queries), so replicas answer alike. A short answer goes to the exact scan (never under-filled).

import { acornExactLimit } from './acornScanLimit.ts';
import {
  allowedBits as enumerateBits,
  allowedSlots as enumerateAllowed,
  estimate,
  type IndexSource,
} from './filter/plan.ts';
import { buildPredicate, type RowSource } from './filter/predicate.ts';
import type { Cond } from './filter/types.ts';
import type { Graph, GraphFilter, GraphHits } from './hnsw/graph.ts';
import { exactThreshold, HNSW_MAX_WIDEN_EF, widthGrowth } from './hnsw/params.ts';
import type { MetricOps } from './metrics.ts';

/** How a vector search was answered: an exact scan or the HNSW graph. */
export const SEARCH_MODES = ['exact', 'hnsw'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];

/** What the planner reads from the store for one query. */
export type PlannerContext = IndexSource &
  AllowedMemo & {
    ops: MetricOps;
    graph: Graph;
    /** Slots in use or reserved (the bitsets' size). */
    slotCount: number;
    /** hnswlib label → slot; −1 for labels not visible (deleted, or inserted by an uncommitted block). */
    labelSlot: Int32Array;
    /** slot → label (−1 for a free slot). */
    slotLabel: Int32Array;
    /** A block is being applied: the graph holds labels readers must not see yet. */
    pending: boolean;
    rows: RowSource;
  };

export type PlannedResult = { slots: number[]; distances: number[]; mode: SearchMode };

/**
 * A filter's enumerations kept for reuse: by the store for as long as nothing it holds changes (one block),
 * so a filter repeated query after query is enumerated once (compiled filters are cached by text, so a
 * repeated `where` is the same Cond); or by one plannedOnThreads call, whose runs replay the plan.
 * Whoever keeps them must drop them when the records or their attributes change.
 */
export type AllowedMemo = {
  allowedMemo?: Map<Cond, Int32Array>;
  bitsMemo?: Map<Cond, { bits: Uint8Array; count: number }>;
};

/** Enumerations a memo keeps per kind: the oldest goes first beyond. */
export const ENUMERATIONS_KEPT = 8;

/**
 * `make()` once per condition in `memo` (when there is one). What it makes is shared by every query that
 * asks while the memo lasts: readers never write into it.
 */
function once<V>(memo: Map<Cond, V> | undefined, cond: Cond, make: () => V): V {
  if (memo === undefined) return make();
  let value = memo.get(cond);
  if (value === undefined) {
    value = make();
    if (memo.size >= ENUMERATIONS_KEPT) memo.delete(memo.keys().next().value!);
    memo.set(cond, value);
  }
  return value;
}

/** The allowed slots of a filter (filter/plan.ts), enumerated once while the memo lasts. */
function allowedSlots(cond: Cond, src: IndexSource & AllowedMemo, predicate: (slot: number) => boolean): Int32Array {
  return once(src.allowedMemo, cond, () => enumerateAllowed(cond, src, predicate));
}

/**
 * How many slots a filter allows, from the ordered list a search of this block enumerated, else
 * enumerated into the memo (a count is often followed by a search with the same filter).
 * @param cond a filter that is neither a leaf (leafCount answers those) nor everything
 * @returns the exact count
 */
export function allowedCount(cond: Cond, src: IndexSource & AllowedMemo, predicate: (slot: number) => boolean): number {
  return allowedSlots(cond, src, predicate).length;
}

/** The allowed slots of a filter as a bitset and its count (filter/plan.ts), made once while the memo lasts. */
function allowedBits(
  cond: Cond,
  src: IndexSource & AllowedMemo,
  predicate: (slot: number) => boolean,
  slotCount: number,
): { bits: Uint8Array; count: number } {
  return once(src.bitsMemo, cond, () => enumerateBits(cond, src, predicate, slotCount));
}

/**
 * Enumerate an AND whose bound is at most this many times the exact limit: its branches meet through
 * bitsets (filter/plan.ts), and its true count is often far below the bound, so the exact scan it then
 * takes costs less than the post-filter and the walk's landing test it would otherwise go through.
 */
const AND_ENUMERATE_FACTOR = 16;
/** The post-filter oversamples so that this many times k of its neighbours should pass. */
const POST_OVERSAMPLE = 2;

/**
 * ACORN plan: a set away from the query is scanned exactly up to this many times the scan's threshold
 * (64,000 records at the default width). At 8 a clustered set of half of 100k × 384 was walked instead, at
 * recall@10 0.872 (0.12× unfiltered); at 16 it is scanned, at 0.984 (0.07×), `npm run bench`, 2026-12-02.
 */
const ACORN_FAR_EXACT_FACTOR = 16;
/** ACORN plan: the walk's width for a set away from the query that the exact scan cannot afford, × ef. */
const ACORN_EF_SCALE = 1.5;
/**
 * ACORN plan: where the walk's descent lands among allowed elements, its width is ef × the allowed share
 * around the landing × this (at least 2k): a random 10 % set is walked at a quarter of ef (recall 0.99),
 * the dense part of a clustered set around a query inside it at the whole width.
 */
const ACORN_NEAR_SCALE = 2.5;

/**
 * ACORN plan: the width of step 3's unfiltered search, which must find its `oversample` nearest, not only
 * the k the default width is tuned for. Up to WIDTH_GROWTH_FROM that default holds (at 100k a set is
 * post-filtered only from a fifth of the records); above, the default grows with the collection
 * (widthGrowth) but the depth of `oversample` neighbours needs more: the width gains oversample ×
 * (1 − 1 / widthGrowth(live)). At 1M × 128 a random 10 % set (oversample 200 at ef 398) was post-filtered
 * at recall 0.940 at ef, 0.972 at 1.5 × ef (0.69× unfiltered), 0.994 at 2.5 × ef (0.45×), 2026-12-02.
 * A function of the live count and the allowed count, so replicas answer alike.
 * @param ef the search's width
 * @param oversample neighbours the post-filter takes
 * @param live the collection's live records
 * @returns the width, from ef to ef + oversample
 */
export function postFilterWidth(ef: number, oversample: number, live: number): number {
  return Math.max(ef, Math.ceil(ef + oversample * (1 - 1 / widthGrowth(live))));
}

function toSlots(ctx: PlannerContext, labels: number[], distances: number[], mode: SearchMode): PlannedResult {
  const labelSlot = ctx.labelSlot;
  // hnswlib's arrays are ours: map labels to slots in place, dropping the invisible ones.
  let m = 0;
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i]!;
    const s = label < labelSlot.length ? labelSlot[label]! : -1;
    if (s < 0) continue;
    labels[m] = s;
    distances[m++] = distances[i]!;
  }
  // Only when a label was dropped: setting an array's length is a call into the runtime.
  if (m < labels.length) {
    labels.length = m;
    distances.length = m;
  }
  return { slots: labels, distances, mode };
}

/**
 * Step 3's post-filter: the first k passing slots among an unfiltered search's `wide` nearest (fewer
 * when fewer pass). Still `hnsw`: the graph answered, the filter only picked its results.
 */
function postFiltered(
  ctx: PlannerContext,
  query: Float32Array,
  k: number,
  wide: number,
  ef: number,
  predicate: (slot: number) => boolean,
): PlannedResult {
  const hits = ctx.graph.search(query, wide, ef);
  const labels = hits.labels;
  const distances = hits.distances;
  const labelSlot = ctx.labelSlot;
  let m = 0;
  for (let i = 0; i < labels.length && m < k; i++) {
    const label = labels[i]!;
    const slot = label < labelSlot.length ? labelSlot[label]! : -1;
    if (slot < 0 || !predicate(slot)) continue;
    labels[m] = slot;
    distances[m++] = distances[i]!;
  }
  labels.length = m;
  distances.length = m;
  return { slots: labels, distances, mode: 'hnsw' };
}

/**
 * Step 2's enumeration: the allowed slots when the estimate is within the threshold, or within
 * AND_ENUMERATE_FACTOR × it for an AND (whose bound is often far above the true count); else undefined.
 */
function enumerateSmall(
  ctx: PlannerContext,
  cond: Cond,
  predicate: (slot: number) => boolean,
  est: number,
  threshold: number,
): Int32Array | undefined {
  if (est <= threshold || (cond.t === 'and' && est <= threshold * AND_ENUMERATE_FACTOR))
    return allowedSlots(cond, ctx, predicate);
  return undefined;
}

/** A bitset over slots 0 … slotCount − 1 with the given slots set. */
function slotBits(slots: Int32Array, slotCount: number): Uint8Array {
  const bits = new Uint8Array((slotCount + 7) >>> 3);
  for (let i = 0; i < slots.length; i++) {
    const s = slots[i]!;
    bits[s >>> 3]! |= 1 << (s & 7);
  }
  return bits;
}

/**
 * The exact k nearest live records (the scan the planner falls back to), in the graph's kernels when it
 * has them: the reference the recall estimate compares the planned search with.
 */
export function exactSearch(ctx: PlannerContext, query: Float32Array, k: number): PlannedResult {
  return exact(ctx, query, undefined, k);
}

/**
 * The first graph call of an unfiltered plan, for a caller that makes it on a thread (Graph.searchAsync,
 * exactAsync) and hands its hits to `plannedSearch` as `first`: the exact scan of every label, or the
 * walk at `width`. Undefined when the plan starts otherwise (a filter, a block staged, nothing live, an
 * engine without searches on threads).
 */
export type FirstCall = { exact: true } | { exact: false; width: number };

export function unfilteredFirstCall(
  ctx: PlannerContext,
  dim: number,
  k: number,
  ef: number,
  cond: Cond | undefined,
): FirstCall | undefined {
  if ((cond !== undefined && cond.t !== 'all') || ctx.pending || ctx.liveCount === 0) return undefined;
  if (ctx.liveCount <= exactThreshold(dim)) return { exact: true };
  return { exact: false, width: Math.max(ef, k) };
}

function exact(
  ctx: PlannerContext,
  query: Float32Array,
  allowed: Int32Array | undefined,
  k: number,
  first?: GraphHits,
): PlannedResult {
  // The graph scans its own vectors (binary16 in SIMD; the store keeps no other copy), over the allowed
  // slots' labels, or the committed ones while a block is staged.
  let candidates: Uint32Array | undefined;
  const slotLabel = ctx.slotLabel;
  if (allowed === undefined && ctx.pending) {
    // A staged block's labels are in the graph: scan the committed slots' labels only.
    const labels: number[] = [];
    ctx.forEachLive((s) => labels.push(slotLabel[s]!));
    candidates = Uint32Array.from(labels);
  } else if (allowed !== undefined) {
    candidates = new Uint32Array(allowed.length);
    for (let i = 0; i < allowed.length; i++) candidates[i] = slotLabel[allowed[i]!]!;
  }
  const hits = first ?? ctx.graph.exact(query, k, candidates);
  return toSlots(ctx, hits.labels, hits.distances, 'exact');
}

/**
 * k nearest live records passing a filter.
 * @param ctx the store's indexes and graph
 * @param query float32 query (length = dim)
 * @param k results wanted (≥ 1)
 * @param ef hnswlib search width (see effectiveEf)
 * @param cond compiled filter, or undefined
 * @param first the hits of the plan's first graph call, already made (unfilteredFirstCall)
 * @returns slots and pgvector distances, nearest first, and the mode used
 * @example plannedSearch(ctx, q, 10, 100, compileWhere('stars > 3', attrs))
 */
export function plannedSearch(
  ctx: PlannerContext,
  query: Float32Array,
  k: number,
  ef: number,
  cond: Cond | undefined,
  first?: GraphHits,
): PlannedResult {
  const n = ctx.liveCount;
  if (n === 0) return { slots: [], distances: [], mode: 'exact' };

  if (cond === undefined || cond.t === 'all') {
    if (n <= exactThreshold(query.length)) return exact(ctx, query, undefined, k, first);
    // Only while a block is half-applied does the graph hold labels to hide; otherwise no filter.
    const visible: GraphFilter | undefined = ctx.pending ? { labelSlot: ctx.labelSlot } : undefined;
    const want = Math.min(k, n);
    let made = first;
    for (let width = ef; ; width = Math.min(width * 4, HNSW_MAX_WIDEN_EF)) {
      const hits = made ?? ctx.graph.search(query, k, Math.max(width, k), visible);
      made = undefined;
      const res = toSlots(ctx, hits.labels, hits.distances, 'hnsw');
      if (res.slots.length >= want) return res;
      if (width >= HNSW_MAX_WIDEN_EF) break;
    }
    return exact(ctx, query, undefined, k);
  }

  return acornPlan(ctx, query, k, ef, cond);
}

/**
 * plannedSearch for a graph with the ACORN-style walk (see the header): exact for small sets, the
 * post-filter for broad ones, else the walk, sized by the allowed share where it lands among allowed
 * elements and replaced by the exact scan where it does not (within reach).
 */
function acornPlan(ctx: PlannerContext, query: Float32Array, k: number, ef: number, cond: Cond): PlannedResult {
  const n = ctx.liveCount;
  const predicate = buildPredicate(cond, ctx.rows);
  const est = estimate(cond, ctx);
  if (est === 0) return { slots: [], distances: [], mode: 'exact' };
  const threshold = acornExactLimit(ef);
  let allowed = enumerateSmall(ctx, cond, predicate, est, threshold);
  if (allowed !== undefined && allowed.length <= threshold) return exact(ctx, query, allowed, k);
  const passing = allowed?.length ?? est;
  const labelSlot = ctx.labelSlot;

  // Step 3, only where it costs one unfiltered search: ~POST_OVERSAMPLE × k of ef neighbours should pass.
  const oversample = Math.ceil((POST_OVERSAMPLE * k * n) / passing);
  if (oversample <= ef) {
    const post = postFiltered(ctx, query, k, oversample, postFilterWidth(ef, oversample, n), predicate);
    if (post.slots.length >= Math.min(k, passing)) return post;
  }

  let bits: Uint8Array | undefined;
  let bitCount: number | undefined;
  const enumerate = (): Int32Array => {
    allowed ??= allowedSlots(cond, ctx, predicate);
    return allowed;
  };
  // Away from the query, the scan answers when within reach; the walk stops at its landing test then.
  const farEf = passing <= threshold * ACORN_FAR_EXACT_FACTOR ? 0 : Math.ceil(ef * ACORN_EF_SCALE);
  const allowedBitset = (): Uint8Array => {
    if (bits !== undefined) return bits;
    if (allowed !== undefined) {
      bits = slotBits(allowed, ctx.slotCount);
    } else {
      const made = allowedBits(cond, ctx, predicate, ctx.slotCount);
      bits = made.bits;
      bitCount = made.count;
    }
    return bits;
  };
  const filter: GraphFilter = {
    labelSlot,
    allowed: {
      // Enumerated once per query, as a bitset the walk takes whole (straight from the indexes: the
      // ordered list is made only if the exact scan is needed after all).
      bits: allowedBitset,
      count: passing,
      farEf: farEf === 0 ? 0 : Math.min(HNSW_MAX_WIDEN_EF, Math.max(k, farEf)),
      nearScale: ACORN_NEAR_SCALE,
    },
  };
  const hits = ctx.graph.search(query, k, Math.max(k, ef), filter);
  const res = toSlots(ctx, hits.labels, hits.distances, 'hnsw');
  // The bitset's count (or `allowed`'s length) is the true count. A replayed walk (plannedOnThreads) did
  // not ask for the bitset: its count is remembered.
  if (allowed === undefined) allowedBitset();
  if (res.slots.length >= Math.min(k, bitCount ?? enumerate().length)) return res;
  return exact(ctx, query, enumerate(), k);
}

/** A graph call of a plan run by `plannedOnThreads` that a thread is answering: the run stops there. */
class OnThread {
  constructor(
    readonly call: string,
    readonly answer: Promise<GraphHits>,
  ) {}
}

/** A run of `plannedOnThreads` made another call than the run before it: the plan goes synchronous. */
class Drifted {}

/**
 * Graph calls one pinned search makes on threads (the plan makes at most three per fetch; a tie at the
 * k-th place doubles the fetch): beyond, the rest is answered on the main thread.
 */
const THREAD_CALLS_MAX = 24;

/**
 * An exact scan of fewer candidates × dimensions than this runs on the main thread: about 50 µs of
 * scanning, what the hop to a thread and back costs in CPU (README "Native engine"). Measured at 40k × 128
 * under load, a scan of 800 allowed records sent to a thread saved the main thread 0.03 ms per request
 * and cost the process 0.08 ms more; one of a few thousand saved 0.2 ms for 0.06 ms.
 */
const THREAD_SCAN_MIN = 262_144;

/** The bitset over labels of the slots set in `slots` (what a thread's filtered walk takes). */
function labelBits(slots: Uint8Array, slotLabel: Int32Array, labelCount: number): Uint8Array {
  const out = new Uint8Array((labelCount + 7) >>> 3);
  for (let byte = 0; byte < slots.length; byte++) {
    for (let b = slots[byte]!; b !== 0; b &= b - 1) {
      const label = slotLabel[(byte << 3) | (31 - Math.clz32(b & -b))]!;
      if (label >= 0 && label < labelCount) out[label >>> 3]! |= 1 << (label & 7);
    }
  }
  return out;
}

function copyHits(h: GraphHits): GraphHits {
  const out: GraphHits = { labels: h.labels.slice(), distances: h.distances.slice(), checks: h.checks };
  if (h.landed !== undefined) out.landed = h.landed;
  return out;
}

/**
 * Runs `plan` (the planner as the caller runs it: plannedSearch, once per fetch) with its graph calls on
 * the engine's threads (Graph.searchAsync, exactAsync, filteredAsync); the plan, its choices and the
 * filter's allowed set stay on the main thread. The plan is not rewritten: it runs up to its first graph
 * call, which goes to a thread and ends the run; once answered, the plan runs again from the start, the
 * calls already answered return their answers (the plan's choices depend only on the store and the
 * query, so it makes the same calls again, checked), up to the next call. Between runs `unchanged` must
 * hold (nothing the plan reads changed, else the earlier answers would be another view's): when it does
 * not, the result is undefined, to be asked again. A filtered walk's allowed set is the slot bitset the
 * plan builds, turned here into a bitset over labels that the thread owns for the call.
 * @returns what `plan` returns for the store as it was when called, or undefined (it changed meanwhile)
 */
export async function plannedOnThreads<T>(
  ctx: PlannerContext,
  plan: (ctx: PlannerContext) => T,
  unchanged: () => boolean,
): Promise<T | undefined> {
  const graph = ctx.graph;
  const { searchAsync, exactAsync, filteredAsync } = graph;
  /** Each call answered so far: what it was (checked on each run) and its answer. */
  const made: { call: string; hits: GraphHits }[] = [];
  let at = 0;
  const replay = (call: string, answer: () => Promise<GraphHits> | GraphHits): GraphHits => {
    const prior = made[at++];
    if (prior !== undefined) {
      if (prior.call !== call) throw new Drifted();
      return copyHits(prior.hits);
    }
    const hits = answer();
    if (hits instanceof Promise) throw new OnThread(call, hits);
    made.push({ call, hits: copyHits(hits) });
    return hits;
  };
  const onThreads: Graph = Object.create(graph, {
    search: {
      value: (query: ArrayLike<number>, k: number, ef: number, filter?: GraphFilter): GraphHits => {
        const q = query instanceof Float32Array ? query : Float32Array.from(query);
        const allowed = filter?.allowed;
        return replay(`s${k},${ef},${allowed === undefined ? (filter === undefined ? 0 : 1) : 2}`, () => {
          if (filter === undefined) return searchAsync.call(graph, q, k, ef);
          // A filter that only hides labels (a block staged), or calls beyond the bound: answered here.
          if (allowed === undefined || made.length >= THREAD_CALLS_MAX) return graph.search(q, k, ef, filter);
          const bits = labelBits(allowed.bits(), ctx.slotLabel, filter.labelSlot.length);
          return filteredAsync.call(graph, q, k, ef, bits, allowed);
        });
      },
    },
    exact: {
      value: (query: ArrayLike<number>, k: number, candidates?: Uint32Array): GraphHits => {
        const q = query instanceof Float32Array ? query : Float32Array.from(query);
        const small = candidates !== undefined && candidates.length * q.length < THREAD_SCAN_MIN;
        return replay(`e${k},${candidates?.length ?? -1}`, () =>
          small || made.length >= THREAD_CALLS_MAX
            ? graph.exact!(q, k, candidates)
            : exactAsync.call(graph, q, k, candidates),
        );
      },
    },
  });
  // The runs replay one plan, so they must see one enumeration of each filter: the store's memo when it
  // keeps one (it lasts while `unchanged` holds), else one for this call.
  const view: PlannerContext = Object.create(ctx, {
    graph: { value: onThreads },
    allowedMemo: { value: ctx.allowedMemo ?? new Map<Cond, Int32Array>() },
    bitsMemo: { value: ctx.bitsMemo ?? new Map<Cond, { bits: Uint8Array; count: number }>() },
  });
  // Each run ends at a new call or returns: at most THREAD_CALLS_MAX + 1 runs reach the thread bound.
  for (let run = 0; run <= THREAD_CALLS_MAX + 1; run++) {
    at = 0;
    let thread: OnThread;
    try {
      return plan(view);
    } catch (err) {
      if (err instanceof Drifted) break;
      if (!(err instanceof OnThread)) throw err;
      thread = err;
    }
    const hits = await thread.answer;
    if (!unchanged()) return undefined;
    made.push({ call: thread.call, hits });
  }
  // Nothing changed since the call (checked after each answer): the synchronous plan answers for the same view.
  return plan(ctx);
}
