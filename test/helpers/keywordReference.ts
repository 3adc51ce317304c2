// The reference the keyword index is checked against: a stock MiniSearch with the index's tokenizer.
import MiniSearch from 'minisearch';
import { type KeywordIndex, tokenize } from '../../src/engine/keyword.ts';

/** Scores by slot from a stock MiniSearch built from `docs` alone, its average length set exactly. */
export function referenceScores(docs: ReadonlyMap<number, string>, query: string): Map<number, number> {
  const mini = new MiniSearch<{ id: number; text: string }>({
    fields: ['text'],
    tokenize: (t) => tokenize(t, 'index'),
    processTerm: (t) => t,
    searchOptions: { tokenize: (t) => tokenize(t, 'query'), processTerm: (t) => t },
  });
  let total = 0;
  for (const [id, t] of docs) {
    mini.add({ id, text: t });
    total += new Set(tokenize(t)).size;
  }
  (mini as unknown as { _avgFieldLength: number[] })._avgFieldLength[0] = total / docs.size;
  return new Map(mini.search(query).map((h) => [h.id as number, h.score]));
}

/** An index's scores by slot for `query` (up to 100 hits, every slot allowed). */
export function indexScores(idx: KeywordIndex, query: string): Map<number, number> {
  const { slots, scores } = idx.search(query, 100, () => true, String);
  return new Map(slots.map((s, i) => [s, scores[i]!]));
}
