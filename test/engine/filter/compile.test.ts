// Tests src/engine/filter/ (compile.ts, predicate.ts, plan.ts, attributeIndex.ts) through
// compileWhere/compileJsonFilter and CollectionStore.count/search: where ↔ JSON round trips, rejections
// with positions, and Arkiv semantics against a straightforward reference evaluator on random data.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { AttributeValue, VectorRecord } from '../../../src/collections/index.ts';
import { CollectionStore, compileJsonFilter, compileWhere, InvalidFilterError } from '../../../src/engine/index.ts';
import { globMatch } from '../../../src/query/index.ts';
import { definition, makeRecord, mulberry32 } from '../helpers.ts';

const ATTRS = { s: 'str', i: 'i32', u: 'uint', f: 'f32', b: 'bool' } as const;
const S_VALUES = ['a', 'b', 'ab', 'ba', '', 'é', 'x/y', 'B'];
const I_VALUES = [-3, -1, 0, 1, 2, 3];
const U_VALUES = [0, 1, 2, 5];
const F_VALUES = [-1.5, 0, 0.5, 2];
const OWNERS = ['0x00000000000000000000000000000000000000aa', '0x00000000000000000000000000000000000000bb'];
const GLOBS = ['a*', '*', '?', 'b?', '[ab]*', '\\a', 'x/*', '*b', '[^a]*'];

// ---- generator of (where text, JSON filter, reference meaning, negated reference meaning) ----

type Rec = { attrs: Record<string, AttributeValue>; owner: string };
type Gen = { text: string; json: unknown; ref: (r: Rec) => boolean; neg: (r: Rec) => boolean };

const OP_NAMES = { '=': 'eq', '!=': 'ne', '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' } as const;
type Op = keyof typeof OP_NAMES;
const NEG: Record<Op, Op> = { '=': '!=', '!=': '=', '<': '>=', '>=': '<', '<=': '>', '>': '<=' };

function cmpValues(a: AttributeValue, b: AttributeValue): number {
  const x = typeof a === 'boolean' ? Number(a) : a;
  const y = typeof b === 'boolean' ? Number(b) : b;
  return x < y ? -1 : x > y ? 1 : 0;
}

function holds(op: Op, c: number): boolean {
  return op === '='
    ? c === 0
    : op === '!='
      ? c !== 0
      : op === '<'
        ? c < 0
        : op === '<='
          ? c <= 0
          : op === '>'
            ? c > 0
            : c >= 0;
}

function literal(attr: keyof typeof ATTRS, v: AttributeValue, typed: boolean, quote: number): string {
  switch (attr) {
    case 's': {
      const q = quote === 0 ? `'${(v as string).replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'` : JSON.stringify(v);
      return typed ? `str(${q})` : q;
    }
    case 'i':
      return typed ? `i32(${v})` : String(v);
    case 'u':
      return typed ? `uint(${v})` : String(v);
    case 'f':
      return typed ? `f32(${v})` : String(v);
    case 'b':
      return typed ? `bool(${v})` : v ? '1' : '0';
  }
}

const attrName = fc.constantFrom<keyof typeof ATTRS>('s', 'i', 'u', 'f', 'b');
const valueFor = (a: keyof typeof ATTRS): fc.Arbitrary<AttributeValue> =>
  a === 's'
    ? fc.constantFrom(...S_VALUES)
    : a === 'i'
      ? fc.constantFrom(...I_VALUES)
      : a === 'u'
        ? fc.constantFrom(...U_VALUES)
        : a === 'f'
          ? fc.constantFrom(...F_VALUES)
          : fc.boolean();

