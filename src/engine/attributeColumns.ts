// Attribute columns and indexes of one collection store: values by slot for the filter predicates
// (declared attributes and the $key/$owner/$creator meta attributes) and a posting index per
// attribute for the planner's enumeration and counts. Rebuilt from the live records when the
// definition changes.

import type { AttributeType, AttributeValue } from '../collections/index.ts';
import { grownLength } from './arrayGrowth.ts';
import { AttributeIndex } from './filter/attributeIndex.ts';
import type { Column, RowSource } from './filter/predicate.ts';
import type { Field, Key } from './filter/types.ts';
import type { StoredRecord } from './recordView.ts';

/** Meta attributes every collection can filter on, lowercased like the chain's hex. */
export const META_NAMES = ['$key', '$owner', '$creator'] as const;

function lower(s: string | undefined): string | undefined {
  return s === undefined ? undefined : s.toLowerCase();
}

function attrKey(v: AttributeValue): Key {
  return typeof v === 'boolean' ? (v ? 1 : 0) : v;
}

export class AttributeColumns implements RowSource {
  #columns = new Map<string, Column>();
  #indexes = new Map<string, AttributeIndex>();
  /**
   * Attributes declared by `reset` whose columns are not made yet: they are made with the first record,
   * so a collection that holds nothing costs nothing per declared attribute (a definition may declare 64).
   */
  #declared: Readonly<Record<string, AttributeType>> | undefined;
  /** Slots a numeric column must hold: the vector slab's capacity. */
  readonly #capacity: () => number;

  /**
   * Empty columns; `reset` declares them.
   * @param capacity the current slot capacity, read whenever a column is created
   */
  constructor(capacity: () => number) {
    this.#capacity = capacity;
  }

  /**
   * An empty index for an attribute. `$key`'s reads its keys back from the `$key` column (they are unique,
   * so nearly all single-slot: see AttributeIndex), the column of the moment, since `reset` replaces it.
   */
  #newIndex(name: string): AttributeIndex {
    if (name !== '$key') return new AttributeIndex();
    return new AttributeIndex((slot) => this.#columns.get('$key')!.data[slot] as string);
  }

