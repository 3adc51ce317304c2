// Keyword index over the documents of one collection (BM25, scored as MiniSearch scores) plus reciprocal rank
// fusion for hybrid ranking. Used by CollectionStore.keywordSearch/hybridSearch, which arkivector_search
// (`mode: keyword | hybrid`) and the KuraDB-compatible search_rag build on.
//
// Tokenizing is Unicode-aware without dictionaries: letters/digits/marks form words (NFKC, lowercased);
// runs of Han, Hiragana and Katakana, which are written without spaces, are indexed as single
// characters plus overlapping bigrams, and queried by bigrams (single characters only for a one-character
// run), so "東京" finds "東京都" but not every text containing "京".

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

/** MiniSearch's BM25+ parameters (its defaults): the scores are those the MiniSearch-based index gave. */
const BM25 = { k: 1.2, b: 0.7, d: 0.5 };

/** MiniSearch's calcBM25Score, operation for operation, so scores stay bit-identical. */
function bm25(termFreq: number, matching: number, total: number, length: number, avgLength: number): number {
  const { k, b, d } = BM25;
  const invDocFreq = Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
  return invDocFreq * (d + (termFreq * (k + 1)) / (termFreq + k * (1 - b + (b * length) / avgLength)));
}

/** Entries past this share of a SlotCounts table make it grow. */
const COUNTS_LOAD_MAX = 0.75;
const COUNTS_MIN_CAPACITY = 4;

/**
 * The postings of a term in more than one document (or more than once in one): slot → frequency, open
 * addressed (linear probing, backward-shift deletion) in one Int32Array of (slot + 1, count) pairs.
 * A Map<number, number> costs 28 to 56 bytes an entry; this costs 8 bytes a capacity pair, 11 to 21 an
 * entry, which is what a term every document holds ("entity", "the") costs per document.
 */
