// The fields of a store's records by slot, in typed columns instead of one object per record (a record
// object with its strings cost several times the bytes its fields hold): entity keys as 32-byte rows,
// owners and creators as small integers into a table of the few addresses a collection sees, ids in one
// byte table, expiries as 64-bit integers. Documents are kept as the strings they arrive as (most are
// empty, and an empty one costs nothing here). What does not fit a column exactly (a key not in the
// lowercase key form, an id with non-ASCII text, an expiry outside uint64) is kept as given in a map
// beside it, so every field reads back exactly as it was set. Readers build records on demand
// (slotTable.ts `summary`); the attributes live in the attribute columns (attributeColumns.ts).

import { Buffer } from 'node:buffer';
import { grownLength } from './arrayGrowth.ts';
import { FNV_START, fnvEnd, fnvStep, hashOf, type SlotKeys } from './slotHash.ts';

/** The fields of a record kept here (attributes and vector are kept elsewhere). */
export type RecordFields = {
  key: string;
  owner: string;
  creator: string | undefined;
  id: string;
  expiresAt: bigint;
  document: string;
};

/** Bytes of a key row. */
const KEY_BYTES = 32;
/** The key form kept as bytes: any other key is kept as its text. */
const LOWER_KEY = /^0x[0-9a-f]{64}$/;
/** The hex digits' character codes, by value. */
const HEX_CODES = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** Longest id kept in the byte table (its length is a 16-bit column); longer ones are kept as text. */
const ID_MAX_BYTES = 0xffff;
/** The byte table is compacted once its dead bytes pass both this and its live bytes. */
const ID_GARBAGE_MIN = 1 << 16;
const UINT64_END = 1n << 64n;
/**
 * The fewest slots the columns take: a row is about 60 bytes over the columns, and a collection of one
 * record must stay small (COLLECTION_SMALL_BYTES_MAX).
 */
const ROWS_MIN = 4;

function hexValue(code: number): number {
  return code <= 57 ? code - 48 : code - 87;
}

/** Whether every unit of `s` is ASCII (one byte each in the id table). */
function ascii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/**
 * Owner and creator addresses by small integer: a collection sees few distinct ones, so a slot keeps
 * 4 bytes where a string reference costs 8 and a copy of the address 64. Counted, so the table holds
 * the addresses of live records only; 0 stands for none.
 */
export class AddressTable {
  /** Each address as given, and lowercased (the `$owner`/`$creator` filters compare those). */
  readonly texts: (string | undefined)[] = [undefined];
  readonly lowers: (string | undefined)[] = [undefined];
  #counts: number[] = [0];
  #byText = new Map<string, number>();
  #free: number[] = [];

  /** The number of an address (0 for none), counted once more. */
  ref(text: string | undefined): number {
    if (text === undefined) return 0;
    let i = this.#byText.get(text);
    if (i === undefined) {
      i = this.#free.pop() ?? this.texts.length;
      const lower = text.toLowerCase();
      this.texts[i] = text;
      this.lowers[i] = lower === text ? text : lower;
      this.#counts[i] = 0;
      this.#byText.set(text, i);
    }
    this.#counts[i]!++;
    return i;
  }

  /** Counts an address once less, dropping it at zero. */
  unref(i: number): void {
    if (i === 0 || --this.#counts[i]! > 0) return;
    this.#byText.delete(this.texts[i]!);
    this.texts[i] = undefined;
    this.lowers[i] = undefined;
    this.#free.push(i);
  }

  /** Distinct addresses held. */
  get size(): number {
    return this.#byText.size;
  }
}

export class RecordColumns {
  #keys = new Uint8Array(0);
  #keyBuf = Buffer.alloc(0);
  /** Keys not in the lowercase key form, as given (made when first needed, as the other maps). */
  #keyText: Map<number, string> | undefined;
  readonly addresses = new AddressTable();
  owner = new Uint32Array(0);
  creator = new Uint32Array(0);
  #idStart = new Uint32Array(0);
  #idLength = new Uint16Array(0);
  #idBytes = new Uint8Array(0);
  #idBuf = Buffer.alloc(0);
  #idUsed = 0;
  #idGarbage = 0;
  /** Ids not kept in the byte table (non-ASCII or too long), as given. */
  #idText: Map<number, string> | undefined;
  #expiry = new BigUint64Array(0);
  /** Expiries outside uint64, as given. */
  #expiryBig: Map<number, bigint> | undefined;
  /** Per slot; set only up to the last non-empty document, so a collection without documents keeps none. */
  #documents: string[] = [];
  /**
   * Per slot, counts the slot's sets and clears: odd while it holds a record. A rebuild compares it to
   * tell whether a slot changed while it copied vectors.
   */
  #epoch = new Uint32Array(0);
  #capacity = 0;

