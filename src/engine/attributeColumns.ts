// Attribute columns and indexes of one collection store: values by slot for the filter predicates
// (declared attributes, and the $key/$owner/$creator meta attributes read from the record columns) and
// a posting index per attribute for the planner's enumeration and counts. The columns also keep the
// records' attributes themselves: a slot's shape (attributeShapes.ts) says which column holds each
// value, and the values no column holds exactly (undeclared attributes, a value of another type than
// its column's) are kept beside them. Rebuilt from the live records when the definition changes.

import type { AttributeType, AttributeValue } from '../collections/index.ts';
import { grownLength } from './arrayGrowth.ts';
import { EXTRA, IN_BOOL, IN_NUM, IN_STR, ShapeTable } from './attributeShapes.ts';
import { AttributeIndex } from './filter/attributeIndex.ts';
import { type Column, type RowSource, stringAt } from './filter/predicate.ts';
import type { Field, Key } from './filter/types.ts';
import { RecordColumns, type RecordFields } from './recordColumns.ts';

/** Meta attributes every collection can filter on, lowercased like the chain's hex. */
export const META_NAMES = ['$key', '$owner', '$creator'] as const;

/**
 * The attributes of every record that has none: one object, frozen so that nothing changes what
 * every such record reads.
 */
const NO_ATTRIBUTES: Readonly<Record<string, AttributeValue>> = Object.freeze(Object.setPrototypeOf({}, null));

function isMeta(name: string): boolean {
  return name === '$key' || name === '$owner' || name === '$creator';
}

