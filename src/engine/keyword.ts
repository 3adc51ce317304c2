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

/**
 * The parts of MiniSearch's internals (7.x) this module replaces: the running average that makes BM25
 * depend on history (exactAverages) and the per-term maps that make a rare term cost ~600 bytes
 * (compactPostings). Pinned by the tests in test/engine/keyword.test.ts, which compare scores with a
 * stock MiniSearch.
 */
type Internals = {
  _avgFieldLength: number[];
  _fieldLength: Map<number, number[]>;
  _dirtCount: number;
  _index: TermTree;
  addFieldLength(documentId: number, fieldId: number, count: number, length: number): void;
  removeFieldLength(documentId: number, fieldId: number, count: number, length: number): void;
  addTerm(fieldId: number, documentId: number, term: string): void;
  removeTerm(fieldId: number, documentId: number, term: string): void;
};

/** What MiniSearch reads of a term's postings: field id → (short document id → term frequency). */
type FieldPostings = Pick<Map<number, DocPostings>, 'get' | 'delete' | 'size' | typeof Symbol.iterator>;
type DocPostings = Pick<Map<number, number>, 'get' | 'delete' | 'size' | 'keys' | typeof Symbol.iterator>;
/** MiniSearch's radix tree of terms (SearchableMap). */
type TermTree = Iterable<[string, FieldPostings]> & {
  get(term: string): FieldPostings | undefined;
  has(term: string): boolean;
  fetch(term: string, initial: () => FieldPostings): FieldPostings;
  set(term: string, value: FieldPostings): unknown;
  delete(term: string): void;
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
    // `[length]` holds one element; `[]` grown by an index store reserves 17 (~130 bytes a document).
    if (lengths === undefined) m._fieldLength.set(documentId, fieldId === 0 ? [length] : (lengths = []));
    if (lengths !== undefined) lengths[fieldId] = length;
    total += length;
    m._avgFieldLength[fieldId] = total / (count + 1);
  };
  m.removeFieldLength = (_documentId, fieldId, count, length) => {
    total -= length;
    m._avgFieldLength[fieldId] = count <= 1 ? 0 : total / (count - 1);
  };
}

/**
 * The postings of a term found in one document: its frequency there, without the two Maps MiniSearch
 * would make (~340 bytes). Most terms of short documents (ids, numbers, names) are such terms.
 */
class OneDoc implements DocPostings {
  doc: number;
  freq: number;
  constructor(doc: number, freq: number) {
    this.doc = doc;
    this.freq = freq;
  }
  get size(): number {
    return 1;
  }
  get(doc: number): number | undefined {
    return doc === this.doc ? this.freq : undefined;
  }
  delete(): boolean {
    // Never called: the term is dropped with its last document (FieldOf.delete, removeTerm).
    throw new Error('OneDoc.delete');
  }
  *keys(): MapIterator<number> {
    yield this.doc;
  }
  *[Symbol.iterator](): MapIterator<[number, number]> {
    yield [this.doc, this.freq];
  }
}

/** A term's postings in the only field, 0: one object where MiniSearch keeps a Map of one entry. */
class FieldOf implements FieldPostings {
  docs: OneDoc | Map<number, number> | undefined;
  get size(): number {
    return this.docs === undefined ? 0 : 1;
  }
  get(fieldId: number): DocPostings | undefined {
    return fieldId === 0 ? this.docs : undefined;
  }
  delete(fieldId: number): boolean {
    if (fieldId !== 0 || this.docs === undefined) return false;
    this.docs = undefined;
    return true;
  }
  *[Symbol.iterator](): MapIterator<[number, DocPostings]> {
    if (this.docs !== undefined) yield [0, this.docs];
  }
}

/**
 * Makes MiniSearch keep each term's postings as a FieldOf: the document and frequency inline while the
 * term is in one document, a Map from its second. Scores read the same frequencies, counts and lengths,
 * so they are bit-identical; KeywordIndex.fromJSON builds FieldOf postings directly. Only field 0 exists
 * (OPTIONS.fields).
 */
