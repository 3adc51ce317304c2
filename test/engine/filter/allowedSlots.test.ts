// Tests the enumeration of a filter's slots (src/engine/filter/plan.ts: allowedSlots, allowedBits) over
// real AttributeIndexes and the predicate built on the same columns, against a plain evaluation of the
// filter on every live record. The attribute values are skewed so that an AND meets branches of very
// different sizes: the ones intersected through their postings and the ones left to the predicate.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { AttributeIndex, compareKeys } from '../../../src/engine/filter/attributeIndex.ts';
import { allowedBits, allowedSlots, type IndexSource } from '../../../src/engine/filter/plan.ts';
import { buildPredicate, type Column, type RowSource } from '../../../src/engine/filter/predicate.ts';
import type { CompareOp, Cond, Field, Key, Leaf } from '../../../src/engine/filter/types.ts';
import { globMatch } from '../../../src/query/index.ts';

const FIELDS = {
  // A few values, each a fair share.
  n: { name: 'n', type: 'i32', meta: false },
  // Mostly 0: `m = 0` is broad, `m = 3` narrow.
  m: { name: 'm', type: 'i32', meta: false },
  s: { name: 's', type: 'str', meta: false },
} as const satisfies Record<string, Field>;
type Name = keyof typeof FIELDS;
const NUMS = [0, 1, 2, 3, 4, 5];
const STRS = ['a', 'ab', 'b', 'ba', ''];
const GLOBS = ['a*', '*', '?', 'b?', '[ab]*'];
const OPS: CompareOp[] = ['=', '!=', '<', '<=', '>', '>='];

/** A record: its value of each field (absent when undefined), or a free slot (undefined). */
type Rec = Partial<Record<Name, Key>> | undefined;

const numValue = (name: 'n' | 'm'): fc.Arbitrary<Key | undefined> =>
  name === 'n'
    ? fc.option(fc.constantFrom(...NUMS), { nil: undefined, freq: 8 })
    : fc.oneof(
        { weight: 12, arbitrary: fc.constant(0) },
        { weight: 1, arbitrary: fc.constantFrom(...NUMS) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      );
const record: fc.Arbitrary<Rec> = fc.option(
  fc.record({
    n: numValue('n'),
    m: numValue('m'),
    s: fc.option(fc.constantFrom(...STRS), { nil: undefined, freq: 6 }),
  }),
  { nil: undefined, freq: 10 },
);

const numLeaf = (name: 'n' | 'm'): fc.Arbitrary<Leaf> =>
  fc.oneof(
    fc
      .tuple(fc.constantFrom(...OPS), fc.constantFrom(...NUMS))
      .map(([op, key]): Leaf => ({ t: 'cmp', field: FIELDS[name], op, key })),
    fc
      .tuple(fc.array(fc.constantFrom(...NUMS), { minLength: 1, maxLength: 3 }), fc.boolean())
      .map(([keys, negated]): Leaf => ({ t: 'in', field: FIELDS[name], negated, keys })),
  );
const strLeaf: fc.Arbitrary<Leaf> = fc.oneof(
  fc
    .tuple(fc.constantFrom(...OPS), fc.constantFrom(...STRS))
    .map(([op, key]): Leaf => ({ t: 'cmp', field: FIELDS.s, op, key })),
  fc
    .tuple(fc.array(fc.constantFrom(...STRS), { minLength: 1, maxLength: 3 }), fc.boolean())
    .map(([keys, negated]): Leaf => ({ t: 'in', field: FIELDS.s, negated, keys })),
  fc
    .tuple(fc.constantFrom(...GLOBS), fc.boolean())
    .map(([pattern, negated]): Leaf => ({ t: 'glob', field: FIELDS.s, negated, pattern })),
);
const leaf = fc.oneof(numLeaf('n'), numLeaf('m'), strLeaf);

// Negations are pushed to the leaves by compile.ts, so a filter is leaves under nested and/or.
const condGen: fc.Arbitrary<Cond> = fc.letrec<{ node: Cond }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('node'), { minLength: 2, maxLength: 4 }).map((items): Cond => ({ t: 'and', items })),
    fc.array(tie('node'), { minLength: 2, maxLength: 3 }).map((items): Cond => ({ t: 'or', items })),
  ),
})).node;