  get capacity(): number {
    return this.#capacity;
  }

  /** Grows every column to at least `cap` slots (new typed arrays are zeros the copy does not touch). */
  grow(cap: number): void {
    if (cap <= this.#capacity) return;
    const n = grownLength(this.#capacity, cap, ROWS_MIN);
    const keys = new Uint8Array(n * KEY_BYTES);
    keys.set(this.#keys);
    this.#keys = keys;
    this.#keyBuf = Buffer.from(keys.buffer, keys.byteOffset, keys.byteLength);
    this.owner = grown(this.owner, new Uint32Array(n));
    this.creator = grown(this.creator, new Uint32Array(n));
    this.#idStart = grown(this.#idStart, new Uint32Array(n));
    this.#idLength = grown(this.#idLength, new Uint16Array(n));
    this.#expiry = grown(this.#expiry, new BigUint64Array(n));
    this.#epoch = grown(this.#epoch, new Uint32Array(n));
    this.#capacity = n;
  }

  /** Whether a slot holds a record. */
  has(slot: number): boolean {
    return (this.#epoch[slot]! & 1) === 1;
  }

  /** The slot's change count (odd: it holds a record); changes at every set and clear. */
  epoch(slot: number): number {
    return this.#epoch[slot] ?? 0;
  }

  /** Keeps a record's fields in a slot that holds none (grown to it first). */
  set(slot: number, rec: RecordFields): void {
    if (this.has(slot)) this.clear(slot);
    this.#setKey(slot, rec.key);
    this.owner[slot] = this.addresses.ref(rec.owner);
    this.creator[slot] = this.addresses.ref(rec.creator);
    this.#setId(slot, rec.id);
    const e = rec.expiresAt;
    if (e >= 0n && e < UINT64_END) this.#expiry[slot] = e;
    else (this.#expiryBig ??= new Map()).set(slot, e);
    if (rec.document !== '' || slot < this.#documents.length) this.#documents[slot] = rec.document;
    this.#epoch[slot]!++;
  }

  /** Drops a slot's record. */
  clear(slot: number): void {
    if (!this.has(slot)) return;
    this.#keyText?.delete(slot);
    this.addresses.unref(this.owner[slot]!);
    this.addresses.unref(this.creator[slot]!);
    this.owner[slot] = 0;
    this.creator[slot] = 0;
    if (this.#idText?.delete(slot) !== true) this.#idGarbage += this.#idLength[slot]!;
    this.#idLength[slot] = 0;
    this.#expiryBig?.delete(slot);
    if (slot < this.#documents.length) {
      this.#documents[slot] = '';
      // Trailing empty documents are dropped, so the array stays as short as its last document.
      let end = this.#documents.length;
      while (end > 0 && this.#documents[end - 1] === '') end--;
      if (end < this.#documents.length) this.#documents.length = end;
    }
    this.#epoch[slot]!++;
  }

  #setKey(slot: number, key: string): void {
    if (!LOWER_KEY.test(key)) {
      (this.#keyText ??= new Map()).set(slot, key);
      return;
    }
    const keys = this.#keys;
    const o = slot * KEY_BYTES;
    for (let i = 0; i < KEY_BYTES; i++)
      keys[o + i] = (hexValue(key.charCodeAt(2 + 2 * i)) << 4) | hexValue(key.charCodeAt(3 + 2 * i));
  }

  /** A slot's entity key as it was set. */
  keyAt(slot: number): string {
    const text = this.#keyText?.get(slot);
    if (text !== undefined) return text;
    const o = slot * KEY_BYTES;
    return `0x${this.#keyBuf.toString('hex', o, o + KEY_BYTES)}`;
  }

  /** A slot's entity key lowercased (the `$key` attribute). */
  keyLowerAt(slot: number): string {
    const text = this.#keyText?.get(slot);
    return text === undefined ? this.keyAt(slot) : text.toLowerCase();
  }

  /** The lowercased keys' hash and comparison, for the `$key` index, without building the key's text. */
  readonly lowerKeys: SlotKeys = {
    hash: (slot) => {
      const text = this.#keyText?.get(slot);
      if (text !== undefined) return hashOf(text.toLowerCase());
      const keys = this.#keys;
      let h = fnvStep(fnvStep(FNV_START, 48), 120);
      for (let i = slot * KEY_BYTES, end = i + KEY_BYTES; i < end; i++) {
        const b = keys[i]!;
        h = fnvStep(fnvStep(h, HEX_CODES[b >>> 4]!), HEX_CODES[b & 15]!);
      }
      return fnvEnd(h);
    },
    equals: (slot, key) => {
      const text = this.#keyText?.get(slot);
      if (text !== undefined) return text.toLowerCase() === key;
      if (key.length !== 2 + 2 * KEY_BYTES || key.charCodeAt(0) !== 48 || key.charCodeAt(1) !== 120) return false;
      const keys = this.#keys;
      const o = slot * KEY_BYTES;
      for (let i = 0; i < KEY_BYTES; i++) {
        const b = keys[o + i]!;
        if (key.charCodeAt(2 + 2 * i) !== HEX_CODES[b >>> 4] || key.charCodeAt(3 + 2 * i) !== HEX_CODES[b & 15])
          return false;
      }
      return true;
    },
  };

  #setId(slot: number, id: string): void {
    if (id.length > ID_MAX_BYTES || !ascii(id)) {
      (this.#idText ??= new Map()).set(slot, id);
      return;
    }
    if (this.#idUsed + id.length > this.#idBytes.length) this.#makeIdRoom(id.length);
    const at = this.#idUsed;
    const bytes = this.#idBytes;
    for (let i = 0; i < id.length; i++) bytes[at + i] = id.charCodeAt(i);
    this.#idStart[slot] = at;
    this.#idLength[slot] = id.length;
    this.#idUsed += id.length;
  }

  /** Room for `more` bytes at the table's end: its dead bytes dropped when they are many, else a grown table. */
  #makeIdRoom(more: number): void {
    const old = this.#idBytes;
    const live = this.#idUsed - this.#idGarbage;
    const compact = this.#idGarbage >= ID_GARBAGE_MIN && this.#idGarbage >= live;
    const need = (compact ? live : this.#idUsed) + more;
    const bytes = new Uint8Array(need <= old.length ? old.length : grownLength(old.length, need));
    if (!compact) bytes.set(old.subarray(0, this.#idUsed));
    else {
      let at = 0;
      for (let s = 0; s < this.#capacity; s++) {
        const n = this.#idLength[s]!;
        if (n === 0 || !this.has(s)) continue;
        const from = this.#idStart[s]!;
        bytes.set(old.subarray(from, from + n), at);
        this.#idStart[s] = at;
        at += n;
      }
      this.#idUsed = at;
      this.#idGarbage = 0;
    }
    this.#idBytes = bytes;
    this.#idBuf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Bytes of the id table, live and dead (for the memory tests). */
  get idTableBytes(): number {
    return this.#idBytes.byteLength;
  }

  /** A slot's id as it was set. */
  idAt(slot: number): string {
    const text = this.#idText?.get(slot);
    if (text !== undefined) return text;
    const from = this.#idStart[slot]!;
    return this.#idBuf.toString('latin1', from, from + this.#idLength[slot]!);
  }

  /** The ids' hash and comparison, for the id → slot table, without building the id's text. */
  readonly ids: SlotKeys = {
    hash: (slot) => {
      const text = this.#idText?.get(slot);
      if (text !== undefined) return hashOf(text);
      const bytes = this.#idBytes;
      let h = FNV_START;
      for (let i = this.#idStart[slot]!, end = i + this.#idLength[slot]!; i < end; i++) h = fnvStep(h, bytes[i]!);
      return fnvEnd(h);
    },
    equals: (slot, id) => {
      const text = this.#idText?.get(slot);
      if (text !== undefined) return text === id;
      const n = this.#idLength[slot]!;
      if (id.length !== n) return false;
      const bytes = this.#idBytes;
      const from = this.#idStart[slot]!;
      for (let i = 0; i < n; i++) if (bytes[from + i] !== id.charCodeAt(i)) return false;
      return true;
    },
  };

  ownerAt(slot: number): string {
    return this.addresses.texts[this.owner[slot]!]!;
  }

  creatorAt(slot: number): string | undefined {
    return this.addresses.texts[this.creator[slot]!];
  }

  expiresAt(slot: number): bigint {
    return this.#expiryBig?.get(slot) ?? this.#expiry[slot]!;
  }

  documentAt(slot: number): string {
    return this.#documents[slot] ?? '';
  }
}

/** `to` holding `from`'s entries first. */
function grown<A extends Uint32Array | Uint16Array | BigUint64Array>(from: A, to: A): A {
  to.set(from as never);
  return to;
}
