// Evaluates a Cond over one record slot: the exact filter semantics (Arkiv: every leaf needs the
// attribute present; negations were pushed down by compile.ts). Used by the planner as the HNSW
// traversal filter, to verify enumerated candidates, and by keyword search.

import { compareBytewise, globMatch } from '../../query/index.ts';
import type { CompareOp, Cond, Field, Key, Leaf } from './types.ts';

/**
 * Attribute values by slot, as the store keeps them: numeric and bool attributes in a Float64Array
 * (NaN = absent), strings and meta attributes in an array (undefined = absent). Typed reads keep the
 * HNSW traversal filter close to a bare typed-array lookup (ARCHITECTURE.md §10.4).
 */
export type Column = { kind: 'num'; data: Float64Array } | { kind: 'str'; data: (string | undefined)[] };

/** Where predicates read values. */
export type RowSource = {
  /** The current column of a field (a fresh predicate must be built after the store grows). */
  column(field: Field): Column;
};

export type SlotPredicate = (slot: number) => boolean;

function holds(op: CompareOp, c: number): boolean {
  switch (op) {
    case '=':
      return c === 0;
    case '!=':
      return c !== 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
  }
}

/**
 * The test a leaf applies to a present value.
 * @param leaf a compiled leaf
 * @returns key → boolean
 */
export function leafTest(leaf: Leaf): (v: Key) => boolean {
  switch (leaf.t) {
    case 'cmp': {
      const { op, key } = leaf;
      if (typeof key === 'number') {
        if (op === '=') return (v) => v === key;
        if (op === '!=') return (v) => v !== key;
        return (v) => holds(op, (v as number) < key ? -1 : (v as number) > key ? 1 : 0);
      }
      if (op === '=') return (v) => v === key;
      if (op === '!=') return (v) => v !== key;
      return (v) => holds(op, compareBytewise(v as string, key));
    }
    case 'in': {
      const set = new Set<Key>(leaf.keys);
      const negated = leaf.negated;
      return (v) => set.has(v) !== negated;
    }
    case 'glob': {
      const { pattern, negated } = leaf;
      return (v) => globMatch(pattern, v as string) !== negated;
    }
  }
}

/**
 * Compiles a Cond to a slot predicate.
 * @param cond the filter
 * @param rows where values come from
 * @returns slot → passes
 * @example buildPredicate(compileWhere('stars > 3', attrs), store.rows)(slot)
 */
export function buildPredicate(cond: Cond, rows: RowSource): SlotPredicate {
  switch (cond.t) {
    case 'all':
      return () => true;
    case 'and': {
      const parts = cond.items.map((c) => buildPredicate(c, rows));
      if (parts.length === 2) {
        const [a, b] = parts as [SlotPredicate, SlotPredicate];
        return (s) => a(s) && b(s);
      }
      return (s) => {
        for (const p of parts) if (!p(s)) return false;
        return true;
      };
    }
    case 'or': {
      const parts = cond.items.map((c) => buildPredicate(c, rows));
      return (s) => {
        for (const p of parts) if (p(s)) return true;
        return false;
      };
    }
    default: {
      const test = leafTest(cond);
      const col = rows.column(cond.field);
      if (col.kind === 'num') {
        const data = col.data;
        if (cond.t === 'cmp') {
          const key = cond.key as number;
          // NaN (absent) fails every comparison except !=, which checks presence explicitly.
          switch (cond.op) {
            case '=':
              return (s) => data[s] === key;
            case '!=':
              return (s) => {
                const v = data[s]!;
                return !Number.isNaN(v) && v !== key;
              };
            case '<':
              return (s) => data[s]! < key;
            case '<=':
              return (s) => data[s]! <= key;
            case '>':
              return (s) => data[s]! > key;
            case '>=':
              return (s) => data[s]! >= key;
          }
        }
        return (s) => {
          const v = data[s]!;
          return !Number.isNaN(v) && test(v);
        };
      }
      const data = col.data;
      if (cond.t === 'cmp' && cond.op === '=') {
        const key = cond.key;
        return (s) => data[s] === key;
      }
      return (s) => {
        const v = data[s];
        return v !== undefined && test(v);
      };
    }
  }
}