const cmpLeaf: fc.Arbitrary<Gen> = attrName.chain((a) =>
  fc
    .tuple(fc.constantFrom<Op>('=', '!=', '<', '<=', '>', '>='), valueFor(a), fc.boolean(), fc.nat(1))
    .map(([op, v, typed, quote]): Gen => {
      const test = (o: Op) => (r: Rec) => r.attrs[a] !== undefined && holds(o, cmpValues(r.attrs[a]!, v));
      return {
        text: `${a} ${op} ${literal(a, v, typed, quote)}`,
        json: { [OP_NAMES[op]]: { [a]: v } },
        ref: test(op),
        neg: test(NEG[op]),
      };
    }),
);

const inLeaf: fc.Arbitrary<Gen> = attrName.chain((a) =>
  fc
    .tuple(fc.array(valueFor(a), { minLength: 1, maxLength: 3 }), fc.boolean(), fc.boolean())
    .map(([vs, negated, typed]): Gen => {
      const has = (r: Rec) => vs.some((v) => cmpValues(r.attrs[a]!, v) === 0);
      const t = (n: boolean) => (r: Rec) => r.attrs[a] !== undefined && has(r) !== n;
      const text = `${a} ${negated ? 'NOT IN' : 'IN'} (${vs.map((v) => literal(a, v, typed, 1)).join(' ')})`;
      const json = negated ? { not: { in: { [a]: vs } } } : { in: { [a]: vs } };
      return { text, json, ref: t(negated), neg: t(!negated) };
    }),
);

const globLeaf: fc.Arbitrary<Gen> = fc
  .tuple(fc.constantFrom(...GLOBS), fc.boolean(), fc.constantFrom('~', 'GLOB', 'glob'))
  .map(([p, negated, op]): Gen => {
    const t = (n: boolean) => (r: Rec) => r.attrs.s !== undefined && globMatch(p, r.attrs.s as string) !== n;
    const text = negated ? `s ${op === '~' ? '!~' : 'NOT GLOB'} ${JSON.stringify(p)}` : `s ${op} ${JSON.stringify(p)}`;
    const json = negated ? { not: { glob: { s: p } } } : { glob: { s: p } };
    return { text, json, ref: t(negated), neg: t(!negated) };
  });

const ownerLeaf: fc.Arbitrary<Gen> = fc
  .tuple(fc.constantFrom(...OWNERS), fc.boolean(), fc.boolean())
  .map(([o, negated, upper]): Gen => {
    const lit = upper ? o.toUpperCase().replace('0X', '0x') : o;
    const t = (n: boolean) => (r: Rec) => (r.owner === o) !== n;
    return {
      text: `$owner ${negated ? '!=' : '='} ${lit}`,
      json: { [negated ? 'ne' : 'eq']: { $owner: lit } },
      ref: t(negated),
      neg: t(!negated),
    };
  });

const leaf = fc.oneof(cmpLeaf, cmpLeaf, inLeaf, globLeaf, ownerLeaf);

const filterGen: fc.Arbitrary<Gen> = fc.letrec<{ node: Gen }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.tuple(tie('node'), tie('node'), fc.constantFrom('&&', 'AND', 'and')).map(
      ([a, b, op]): Gen => ({
        text: `(${a.text}) ${op} (${b.text})`,
        json: { and: [a.json, b.json] },
        ref: (r) => a.ref(r) && b.ref(r),
        neg: (r) => a.neg(r) || b.neg(r),
      }),
    ),
    fc.tuple(tie('node'), tie('node'), fc.constantFrom('||', 'OR', 'or')).map(
      ([a, b, op]): Gen => ({
        text: `(${a.text}) ${op} (${b.text})`,
        json: { or: [a.json, b.json] },
        ref: (r) => a.ref(r) || b.ref(r),
        neg: (r) => a.neg(r) && b.neg(r),
      }),
    ),
    tie('node').map((a): Gen => ({ text: `!(${a.text})`, json: { not: a.json }, ref: a.neg, neg: a.ref })),
  ),
})).node;

// ---- random data ----