function leafHolds(l: Leaf, v: Key | undefined): boolean {
  if (v === undefined) return false;
  switch (l.t) {
    case 'cmp': {
      const c = compareKeys(v, l.key);
      return { '=': c === 0, '!=': c !== 0, '<': c < 0, '<=': c <= 0, '>': c > 0, '>=': c >= 0 }[l.op];
    }
    case 'in':
      return l.keys.includes(v) !== l.negated;
    case 'glob':
      return globMatch(l.pattern, v as string) !== l.negated;
  }
}

function holds(c: Cond, r: NonNullable<Rec>): boolean {
  switch (c.t) {
    case 'all':
      return true;
    case 'and':
      return c.items.every((i) => holds(i, r));
    case 'or':
      return c.items.some((i) => holds(i, r));
    default:
      return leafHolds(c, r[c.field.name as Name]);
  }
}

/** The indexes and columns a store would keep for these records (free slots left out of both). */
function storeOf(recs: Rec[]): { src: IndexSource; rows: RowSource } {
  const indexes = new Map<string, AttributeIndex>();
  const columns = new Map<string, Column>();
  for (const name of Object.keys(FIELDS) as Name[]) {
    const idx = new AttributeIndex();
    const num = FIELDS[name].type !== 'str';
    const data = num ? new Float64Array(recs.length).fill(Number.NaN) : new Array<string | undefined>(recs.length);
    recs.forEach((r, slot) => {
      const v = r?.[name];
      if (v === undefined) return;
      idx.add(v, slot);
      data[slot] = v as never;
    });
    indexes.set(name, idx);
    columns.set(
      name,
      num ? { kind: 'num', data: data as Float64Array } : { kind: 'str', data: data as (string | undefined)[] },
    );
  }
  const live = recs.flatMap((r, slot) => (r === undefined ? [] : [slot]));
  return {
    src: {
      liveCount: live.length,
      index: (field) => indexes.get(field.name)!,
      forEachLive: (fn) => {
        for (const s of live) fn(s);
      },
    },
    rows: { column: (field) => columns.get(field.name)! },
  };
}

describe('allowedSlots and allowedBits: a filter enumerated through the indexes', () => {
  test('property: exactly the live records the filter matches, ascending; the bitset holds the same', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 300 }), condGen, (recs, cond) => {
        const { src, rows } = storeOf(recs);
        const predicate = buildPredicate(cond, rows);
        const want = recs.flatMap((r, slot) => (r !== undefined && holds(cond, r) ? [slot] : []));
        assert.deepEqual(Array.from(allowedSlots(cond, src, predicate)), want);
        const { bits, count } = allowedBits(cond, src, predicate, recs.length);
        assert.equal(bits.length, (recs.length + 7) >>> 3);
        const set: number[] = [];
        for (let s = 0; s < recs.length; s++) if ((bits[s >>> 3]! >> (s & 7)) & 1) set.push(s);
        assert.deepEqual(set, want);
        assert.equal(count, want.length);
      }),
      { numRuns: 600 },
    );
  });

  test('behavior: an AND of a narrow and a broad branch, the broad one left to the predicate', () => {
    // 4,000 slots: n cycles through 0 … 99, m is 0 but on every 50th slot.
    const recs: Rec[] = Array.from({ length: 4000 }, (_, i) => ({ n: i % 100, m: i % 50 === 0 ? 1 : 0 }));
    const { src, rows } = storeOf(recs);
    const cond: Cond = {
      t: 'and',
      items: [
        { t: 'cmp', field: FIELDS.m, op: '=', key: 0 },
        { t: 'cmp', field: FIELDS.n, op: '<', key: 2 },
      ],
    };
    const want = recs.flatMap((r, slot) => (holds(cond, r!) ? [slot] : []));
    assert.equal(want.length, 40);
    assert.deepEqual(Array.from(allowedSlots(cond, src, buildPredicate(cond, rows))), want);
  });
});
