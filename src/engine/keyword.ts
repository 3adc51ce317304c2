// Keyword index over the documents of one collection (BM25 through minisearch) plus reciprocal rank
// fusion for hybrid ranking. Used by CollectionStore.keywordSearch/hybridSearch, which arkivector_search
// (`mode: keyword | hybrid`) and the KuraDB-compatible search_rag build on.
//
// Tokenizing is Unicode-aware without dictionaries: letters/digits/marks form words (NFKC, lowercased);
// runs of Han, Hiragana and Katakana, which are written without spaces, are indexed as single
// characters plus overlapping bigrams, and queried by bigrams (single characters only for a one-character
// run), so "東京" finds "東京都" but not every text containing "京".

import MiniSearch from 'minisearch';

/** RRF constant (Cormack et al. 2009; also Elasticsearch's and OpenSearch's default). */
export const RRF_K = 60;

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30fc\u3005]+/gu;

/**
 * Splits text into terms.
 * @param text any text
 * @param mode `index` (default): CJK runs as characters and bigrams; `query`: CJK runs as bigrams
 * @returns lowercase terms
 * @example tokenize('Cats purr 東京都') // ['cats', 'purr', '東', '京', '都', '東京', '京都']
 */
export function tokenize(text: string, mode: 'index' | 'query' = 'index'): string[] {
  const out: string[] = [];
  const norm = text.normalize('NFKC').toLowerCase();
  for (const m of norm.matchAll(WORD)) {
    const word = m[0];
    CJK.lastIndex = 0;
    if (!CJK.test(word)) {
      out.push(word);
      continue;
    }
    // Mixed words ("iphone用ケース") split into their CJK and non-CJK parts.
    let last = 0;
    CJK.lastIndex = 0;
    for (const c of word.matchAll(CJK)) {
      if (c.index! > last) out.push(word.slice(last, c.index));
      const chars = [...c[0]];
      if (mode === 'index' || chars.length === 1) for (const ch of chars) out.push(ch);
      for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
      last = c.index! + c[0].length;
    }
    if (last < word.length) out.push(word.slice(last));
  }
  return out;
}

const OPTIONS = {
  fields: ['text'],
  idField: 'id',
  tokenize: (text: string) => tokenize(text, 'index'),
  processTerm: (term: string) => term,
  searchOptions: { tokenize: (text: string) => tokenize(text, 'query'), processTerm: (term: string) => term },
};

/** BM25 over documents keyed by record slot. */
export class KeywordIndex {
  private mini: MiniSearch<{ id: number; text: string }>;

  constructor(mini?: MiniSearch<{ id: number; text: string }>) {
    this.mini = mini ?? new MiniSearch<{ id: number; text: string }>(OPTIONS);
  }

  /** Documents indexed (pending ones included). */
  get size(): number {
    return this.mini.documentCount;
  }

  /** Indexes a document; empty documents are skipped. */
  add(slot: number, text: string): void {
    if (text.length === 0) return;
    if (this.mini.has(slot)) this.mini.discard(slot);
    this.mini.add({ id: slot, text });
  }

  remove(slot: number): void {
    if (this.mini.has(slot)) this.mini.discard(slot);
  }

  /**
   * BM25 top k among accepted slots.
   * @param text the query
   * @param k results wanted
   * @param accept slot filter (visibility and the request's filter)
   * @returns slots and scores, best first
   */
  search(text: string, k: number, accept: (slot: number) => boolean): { slots: number[]; scores: number[] } {
    const hits = this.mini.search(text, { filter: (r) => accept(r.id as number) });
    const n = Math.min(k, hits.length);
    const slots: number[] = new Array(n);
    const scores: number[] = new Array(n);
    for (let i = 0; i < n; i++) {
      slots[i] = hits[i]!.id as number;
      scores[i] = hits[i]!.score;
    }
    return { slots, scores };
  }

  toJSON(): unknown {
    return this.mini.toJSON();
  }

  static fromJSON(json: string): KeywordIndex {
    return new KeywordIndex(MiniSearch.loadJSON<{ id: number; text: string }>(json, OPTIONS));
  }
}

/**
 * Reciprocal rank fusion: score(d) = Σ over lists of 1 / (RRF_K + rank), rank from 1.
 * @param lists ranked slot lists, best first
 * @returns slots by fused score, best first (ties: earlier list, then better rank)
 * @example rrf([[3, 1], [1, 2]]) // [{ slot: 1, score: 1/62 + 1/61 }, …]
 */
export function rrf(lists: readonly (readonly number[])[]): { slot: number; score: number }[] {
  const scores = new Map<number, number>();
  for (const list of lists) {
    for (let i = 0; i < list.length; i++) scores.set(list[i]!, (scores.get(list[i]!) ?? 0) + 1 / (RRF_K + i + 1));
  }
  // Map iteration keeps first-seen order, so a stable sort breaks ties by the earlier list.
  return [...scores].map(([slot, score]) => ({ slot, score })).sort((a, b) => b.score - a.score);
}