function randomData(n: number, seed: number): { recs: Rec[]; records: VectorRecord[] } {
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const recs: Rec[] = [];
  const records: VectorRecord[] = [];
  for (let i = 0; i < n; i++) {
    const attrs: Record<string, AttributeValue> = {};
    if (rand() < 0.8) attrs.s = pick(S_VALUES);
    if (rand() < 0.8) attrs.i = pick(I_VALUES);
    if (rand() < 0.8) attrs.u = pick(U_VALUES);
    if (rand() < 0.8) attrs.f = pick(F_VALUES);
    if (rand() < 0.8) attrs.b = rand() < 0.5;
    const owner = pick(OWNERS);
    recs.push({ attrs, owner });
    const v = Array.from({ length: 8 }, () => rand() * 2 - 1);
    records.push(makeRecord(i, v, attrs, { owner }));
  }
  return { recs, records };
}

async function storeWith(records: VectorRecord[], dim = 8): Promise<CollectionStore> {
  const store = new CollectionStore('test', definition(dim, { ...ATTRS }));
  await store.apply({ remove: [], upsert: records });
  return store;
}

function rejects(fn: () => unknown, message: RegExp, at: { position?: number; path?: string } = {}): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof InvalidFilterError, `expected InvalidFilterError, got ${String(err)}`);
    assert.equal(err.code, 'invalid_filter');
    assert.equal(err.status, 400);
    assert.match(err.shortMessage, message);
    assert.match(err.shortMessage, /^[^A-Z]/, 'messages start lowercase');
    if (at.position !== undefined) assert.equal(err.position, at.position);
    if (at.path !== undefined) assert.equal(err.path, at.path);
    return true;
  });
}

