// Where a record's attributes are kept: its shape (the attribute names in their order, and for each,
// which column holds its value or that it is kept beside the columns), a small number per slot into a
// table of the few shapes a collection's records share. The values are in the attribute columns
// (attributeColumns.ts); a shape rebuilds the record's attributes from them exactly, in order.

/** Where an attribute's value is: a numeric column, a numeric column holding a boolean as 1 or 0, a string column, or beside them. */
export const IN_NUM = 0;
export const IN_BOOL = 1;
export const IN_STR = 2;
export const EXTRA = 3;

export type Shape = {
  readonly names: readonly string[];
  /** Per name: IN_NUM, IN_BOOL, IN_STR or EXTRA. */
  readonly places: Uint8Array;
};

const NO_SHAPE: Shape = { names: [], places: new Uint8Array(0) };

function sameShape(s: Shape, names: readonly string[], places: readonly number[]): boolean {
  if (s.names.length !== names.length) return false;
  for (let i = 0; i < names.length; i++) if (s.names[i] !== names[i] || s.places[i] !== places[i]) return false;
  return true;
}

/** The shapes of a store's records, counted (a shape no live record has is dropped); 0 is no attributes. */
export class ShapeTable {
  #shapes: (Shape | undefined)[] = [NO_SHAPE];
  #counts: number[] = [0];
  #byKey = new Map<string, number>();
  #free: number[] = [];
  /** The last shape interned: the records of a block mostly share one. */
  #last = 0;

  /** The number of a shape, counted once more. */
  ref(names: readonly string[], places: readonly number[]): number {
    if (names.length === 0) return 0;
    let i = this.#last;
    const last = this.#shapes[i];
    if (i === 0 || last === undefined || !sameShape(last, names, places)) {
      const key = JSON.stringify([names, places]);
      const found = this.#byKey.get(key);
      if (found === undefined) {
        i = this.#free.pop() ?? this.#shapes.length;
        this.#shapes[i] = { names: [...names], places: Uint8Array.from(places) };
        this.#counts[i] = 0;
        this.#byKey.set(key, i);
      } else i = found;
      this.#last = i;
    }
    this.#counts[i]!++;
    return i;
  }

  unref(i: number): void {
    if (i === 0 || --this.#counts[i]! > 0) return;
    const s = this.#shapes[i]!;
    this.#byKey.delete(JSON.stringify([s.names, Array.from(s.places)]));
    this.#shapes[i] = undefined;
    this.#free.push(i);
    if (this.#last === i) this.#last = 0;
  }

  get(i: number): Shape {
    return this.#shapes[i] ?? NO_SHAPE;
  }

  /** Distinct shapes held. */
  get size(): number {
    return this.#byKey.size;
  }
}