function compactPostings(mini: MiniSearch<{ id: number; text: string }>): void {
  const m = mini as unknown as Internals;
  const newField = (): FieldPostings => new FieldOf();
  m.addTerm = (fieldId, documentId, term) => {
    if (fieldId !== 0) throw new Error(`keyword index: unexpected field ${fieldId}`);
    const f = m._index.fetch(term, newField) as FieldOf;
    const docs = f.docs;
    if (docs === undefined) f.docs = new OneDoc(documentId, 1);
    else if (docs instanceof OneDoc) {
      if (docs.doc === documentId) docs.freq++;
      else
        f.docs = new Map([
          [docs.doc, docs.freq],
          [documentId, 1],
        ]);
    } else docs.set(documentId, (docs.get(documentId) ?? 0) + 1);
  };
  m.removeTerm = (fieldId, documentId, term) => {
    const f = m._index.get(term) as FieldOf | undefined;
    const docs = f?.docs;
    const freq = docs?.get(documentId);
    // The text given to remove is the text indexed (KeywordIndex.remove), so the posting exists.
    if (fieldId !== 0 || docs === undefined || freq === undefined) return;
    if (freq > 1) {
      if (docs instanceof OneDoc) docs.freq--;
      else docs.set(documentId, freq - 1);
      return;
    }
    if (docs instanceof OneDoc) {
      m._index.delete(term);
      return;
    }
    docs.delete(documentId);
    if (docs.size === 1) {
      const [doc, last] = docs[Symbol.iterator]().next().value!;
      f!.docs = new OneDoc(doc, last);
    }
  };
}

/** What KeywordIndex.toJSON writes: documents as (short id, slot, length) triples, then each term with its
 * posting count and (short id, frequency) pairs. */
export type KeywordSnapshot = {
  documentCount: number;
  nextId: number;
  dirtCount: number;
  documents: number[];
  terms: (string | number)[];
};

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
    compactPostings(this.#mini);
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

  /**
   * The index as flat arrays (store snapshot format 3): MiniSearch's own JSON holds an object per
   * document and two per term, and its loader builds two Maps per term that compactPostings then
   * replaces; at 100k documents that load took about a second.
   */
  toJSON(): KeywordSnapshot {
    const m = this.#mini as unknown as Internals & {
      _documentCount: number;
      _nextId: number;
      _documentIds: Map<number, unknown>;
    };
    const documents: number[] = [];
    for (const [shortId, slot] of m._documentIds)
      documents.push(shortId, slot as number, m._fieldLength.get(shortId)?.[0] ?? 0);
    const terms: (string | number)[] = [];
    for (const [term, fields] of m._index) {
      const docs = fields.get(0);
      if (docs === undefined || docs.size === 0) continue;
      terms.push(term, docs.size);
      for (const [doc, freq] of docs) terms.push(doc, freq);
    }
    return { documentCount: m._documentCount, nextId: m._nextId, dirtCount: m._dirtCount, documents, terms };
  }

  static fromJSON(json: string): KeywordIndex {
    const snap = JSON.parse(json) as KeywordSnapshot;
    const mini = MiniSearch.loadJS<{ id: number; text: string }>(
      {
        documentCount: snap.documentCount,
        nextId: snap.nextId,
        documentIds: {},
        fieldIds: { text: 0 },
        fieldLength: {},
        averageFieldLength: [0],
        storedFields: {},
        dirtCount: snap.dirtCount,
        index: [],
        serializationVersion: 2,
      },
      OPTIONS,
    );
    const m = mini as unknown as Internals & {
      _documentIds: Map<number, number>;
      _idToShortId: Map<number, number>;
    };
    const { documents, terms } = snap;
    for (let i = 0; i + 2 < documents.length; i += 3) {
      const shortId = documents[i]!;
      const slot = documents[i + 1]!;
      m._documentIds.set(shortId, slot);
      m._idToShortId.set(slot, shortId);
      m._fieldLength.set(shortId, [documents[i + 2]!]);
    }
    for (let i = 0; i < terms.length; ) {
      const term = terms[i] as string;
      const n = terms[i + 1] as number;
      const f = new FieldOf();
      if (n === 1) f.docs = new OneDoc(terms[i + 2] as number, terms[i + 3] as number);
      else {
        const docs = new Map<number, number>();
        for (let j = 0; j < n; j++) docs.set(terms[i + 2 + 2 * j] as number, terms[i + 3 + 2 * j] as number);
        f.docs = docs;
      }
      m._index.set(term, f);
      i += 2 + 2 * n;
    }
    return new KeywordIndex(mini);
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