describe('compile: where and JSON filter', () => {
  test('round trip: a where text and its JSON form compile to the same tree', () => {
    fc.assert(
      fc.property(filterGen, (g) => {
        assert.deepEqual(compileWhere(g.text, ATTRS), compileJsonFilter(g.json, ATTRS));
      }),
      { numRuns: 400 },
    );
  });

  test('bare literals take the declared type; typed literals must match it', () => {
    assert.deepEqual(compileWhere('i = -5', ATTRS), compileWhere('i = i32(-5)', ATTRS));
    assert.deepEqual(compileWhere('f >= 0.1', ATTRS), compileWhere('f >= f32(0.1)', ATTRS));
    assert.deepEqual(compileWhere('b = 1', ATTRS), compileWhere('b = bool(true)', ATTRS));
    assert.deepEqual(compileWhere("s = 'x'", ATTRS), compileWhere('s = str("x")', ATTRS));
    assert.deepEqual(compileWhere('$all', ATTRS), { t: 'all' });
  });

  test('behavior: negation is pushed to the leaves (De Morgan, flipped operators)', () => {
    assert.deepEqual(compileWhere('!(i < 2 && s = "a")', ATTRS), compileWhere('i >= 2 || s != "a"', ATTRS));
    assert.deepEqual(
      compileWhere('NOT (s IN ("a") || s ~ "b*")', ATTRS),
      compileWhere('s NOT IN ("a") && s !~ "b*"', ATTRS),
    );
  });

  test('error: where syntax errors carry the position', () => {
    rejects(() => compileWhere('i = = 3', ATTRS), /unexpected token "="/, { position: 4 });
    rejects(() => compileWhere('s = "a" &&', ATTRS), /unexpected token/, { position: 10 });
    rejects(() => compileWhere('', ATTRS), /unexpected token/, { position: 0 });
  });

  test('error: unknown attributes and unsupported meta attributes', () => {
    rejects(() => compileWhere('s = "a" && colour = "red"', ATTRS), /unknown attribute colour/, { position: 11 });
    rejects(() => compileWhere('$expiration = 5', ATTRS), /\$expiration is not supported/, { position: 0 });
    rejects(
      () => compileJsonFilter({ and: [{ eq: { s: 'a' } }, { gt: { colour: 1 } }] }, ATTRS),
      /unknown attribute colour/,
      { path: 'and[1].gt.colour' },
    );
  });

  test('error: literals that do not fit the declared type', () => {
    rejects(() => compileWhere('s = 5', ATTRS), /literal 5 does not fit attribute s \(str\)/, { position: 0 });
    rejects(() => compileWhere("i = 'x'", ATTRS), /does not fit attribute i \(i32\)/);
    rejects(() => compileWhere('i = 1.5', ATTRS), /does not fit/);
    rejects(() => compileWhere('i = 2147483648', ATTRS), /does not fit/);
    rejects(() => compileWhere('i = uint(3)', ATTRS), /literal uint\(3\) does not fit attribute i \(i32\)/);
    rejects(() => compileWhere('u = -1', ATTRS), /does not fit attribute u \(uint\)/);
    rejects(() => compileWhere('u = 9007199254740992', ATTRS), /does not fit/);
    rejects(() => compileWhere('b = 2', ATTRS), /does not fit attribute b \(bool\)/);
    rejects(() => compileWhere('f = i32(1)', ATTRS), /does not fit/);
    rejects(() => compileWhere('$owner = 5', ATTRS), /does not fit/);
    rejects(() => compileWhere('i IN (1 2 1.5)', ATTRS), /1\.5 does not fit/);
  });

  test('error: glob needs a str attribute and a well-formed pattern', () => {
    rejects(() => compileWhere('i ~ "1*"', ATTRS), /glob needs a str attribute/);
    rejects(() => compileWhere('s ~ "[a"', ATTRS), /malformed/);
    rejects(() => compileJsonFilter({ glob: { s: 5 } }, ATTRS), /must be a string/, { path: 'glob.s' });
  });

  test('error: JSON operators, shapes and values', () => {
    rejects(() => compileJsonFilter({ like: { s: 'a' } }, ATTRS), /unknown filter operator "like"/, { path: 'like' });
    rejects(() => compileJsonFilter({ eq: { s: 'a' }, ne: { s: 'b' } }, ATTRS), /one operator, not 2/);
    rejects(() => compileJsonFilter({}, ATTRS), /names no operator/);
    rejects(() => compileJsonFilter([], ATTRS), /must be an object/);
    rejects(() => compileJsonFilter({ and: [] }, ATTRS), /non-empty array/);
    rejects(() => compileJsonFilter({ in: { i: [] } }, ATTRS), /non-empty array/);
    rejects(() => compileJsonFilter({ eq: { b: 1 } }, ATTRS), /true or false/, { path: 'eq.b' });
    rejects(() => compileJsonFilter({ eq: { i: '3' } }, ATTRS), /must be an integer/);
    rejects(() => compileJsonFilter({ gt: { $owner: '0x1' } }, ATTRS), /only eq and ne/);
    rejects(() => compileJsonFilter({ not: { eq: { u: 1.5 } } }, ATTRS), /must be an integer/, { path: 'not.eq.u' });
  });

  test('fuzz: arbitrary where text compiles or throws InvalidFilterError, nothing else', () => {
    const pieces = fc.constantFrom(
      's',
      'i',
      'u',
      'f',
      'b',
      'x',
      '$owner',
      '=',
      '!=',
      '<',
      '>=',
      '~',
      '!~',
      '&&',
      '||',
      '!',
      '(',
      ')',
      'IN',
      'NOT',
      '"a"',
      "'b'",
      '1',
      '-2',
      '0.5',
      'i32(1)',
      'bool(true)',
      '$all',
      '*',
      ' ',
    );
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 12 }), (parts) => {
        const text = parts.join(' ');
        try {
          compileWhere(text, ATTRS);
        } catch (err) {
          assert.ok(err instanceof InvalidFilterError, `${JSON.stringify(text)} threw ${String(err)}`);
          assert.ok(err.position !== undefined && err.position >= 0 && err.position <= text.length);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('filter semantics against a reference evaluator', async () => {
  const { recs, records } = randomData(400, 7);
  const store = await storeWith(records);
  const byId = new Map(records.map((r, i) => [r.id, recs[i]!]));

  test('count(where) = count(filter) = reference count', () => {
    fc.assert(
      fc.property(filterGen, (g) => {
        const expected = recs.filter(g.ref).length;
        assert.equal(store.count({ where: g.text }), expected, g.text);
        assert.equal(store.count({ filter: g.json }), expected, JSON.stringify(g.json));
      }),
      { numRuns: 300 },
    );
  });

  test('where and filter together are ANDed', () => {
    fc.assert(
      fc.property(filterGen, filterGen, (a, b) => {
        assert.equal(store.count({ where: a.text, filter: b.json }), recs.filter((r) => a.ref(r) && b.ref(r)).length);
      }),
      { numRuns: 100 },
    );
  });

  test('search returns exactly the matching records, nearest first', () => {
    const rand = mulberry32(99);
    fc.assert(
      fc.property(filterGen, (g) => {
        const q = Array.from({ length: 8 }, () => rand() * 2 - 1);
        const { results } = store.search({ vector: q, k: 50, where: g.text });
        const matching = records.filter((_, i) => g.ref(recs[i]!));
        assert.equal(results.length, Math.min(50, matching.length));
        for (const r of results) assert.ok(g.ref(byId.get(r.record.id)!), `${r.record.id} does not match ${g.text}`);
        for (let i = 1; i < results.length; i++) assert.ok(results[i - 1]!.distance <= results[i]!.distance);
      }),
      { numRuns: 100 },
    );
  });

  test('behavior: != / NOT IN / !~ / negated comparisons never match records lacking the attribute', () => {
    const lacking = recs.filter((r) => r.attrs.i === undefined).length;
    assert.ok(lacking > 0);
    const withI = recs.length - lacking;
    assert.equal(store.count({ where: 'i = 0' }) + store.count({ where: 'i != 0' }), withI);
    assert.equal(store.count({ where: '!(i < 1)' }) + store.count({ where: 'i < 1' }), withI);
    assert.equal(store.count({ where: 'i IN (0 1)' }) + store.count({ where: 'i NOT IN (0 1)' }), withI);
    const withS = recs.filter((r) => r.attrs.s !== undefined).length;
    assert.equal(store.count({ where: 's ~ "a*"' }) + store.count({ where: 's !~ "a*"' }), withS);
    assert.equal(store.count({ filter: { not: { eq: { i: 0 } } } }), store.count({ where: 'i != 0' }));
  });

  test('behavior: strings compare bytewise, $owner case-insensitively', () => {
    assert.equal(
      store.count({ where: 's < "b"' }),
      recs.filter((r) => r.attrs.s !== undefined && (r.attrs.s as string) < 'b').length,
    );
    assert.equal(
      store.count({ where: `$owner = ${OWNERS[0]!.toUpperCase().replace('0X', '0x')}` }),
      recs.filter((r) => r.owner === OWNERS[0]).length,
    );
    assert.equal(store.count({ where: `$key = ${records[3]!.key}` }), 1);
  });
});

describe('filter semantics after updates', () => {
  test('counts follow removals and replacements', async () => {
    const { recs, records } = randomData(200, 11);
    const store = await storeWith(records);
    // Replace the first 50 with flipped attributes, remove the next 50.
    const flipped = records.slice(0, 50).map((r, i) => makeRecord(i, r.vector, { i: 3 }, { id: r.id, key: r.key }));
    await store.apply({ remove: records.slice(50, 100).map((r) => r.key), upsert: flipped });
    const expected = recs.slice(100).filter((r) => r.attrs.i === 3).length + 50;
    assert.equal(store.count({ where: 'i = 3' }), expected);
    assert.equal(store.count({ where: 'i >= 3' }), expected);
    assert.equal(store.size, 150);
  });
});