/** A column's value at a slot, as its index keys it (undefined: absent). */
function keyAt(col: Column, slot: number): Key | undefined {
  if (col.kind !== 'num') return stringAt(col, slot);
  const v = col.data[slot]!;
  return Number.isNaN(v) ? undefined : v;
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
  /** Where the meta attributes are read. */
  readonly #records: RecordColumns;
  /** Whether `set` keeps the records' other fields too (columns made without a store's record columns). */
  readonly #ownsRecords: boolean;
  #shapes = new ShapeTable();
  /** Per slot: its attributes' shape (0: none). */
  #shapeOf = new Uint32Array(0);
  /** Per slot with any: the values of its shape's EXTRA attributes, in order (made when first needed). */
  #extras: Map<number, AttributeValue[]> | undefined;
  /** A buffer for the places of the record being set. */
  #places: number[] = [];

  /**
   * Empty columns; `reset` declares them.
   * @param capacity the current slot capacity, read whenever a column is created
   * @param records the store's record columns, where `$key`, `$owner` and `$creator` are read (which
   *   the store fills itself); without them the columns keep their own, filled by `set`
   */
  constructor(capacity: () => number, records?: RecordColumns) {
    this.#capacity = capacity;
    this.#ownsRecords = records === undefined;
    this.#records = records ?? new RecordColumns();
  }

  /**
   * An empty index for an attribute. `$key`'s reads its keys back from the `$key` column (they are unique,
   * so nearly all single-slot: see AttributeIndex), the column of the moment, since `reset` replaces it.
   */
  #newIndex(name: string): AttributeIndex {
    if (name !== '$key') return new AttributeIndex();
    const r = this.#records;
    return new AttributeIndex((slot) => r.keyLowerAt(slot), r.lowerKeys);
  }

  /** A meta attribute's column over the record columns as they are now. */
  #metaColumn(name: string): Column {
    const r = this.#records;
    if (name === '$key')
      return {
        kind: 'key',
        at: (slot) => (r.has(slot) ? r.keyLowerAt(slot) : undefined),
        equals: (slot, key) => r.has(slot) && r.lowerKeys.equals(slot, key),
      };
    return { kind: 'ref', refs: name === '$owner' ? r.owner : r.creator, values: r.addresses.lowers };
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
    this.#shapes = new ShapeTable();
    this.#shapeOf.fill(0);
    this.#extras = undefined;
  }

  /** Makes the declared columns and indexes that do not exist yet (the first record is coming). */
  #declare(): void {
    const attributes = this.#declared;
    if (attributes === undefined) return;
    this.#declared = undefined;
    for (const name of META_NAMES) if (!this.#indexes.has(name)) this.#indexes.set(name, this.#newIndex(name));
    for (const [name, type] of Object.entries(attributes)) {
      if (isMeta(name)) continue;
      if (!this.#indexes.has(name)) this.#indexes.set(name, this.#newIndex(name));
      if (!this.#columns.has(name)) this.#columns.set(name, this.#newColumn(type === 'str' ? 'str' : 'num'));
    }
  }

  /** The current column of a field, created empty for an undeclared one (RowSource). */
  column(field: Field): Column {
    if (isMeta(field.name)) return this.#metaColumn(field.name);
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

  /**
   * Keeps a record's attributes: each value in its attribute's column when one exists and holds it
   * exactly, else beside the columns; and clears the columns' other values at the slot (undefined
   * clears the slot entirely). The meta attributes are read from the record columns, which a store
   * fills itself (columns of their own keep the record's other fields here).
   */
  set(slot: number, rec: (RecordFields & { attributes: Readonly<Record<string, AttributeValue>> }) | undefined): void {
    if (this.#ownsRecords) {
      if (rec === undefined) this.#records.clear(slot);
      else {
        this.#records.grow(slot + 1);
        this.#records.set(slot, rec);
      }
    }
    this.#setAttributes(slot, rec?.attributes);
  }

  #setAttributes(slot: number, attrs: Readonly<Record<string, AttributeValue>> | undefined): void {
    if (attrs !== undefined) this.#declare();
    if (slot >= this.#shapeOf.length) this.#growShapes(slot + 1);
    this.#shapes.unref(this.#shapeOf[slot] ?? 0);
    this.#extras?.delete(slot);
    for (const col of this.#columns.values()) {
      if (col.kind === 'num') col.data[slot] = NaN;
      // Past the end a slot reads undefined already: a column of values most records lack stays as
      // short as its last value instead of 8 bytes a slot.
      else if (col.kind === 'str' && slot < col.data.length) col.data[slot] = undefined;
    }
    if (attrs === undefined) {
      if (slot < this.#shapeOf.length) this.#shapeOf[slot] = 0;
      return;
    }
    const names = Object.keys(attrs);
    const places = this.#places;
    places.length = names.length;
    let extras: AttributeValue[] | undefined;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const v = attrs[name]!;
      const col = isMeta(name) ? undefined : this.#columns.get(name);
      let place = EXTRA;
      if (col?.kind === 'num') {
        if (typeof v === 'number') {
          col.data[slot] = v;
          place = IN_NUM;
        } else if (typeof v === 'boolean') {
          col.data[slot] = v ? 1 : 0;
          place = IN_BOOL;
        }
      } else if (col?.kind === 'str' && typeof v === 'string') {
        col.data[slot] = this.#shared(name, col.data, v);
        place = IN_STR;
      }
      places[i] = place;
      if (place === EXTRA) (extras ??= []).push(v);
    }
    this.#shapeOf[slot] = this.#shapes.ref(names, places);
    if (extras !== undefined) (this.#extras ??= new Map()).set(slot, extras);
  }

  /**
   * A slot's attributes as they were set: the same names in the same order, the same values, no
   * prototype (a fresh object each call; the shared empty one for none).
   */
  attributesAt(slot: number): Record<string, AttributeValue> {
    const shape = this.#shapes.get(this.#shapeOf[slot] ?? 0);
    const { names, places } = shape;
    if (names.length === 0) return NO_ATTRIBUTES as Record<string, AttributeValue>;
    // No prototype before any name is set, so `__proto__` is an own property like any other.
    const out: Record<string, AttributeValue> = {};
    Object.setPrototypeOf(out, null);
    const extras = this.#extras?.get(slot);
    let e = 0;
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const place = places[i]!;
      if (place === EXTRA) out[name] = extras![e++]!;
      else {
        const col = this.#columns.get(name)!;
        if (col.kind === 'num') out[name] = place === IN_BOOL ? col.data[slot] === 1 : col.data[slot]!;
        else out[name] = stringAt(col, slot)!;
      }
    }
    return out;
  }

  /**
   * The instance of a string value the column already holds for another slot, else `v`. Decoded records
   * bring their own copy of each value: the slots sharing a value then share one string.
   */
  #shared(name: string, data: (string | undefined)[], v: string): string {
    const other = this.#indexes.get(name)?.anySlot(v);
    const held = other === undefined ? undefined : data[other];
    return held === v ? held : v;
  }

  /** Adds a slot's column values to the indexes, or removes them (before the slot is cleared). */
  indexSlot(slot: number, add: boolean): void {
    for (const [name, idx] of this.#indexes) {
      const col = isMeta(name) ? this.#metaColumn(name) : this.#columns.get(name);
      if (col === undefined) continue;
      const key = keyAt(col, slot);
      if (key === undefined) continue;
      if (add) idx.add(key, slot);
      else idx.remove(key, slot);
    }
  }

  #growShapes(cap: number): void {
    const shapeOf = new Uint32Array(grownLength(this.#shapeOf.length, cap));
    shapeOf.set(this.#shapeOf);
    this.#shapeOf = shapeOf;
  }

  /** Grows the numeric columns to `cap` slots. */
  grow(cap: number): void {
    if (cap > 0) this.#declare();
    if (this.#shapeOf.length < cap) this.#growShapes(cap);
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
