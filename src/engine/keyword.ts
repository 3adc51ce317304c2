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

/** The parts of MiniSearch's internals that make BM25 depend on history (see exactAverages). */
type Internals = {
  _avgFieldLength: number[];
  _fieldLength: Map<number, number[]>;
  _dirtCount: number;
  addFieldLength(documentId: number, fieldId: number, count: number, length: number): void;
  removeFieldLength(documentId: number, fieldId: number, count: number, length: number): void;
};

/**
 * MiniSearch keeps the average document length as a running average, so its value (and every BM25
 * score) drifts in the last bits with the order documents came and went: two nodes with the same
 * documents scored them differently. Keep the integer total instead; the average is then a function of
 * the current documents only.
 */
function exactAverages(mini: MiniSearch<{ id: number; text: string }>): void {
  const m = mini as unknown as Internals;
  let total = 0;
  for (const lengths of m._fieldLength.values()) total += lengths[0] ?? 0;
  if (m._fieldLength.size > 0) m._avgFieldLength[0] = total / m._fieldLength.size;
  m.addFieldLength = (documentId, fieldId, count, length) => {
    let lengths = m._fieldLength.get(documentId);
    if (lengths === undefined) m._fieldLength.set(documentId, (lengths = []));
    lengths[fieldId] = length;
    total += length;
    m._avgFieldLength[fieldId] = total / (count + 1);
  };
  m.removeFieldLength = (_documentId, fieldId, count, length) => {
    total -= length;
    m._avgFieldLength[fieldId] = count <= 1 ? 0 : total / (count - 1);
  };
}

/**
 * BM25 over documents keyed by record slot. Scores depend only on the documents indexed now, never on
 * the order they came and went (documents are removed with their text, not discarded lazily: a lazily
 * discarded posting changed the document frequency mid-search, and searches rewrote the index).
 */
export class KeywordIndex {
  #mini: MiniSearch<{ id: number; text: string }>;

  constructor(mini?: MiniSearch<{ id: number; text: string }>) {
    this.#mini = mini ?? new MiniSearch<{ id: number; text: string }>(OPTIONS);
    exactAverages(this.#mini);
  }

  /** Whether a snapshot holds lazily discarded documents (written before removals carried their text). */
  get dirty(): boolean {
    return (this.#mini as unknown as Internals)._dirtCount > 0;
  }

  /** Documents indexed (pending ones included). */
  get size(): number {
    return this.#mini.documentCount;
  }

  /** Indexes a document; empty documents are skipped. */
  add(slot: number, text: string): void {
    if (text.length === 0) return;
    if (this.#mini.has(slot)) this.#mini.discard(slot);
    this.#mini.add({ id: slot, text });
  }

  /** Removes a document; `text` must be the text it was added with. */
  remove(slot: number, text: string): void {
    if (this.#mini.has(slot)) this.#mini.remove({ id: slot, text });
  }

  /**
   * BM25 top k among accepted slots, ties broken by `tieKey` ascending (entity keys), so the answer does
   * not depend on slot numbers; the k-th place goes to the right record even when a tie straddles it.
   * @param text the query
   * @param k results wanted
   * @param accept slot filter (visibility and the request's filter)
   * @param tieKey the order of equal scores
   * @returns slots and scores, best first
   */
  search(
    text: string,
    k: number,
    accept: (slot: number) => boolean,
    tieKey: (slot: number) => string,
  ): { slots: number[]; scores: number[] } {
    // MiniSearch returns every match sorted by score: extend the top k over the tie at its end.
    const hits = this.#mini.search(text, { filter: (r) => accept(r.id as number) });
    let end = Math.min(k, hits.length);
    while (end > 0 && end < hits.length && hits[end]!.score === hits[end - 1]!.score) end++;
    const top = hits
      .slice(0, end)
      .map((h) => ({ slot: h.id as number, score: h.score, key: tieKey(h.id as number) }))
      .sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, k);
    return { slots: top.map((h) => h.slot), scores: top.map((h) => h.score) };
  }

  toJSON(): unknown {
    return this.#mini.toJSON();
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
