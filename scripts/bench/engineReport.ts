// The engine suite's rows (the fields its JSON keeps: system, ef, recall_at_10, qps, selectivity, case,
// vs_unfiltered, bytes_per_vector and the rest) and the table it prints.

export type CaseName = 'random' | 'clustered' | 'far';

export type Row = {
  system: 'arkivector' | 'hnswlib-node' | 'exact';
  /** arkivector rows: the store's graph engine (ARKIVECTOR_ENGINE). */
  engine?: string;
  n: number;
  dim: number;
  ef: number | null;
  selectivity: number;
  recall_at_10: number;
  qps: number;
  case?: CaseName;
  /**
   * Filtered arkivector rows: `repeated` asks the same `where` text every query (its enumeration is reused
   * within the block: docs/filters.md); `fresh` spells it differently each query, more spellings than the
   * store keeps, so each query enumerates it again, as the first query of a filter after a block does.
   */
  filter_memo?: 'repeated' | 'fresh';
  /** Filtered rows: QPS ÷ the same system's unfiltered QPS at the same ef. */
  vs_unfiltered?: number;
  /** Unfiltered arkivector rows: queries per CPU second ÷ hnswlib-node's, median of side-by-side rounds. */
  vs_hnswlib?: number;
  ef_search?: number;
  search_modes?: Record<string, number>;
  build_s?: number;
  build_pts_per_s?: number;
  /** RSS growth per vector of a child process that built this system alone (see the header). */
  bytes_per_vector?: number;
  /** The same less the growth of V8's young generation in that child (see MemoryFigure). */
  bytes_per_vector_less_young?: number;
  /** That child's RSS growth less the young generation's from n/2 to n, per vector added (see MemoryFigure). */
  bytes_per_vector_slope?: number;
  /** Queries answered and timed (filtered rows: fewer than asked when MEASURE_BUDGET_S ran out). */
  queries?: number;
  queries_asked?: number;
  /** The machine's load average (1, 5, 15 min) when the row was measured. */
  load_avg?: number[];
};

export const pct = (s: number): string => `${+(s * 100).toFixed(2)} %`;

/** The printed table of `rows`, and its footnotes; `budgetS` is a filtered measurement's time budget. */
export function rowTable(rows: Row[], budgetS: number): string[] {
  const pad = (s: string, w: number): string => (s.length >= w ? s : s + ' '.repeat(w - s.length));
  const lines = [
    `${pad('system', 13)}${pad('case', 10)}${pad('selectivity', 13)}${pad('ef', 6)}${pad('recall@10', 11)}${pad('QPS', 9)}${pad('÷unfilt.', 10)}${pad('queries', 9)}modes`,
  ];
  for (const r of rows) {
    const answeredOf = r.queries_asked === undefined ? String(r.queries ?? '') : `${r.queries}/${r.queries_asked}`;
    lines.push(
      `${pad(r.system, 13)}${pad((r.case ?? '-') + (r.filter_memo === 'fresh' ? '*' : ''), 10)}${pad(r.selectivity === 1 ? '100 %' : pct(r.selectivity), 13)}${pad(r.ef === null ? '-' : String(r.ef), 6)}${pad(r.recall_at_10.toFixed(3), 11)}${pad(Math.round(r.qps).toString(), 9)}${pad(r.vs_unfiltered === undefined ? '' : `${r.vs_unfiltered.toFixed(2)}×`, 10)}${pad(answeredOf, 9)}${r.search_modes ? JSON.stringify(r.search_modes) : ''}`,
    );
  }
  lines.push('');
  if (rows.some((r) => r.queries_asked !== undefined))
    lines.push(`queries x/y: the measurement ran out of its ${budgetS} s budget after x of the y queries asked`);
  lines.push(
    "case*: arkivector's filter spelled afresh each query, so enumerated each query (filter_memo fresh); without *, the same text repeated",
  );
  return lines;
}
