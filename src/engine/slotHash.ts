// A string → slot map that keeps no strings: an open-addressed table of slot numbers (linear probing,
// Int32Array), each slot's string read back from where the store already keeps it (the record's id).
// A Map<string, number> costs 28 to 56 bytes an entry in its hash table (3.5 words a capacity slot,
// capacity a power of two) and holds the string again; this table costs 4 bytes a capacity slot at a load
// of LOAD_MAX / 2 to LOAD_MAX: 6 to 12 bytes an entry. A look-up hashes the string (FNV-1a over its UTF-16
// units), which a Map does once per string and caches.

/** Empty and deleted table entries. */
const EMPTY = -1;
const DELETED = -2;
/** Entries (live and deleted) past this share of the table make it grow. */
const LOAD_MAX = 0.7;
const MIN_CAPACITY = 16;

function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  // Fold the high bits in: the table takes the low ones.
  return (h ^ (h >>> 15)) >>> 0;
}

export class SlotHash {
  #table = new Int32Array(MIN_CAPACITY).fill(EMPTY);
  #live = 0;
  #used = 0;
  /** The string of a slot the table holds (called only with such slots). */
  readonly #keyOf: (slot: number) => string;

  /**
   * @param keyOf the string a slot was set under, read from where the caller keeps it: it must answer
   * the same until the slot's entry is deleted or set to another slot
   */
  constructor(keyOf: (slot: number) => string) {
    this.#keyOf = keyOf;
  }

  /** Entries held. */
  get size(): number {
    return this.#live;
  }

  /** Bytes of the table, for the memory tests. */
  get tableBytes(): number {
    return this.#table.byteLength;
  }

  /** Calls `fn` with every slot held, in no order. */
  forEachSlot(fn: (slot: number) => void): void {
    for (const slot of this.#table) if (slot >= 0) fn(slot);
  }

  /** The slot of a string, or undefined. */
  get(key: string): number | undefined {
    const i = this.#find(key);
    return i < 0 ? undefined : this.#table[i];
  }

  /** Maps a string to a slot (replacing the slot it had). `keyOf(slot)` must already return `key`. */
  set(key: string, slot: number): void {
    const i = this.#find(key);
    if (i >= 0) {
      this.#table[i] = slot;
      return;
    }
    if (this.#used + 1 > this.#table.length * LOAD_MAX) this.#rehash();
    const mask = this.#table.length - 1;
    let j = hashOf(key) & mask;
    while (this.#table[j]! >= 0) j = (j + 1) & mask;
    if (this.#table[j] === EMPTY) this.#used++;
    this.#table[j] = slot;
    this.#live++;
  }

  /** Removes a string's entry if it maps to `slot`. */
  delete(key: string, slot: number): void {
    const i = this.#find(key);
    if (i < 0 || this.#table[i] !== slot) return;
    this.#table[i] = DELETED;
    this.#live--;
  }

  /** The table index holding `key`, or −1. */
  #find(key: string): number {
    const table = this.#table;
    const mask = table.length - 1;
    for (let j = hashOf(key) & mask; ; j = (j + 1) & mask) {
      const slot = table[j]!;
      if (slot === EMPTY) return -1;
      if (slot >= 0 && this.#keyOf(slot) === key) return j;
    }
  }

  /** The table without its deleted entries, twice as large when the live ones fill half its room. */
  #rehash(): void {
    const old = this.#table;
    const cap = this.#live + 1 > (old.length * LOAD_MAX) / 2 ? old.length * 2 : old.length;
    const table = new Int32Array(cap).fill(EMPTY);
    const mask = cap - 1;
    for (const slot of old) {
      if (slot < 0) continue;
      let j = hashOf(this.#keyOf(slot)) & mask;
      while (table[j] !== EMPTY) j = (j + 1) & mask;
      table[j] = slot;
    }
    this.#table = table;
    this.#used = this.#live;
  }
}
