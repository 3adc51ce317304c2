// What a plan reads from its store and how it talks to the graph. A plan is a generator: it yields each
// graph call it needs and is resumed with the call's answer, so one plan runs two ways, its calls
// answered on the spot (run.ts) or on the graph's threads (threads.ts), and is never replayed.

import type { IndexSource } from '../filter/plan.ts';
import type { RowSource } from '../filter/predicate.ts';
import type { Cond } from '../filter/types.ts';
import type { Graph, GraphFilter, GraphHits } from '../hnsw/graph.ts';
import type { SearchMode } from '../searchTypes.ts';

/**
 * A filter's enumerations kept for reuse by the store for as long as nothing it holds changes (one block),
 * so a filter repeated query after query is enumerated once (compiled filters are cached by text, so a
 * repeated `where` is the same Cond). Whoever keeps them must drop them when the records or their
 * attributes change.
 */
export type AllowedMemo = {
  allowedMemo?: Map<Cond, Int32Array>;
  bitsMemo?: Map<Cond, { bits: Uint8Array; count: number }>;
};

/** What a plan reads from the store for one query. */
export type PlannerContext = IndexSource &
  AllowedMemo & {
    graph: Graph;
    /** Graph label → slot; −1 for labels not visible (deleted, or inserted by an uncommitted block). */
    labelSlot: Int32Array;
    /** slot → label (−1 for a free slot). */
    slotLabel: Int32Array;
    /** Slots in use or reserved (the size of a bitset over slots). */
    slotCount: number;
    /** A block is being applied: the graph holds labels readers must not see yet. */
    pending: boolean;
    rows: RowSource;
  };

export type PlannedResult = { slots: number[]; distances: number[]; mode: SearchMode };

/** A graph call a plan asks for: the walk (Graph.search) or the exact scan (Graph.exact). */
export type GraphCall =
  | { kind: 'walk'; query: Float32Array; k: number; ef: number; filter?: GraphFilter }
  | { kind: 'exact'; query: Float32Array; k: number; candidates?: Uint32Array };

/** A plan: yields its graph calls, is resumed with each one's hits, returns its result. */
export type Plan<T> = Generator<GraphCall, T, GraphHits>;