export class SlotCounts {
  #table = new Int32Array(2 * COUNTS_MIN_CAPACITY);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** The pair index holding `slot`, or the empty one where it would go. */
  #find(slot: number): number {
    const t = this.#table;
    const mask = (t.length >> 1) - 1;
    for (let i = Math.imul(slot, 0x9e3779b1) & mask; ; i = (i + 1) & mask) {
      const k = t[2 * i]!;
      if (k === 0 || k === slot + 1) return i;
    }
  }

  get(slot: number): number | undefined {
    const i = this.#find(slot);
    return this.#table[2 * i] === 0 ? undefined : this.#table[2 * i + 1];
  }

  /** Sets the count of `slot` (> 0). */
  put(slot: number, count: number): void {
    let i = this.#find(slot);
    if (this.#table[2 * i] === 0) {
      if (this.#size + 1 > (this.#table.length >> 1) * COUNTS_LOAD_MAX) {
        this.#resize(this.#table.length);
        i = this.#find(slot);
      }
      this.#table[2 * i] = slot + 1;
      this.#size++;
    }
    this.#table[2 * i + 1] = count;
  }

  /** One more occurrence in `slot`. */
  add(slot: number): void {
    this.put(slot, (this.get(slot) ?? 0) + 1);
  }

  /** One occurrence fewer in `slot` (its entry goes with the last). */
  take(slot: number): void {
    const i = this.#find(slot);
    if (this.#table[2 * i] === 0) return;
    if (this.#table[2 * i + 1]! > 1) this.#table[2 * i + 1]!--;
    else this.#removeAt(i);
  }

  delete(slot: number): boolean {
    const i = this.#find(slot);
    if (this.#table[2 * i] === 0) return false;
    this.#removeAt(i);
    return true;
  }

  *entries(): Generator<[slot: number, count: number]> {
    const t = this.#table;
    for (let i = 0; i < t.length; i += 2) if (t[i] !== 0) yield [t[i]! - 1, t[i + 1]!];
  }

  #removeAt(at: number): void {
    const t = this.#table;
    const mask = (t.length >> 1) - 1;
    let hole = at;
    // Later entries of the run move back over the hole unless that would put them before their home.
    for (let j = (at + 1) & mask; t[2 * j] !== 0; j = (j + 1) & mask) {
      const home = Math.imul(t[2 * j]! - 1, 0x9e3779b1) & mask;
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        t[2 * hole] = t[2 * j]!;
        t[2 * hole + 1] = t[2 * j + 1]!;
        hole = j;
      }
    }
    t[2 * hole] = 0;
    t[2 * hole + 1] = 0;
    this.#size--;
    const capacity = t.length >> 1;
    if (capacity > COUNTS_MIN_CAPACITY && this.#size * 8 < capacity) this.#resize(capacity / 2);
  }

  /** Rehashes into `capacity` pairs. */
  #resize(capacity: number): void {
    const old = this.#table;
    this.#table = new Int32Array(2 * capacity);
    const mask = capacity - 1;
    for (let i = 0; i < old.length; i += 2) {
      if (old[i] === 0) continue;
      let j = Math.imul(old[i]! - 1, 0x9e3779b1) & mask;
      while (this.#table[2 * j] !== 0) j = (j + 1) & mask;
      this.#table[2 * j] = old[i]!;
      this.#table[2 * j + 1] = old[i + 1]!;
    }
  }
}

/**
 * A term's postings: the slot itself while one document holds the term once (most terms of short
 * documents: ids, numbers, names), a SlotCounts otherwise.
 */
type Postings = number | SlotCounts;

/** What KeywordIndex.toJSON writes: documents as (short id, slot, length) triples, then each term with its
 * posting count and (short id, frequency) pairs. The index writes each slot as its own short id; snapshots
 * of the MiniSearch-based index have short ids of their own, which fromJSON maps to slots. */
export type KeywordSnapshot = {
  documentCount: number;
  nextId: number;
  dirtCount: number;
  documents: number[];
  terms: (string | number)[];
};

/**
 * BM25 over documents keyed by record slot, scored as MiniSearch 7 (fields: one, no prefix or fuzzy
 * matching, OR of the query's terms) scores with exact average lengths. Scores depend only on the
 * documents indexed now, never on the order they came and went. Per document it keeps a length in a
 * column by slot and its postings; the text stays with the record, and removal takes it back.
 */
export class KeywordIndex {
  /** Distinct terms + 1 by slot; 0: no document. */
  #lengths = new Int32Array(0);
  #count = 0;
  /** Sum of the documents' lengths: the average is a function of the current documents only. */
  #total = 0;
  readonly #terms = new Map<string, Postings>();
  #dirty = false;

  /** Whether this came from a snapshot holding lazily discarded documents (the store rebuilds it). */
  get dirty(): boolean {
    return this.#dirty;
  }

  /** Documents indexed. */
  get size(): number {
    return this.#count;
  }

  #has(slot: number): boolean {
    return slot < this.#lengths.length && this.#lengths[slot] !== 0;
  }

  #setLength(slot: number, length: number): void {
    if (slot >= this.#lengths.length) {
      const grown = new Int32Array(Math.max(slot + 1, Math.ceil(this.#lengths.length * 1.5), 16));
      grown.set(this.#lengths);
      this.#lengths = grown;
    }
    this.#lengths[slot] = length + 1;
    this.#count++;
    this.#total += length;
  }

  #addTerm(term: string, slot: number): void {
    const p = this.#terms.get(term);
    if (p === undefined) this.#terms.set(term, slot);
    else if (typeof p === 'number') {
      const counts = new SlotCounts();
      counts.add(p);
      counts.add(slot);
      this.#terms.set(term, counts);
    } else p.add(slot);
  }

  #removeTerm(term: string, slot: number, all = false): void {
    const p = this.#terms.get(term);
    if (p === undefined) return;
    if (typeof p === 'number') {
      if (p === slot) this.#terms.delete(term);
      return;
    }
    if (all) p.delete(slot);
    else p.take(slot);
    if (p.size === 0) this.#terms.delete(term);
    else if (p.size === 1) {
      const [only, count] = p.entries().next().value!;
      if (count === 1) this.#terms.set(term, only);
    }
  }

  /** Indexes a document; empty documents are skipped. A slot that holds one is replaced. */
  add(slot: number, text: string): void {
    if (text.length === 0) return;
    if (this.#has(slot)) this.#drop(slot);
    const tokens = tokenize(text, 'index');
    this.#setLength(slot, new Set(tokens).size);
    for (const term of tokens) this.#addTerm(term, slot);
  }

  /** Removes a document; `text` must be the text it was added with. */
  remove(slot: number, text: string): void {
    if (!this.#has(slot)) return;
    for (const term of tokenize(text, 'index')) this.#removeTerm(term, slot);
    this.#forget(slot);
  }

  /** Removes a document whose text is not at hand: every term is visited. */
  #drop(slot: number): void {
    for (const term of [...this.#terms.keys()]) this.#removeTerm(term, slot, true);
    this.#forget(slot);
  }

  #forget(slot: number): void {
    this.#total -= this.#lengths[slot]! - 1;
    this.#lengths[slot] = 0;
    this.#count--;
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
    // Per document: the sum over query terms in query order (as MiniSearch folds them), times the number of
    // distinct query terms it matched.
    const found = new Map<number, { score: number; terms: string[] }>();
    const avgLength = this.#count > 0 ? this.#total / this.#count : 0;
    const score = (term: string, slot: number, freq: number, matching: number) => {
      const s = bm25(freq, matching, this.#count, this.#lengths[slot]! - 1, avgLength);
      const hit = found.get(slot);
      if (hit === undefined) found.set(slot, { score: s, terms: [term] });
      else {
        hit.score = hit.score + s;
        if (!hit.terms.includes(term)) hit.terms.push(term);
      }
    };
    for (const term of tokenize(text, 'query')) {
      const p = this.#terms.get(term);
      if (p === undefined) continue;
      if (typeof p === 'number') score(term, p, 1, 1);
      else for (const [slot, freq] of p.entries()) score(term, slot, freq, p.size);
    }
    const hits: { slot: number; score: number }[] = [];
    for (const [slot, hit] of found) if (accept(slot)) hits.push({ slot, score: hit.score * hit.terms.length });
    hits.sort((a, b) => b.score - a.score);
    // Extend the top k over the tie at its end, then order by score and key.
    let end = Math.min(k, hits.length);
    while (end > 0 && end < hits.length && hits[end]!.score === hits[end - 1]!.score) end++;
    const top = hits
      .slice(0, end)
      .map((h) => ({ ...h, key: tieKey(h.slot) }))
      .sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, k);
    return { slots: top.map((h) => h.slot), scores: top.map((h) => h.score) };
  }

  /** The index as flat arrays (store snapshot format 3): loading it builds no object per document. */
  toJSON(): KeywordSnapshot {
    const documents: number[] = [];
    for (let slot = 0; slot < this.#lengths.length; slot++)
      if (this.#lengths[slot] !== 0) documents.push(slot, slot, this.#lengths[slot]! - 1);
    const terms: (string | number)[] = [];
    for (const [term, p] of this.#terms) {
      if (typeof p === 'number') terms.push(term, 1, p, 1);
      else {
        terms.push(term, p.size);
        for (const [slot, freq] of p.entries()) terms.push(slot, freq);
      }
    }
    return { documentCount: this.#count, nextId: this.#lengths.length, dirtCount: 0, documents, terms };
  }

  /**
   * Loads toJSON's output, or a snapshot of the MiniSearch-based index: its short ids become slots, and
   * postings of documents it had discarded lazily are left out (such a snapshot is `dirty`).
   */
  static fromJSON(json: string): KeywordIndex {
    const snap = JSON.parse(json) as KeywordSnapshot;
    const index = new KeywordIndex();
    index.#dirty = snap.dirtCount > 0;
    const { documents, terms } = snap;
    const slotOf = new Map<number, number>();
    for (let i = 0; i + 2 < documents.length; i += 3) {
      slotOf.set(documents[i]!, documents[i + 1]!);
      index.#setLength(documents[i + 1]!, documents[i + 2]!);
    }
    for (let i = 0; i < terms.length; ) {
      const term = terms[i] as string;
      const n = terms[i + 1] as number;
      const counts = new SlotCounts();
      for (let j = 0; j < n; j++) {
        const slot = slotOf.get(terms[i + 2 + 2 * j] as number);
        if (slot !== undefined) counts.put(slot, terms[i + 3 + 2 * j] as number);
      }
      const [first] = counts.entries();
      if (counts.size === 1 && first![1] === 1) index.#terms.set(term, first![0]);
      else if (counts.size > 0) index.#terms.set(term, counts);
      i += 2 + 2 * n;
    }
    return index;
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