  #newColumn(kind: 'str' | 'num'): Column {
    return kind === 'str' ? { kind, data: [] } : { kind, data: new Float64Array(this.#capacity()).fill(NaN) };
  }

  /**
   * Replaces every column and index with empty ones for these attributes and the meta attributes;
   * the caller refills them slot by slot.
   * @param attributes the definition's declared attributes
   */
  reset(attributes: Readonly<Record<string, AttributeType>>): void {
    this.#indexes = new Map();
    this.#columns = new Map();
    this.#declared = attributes;
  }

  /** Makes the declared columns and indexes that do not exist yet (the first record is coming). */
  #declare(): void {
    const attributes = this.#declared;
    if (attributes === undefined) return;
    this.#declared = undefined;
    const kinds: [string, 'str' | 'num'][] = Object.entries(attributes).map(([name, type]) => [
      name,
      type === 'str' ? 'str' : 'num',
    ]);
    for (const name of META_NAMES) kinds.push([name, 'str']);
    for (const [name, kind] of kinds) {
      if (!this.#indexes.has(name)) this.#indexes.set(name, this.#newIndex(name));
      if (!this.#columns.has(name)) this.#columns.set(name, this.#newColumn(kind));
    }
  }

  /** The current column of a field, created empty for an undeclared one (RowSource). */
  column(field: Field): Column {
    let col = this.#columns.get(field.name);
    if (col === undefined) {
      col = this.#newColumn(field.type === 'str' ? 'str' : 'num');
      this.#columns.set(field.name, col);
    }
    return col;
  }

  /** The posting index of a field, created empty for an undeclared one. */
  index(field: Field): AttributeIndex {
    let idx = this.#indexes.get(field.name);
    if (idx === undefined) {
      idx = this.#newIndex(field.name);
      this.#indexes.set(field.name, idx);
    }
    return idx;
  }

  /**
   * The slot holding an entity key (`$key` values are unique among live records).
   * @param key the key, lowercased
   */
  slotOfKey(key: string): number | undefined {
    return this.#indexes.get('$key')?.only(key);
  }

  /** Writes a record's values into the columns (undefined clears the slot). */
  set(slot: number, rec: StoredRecord | undefined): void {
    if (rec !== undefined) this.#declare();
    for (const [name, col] of this.#columns) {
      let v: Key | undefined;
      if (rec !== undefined) {
        if (name === '$key') v = rec.key.toLowerCase();
        else if (name === '$owner') v = rec.owner.toLowerCase();
        else if (name === '$creator') v = lower(rec.creator);
        else {
          const a = rec.attributes[name];
          v = a === undefined ? undefined : attrKey(a);
        }
      }
      if (col.kind === 'num') col.data[slot] = typeof v === 'number' ? v : NaN;
      else if (typeof v === 'string') col.data[slot] = this.#shared(name, col.data, v);
      // Past the end a slot reads undefined already: a column of values most records lack ($creator)
      // stays as short as its last value instead of 8 bytes a slot.
      else if (slot < col.data.length) col.data[slot] = undefined;
    }
  }

  /**
   * The instance of a string value the column already holds for another slot, else `v`. Decoded records
   * bring their own copy of each value (an owner address is 64 bytes of heap, lowercasing a mixed-case
   * one makes another): the slots sharing a value then share one string.
   */
  #shared(name: string, data: (string | undefined)[], v: string): string {
    const other = this.#indexes.get(name)?.anySlot(v);
    const held = other === undefined ? undefined : data[other];
    return held === v ? held : v;
  }

  /**
   * Points a record's owner, creator and string attributes at instances already kept (the same text:
   * see #shared), so a value that many records repeat is kept once: an address as another record with
   * it spells it (the meta columns hold it lowercased), else the column's; an attribute, the column's.
   * Call after `set`, before `indexSlot`.
   * @param records the records by slot
   */
  share(slot: number, rec: StoredRecord, records: readonly (StoredRecord | undefined)[]): void {
    rec.owner = this.#sharedAddress('$owner', slot, rec.owner, records, (r) => r.owner) ?? rec.owner;
    rec.creator = this.#sharedAddress('$creator', slot, rec.creator, records, (r) => r.creator);
    for (const name of Object.keys(rec.attributes)) {
      const a = rec.attributes[name];
      if (typeof a !== 'string') continue;
      const held = this.#columns.get(name)?.data[slot];
      if (held === a && typeof held === 'string') rec.attributes[name] = held;
    }
  }

  #sharedAddress(
    name: string,
    slot: number,
    value: string | undefined,
    records: readonly (StoredRecord | undefined)[],
    field: (r: StoredRecord) => string | undefined,
  ): string | undefined {
    if (value === undefined) return undefined;
    const lowered = this.#columns.get(name)?.data[slot];
    if (typeof lowered !== 'string') return value;
    if (lowered === value) return lowered;
    const other = this.#indexes.get(name)?.anySlot(lowered);
    const rec = other === undefined ? undefined : records[other];
    const held = rec === undefined ? undefined : field(rec);
    return held === value ? held : value;
  }

  /** Adds a slot's column values to the indexes, or removes them. */
  indexSlot(slot: number, add: boolean): void {
    for (const [name, idx] of this.#indexes) {
      const col = this.#columns.get(name);
      if (col === undefined) continue;
      const key: Key | undefined = col.kind === 'num' ? col.data[slot] : col.data[slot];
      if (key === undefined || Number.isNaN(key)) continue;
      if (add) idx.add(key, slot);
      else idx.remove(key, slot);
    }
  }

  /** Grows the numeric columns to `cap` slots. */
  grow(cap: number): void {
    if (cap > 0) this.#declare();
    for (const col of this.#columns.values()) {
      if (col.kind === 'num' && col.data.length < cap) {
        // Grown geometrically, so they are not copied at every chunk of a slab.
        const data = new Float64Array(grownLength(col.data.length, cap)).fill(NaN);
        data.set(col.data);
        col.data = data;
      }
    }
  }
}
