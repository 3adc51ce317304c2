// Tests src/query/evaluate.ts (Arkiv node semantics) against a reference that does what the node's
// normalize.go + evaluate.go do: push negations down, expand to DNF, evaluate each leaf as a set.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  compileArkivQuery,
  globMatch,
  parseQuery,
  type CompareOp,
  type Literal,
  type QueryableEntity,
  type QueryExpr,
} from '../../src/query/index.ts';
import { UINT64_MAX } from './arbitraries.ts';

type Leaf = Extract<QueryExpr, { type: 'compare' | 'in' | 'glob' }>;
const FLIP: Record<CompareOp, CompareOp> = { '=': '!=', '!=': '=', '<': '>=', '>=': '<', '<=': '>', '>': '<=' };

/** normalize.go: negation pushed to leaves, then the AND/OR tree multiplied out into DNF. */
function dnf(expr: QueryExpr, negate = false): Leaf[][] {
  switch (expr.type) {
    case 'all':
      return [[]];
    case 'not':
      return dnf(expr.expr, !negate);
    case 'compare':
      return [[negate ? { ...expr, op: FLIP[expr.op] } : expr]];
    case 'in':
    case 'glob':
      return [[negate ? { ...expr, negated: !expr.negated } : expr]];
    case 'and':
    case 'or': {
      const parts = expr.items.map((i) => dnf(i, negate));
      if ((expr.type === 'or') !== negate) return parts.flat();
      return parts.reduce<Leaf[][]>((acc, d) => acc.flatMap((conj) => d.map((c) => [...conj, ...c])), [[]]);
    }
  }
}

const bytes = (s: string) => Buffer.from(s, 'utf8');
const META_STRING: Record<string, (e: QueryableEntity) => string> = {
  $key: (e) => e.key,
  $owner: (e) => e.owner,
  $creator: (e) => e.creator,
};
const META_NUMERIC: Record<string, (e: QueryableEntity) => bigint> = {
  $expiration: (e) => e.expiresAt,
  $sequence: (e) => e.sequence,
};

/** The bitmap of one leaf: entities having the attribute (of the literal's type) whose value satisfies it. */
function leafHolds(leaf: Leaf, e: QueryableEntity): boolean {
  const isString = leaf.type === 'glob' || (leaf.type === 'compare' ? leaf.value : leaf.values[0]!).kind === 'string';
  const meta = leaf.attribute.startsWith('$');
  const lower = (lit: Literal) => {
    const v = (lit as { value: string }).value;
    return leaf.attribute in META_STRING ? v.toLowerCase() : v;
  };
  if (isString) {
    const v = meta ? META_STRING[leaf.attribute]?.(e) : e.stringAttributes.get(leaf.attribute);
    if (v === undefined) return false;
    if (leaf.type === 'glob') return globMatch(leaf.pattern, v) !== leaf.negated;
    if (leaf.type === 'in') return leaf.values.some((l) => lower(l) === v) !== leaf.negated;
    const c = Buffer.compare(bytes(v), bytes(lower(leaf.value)));
    return opHolds(leaf.op, c);
  }
  const v = meta ? META_NUMERIC[leaf.attribute]?.(e) : e.numericAttributes.get(leaf.attribute);
  if (v === undefined) return false;
  if (leaf.type === 'in') return leaf.values.some((l) => (l as { value: bigint }).value === v) !== leaf.negated;
  if (leaf.type !== 'compare') return false;
  const t = (leaf.value as { value: bigint }).value;
  return opHolds(leaf.op, v < t ? -1 : v > t ? 1 : 0);
}

function opHolds(op: CompareOp, c: number): boolean {
  return { '=': c === 0, '!=': c !== 0, '<': c < 0, '<=': c <= 0, '>': c > 0, '>=': c >= 0 }[op];
}

function reference(expr: QueryExpr, e: QueryableEntity): boolean {
  return dnf(expr).some((conj) => conj.every((leaf) => leafHolds(leaf, e)));
}

// Small pools so that random queries actually hit random entities.
const NAMES = ['a', 'b', 'c'];
const STRINGS = ['', 'a', 'ab', 'b', 'B', 'a/b', 'é', '\uffff', '😀', 'x*y'];
const NUMBERS = [0n, 1n, 5n, 8n, UINT64_MAX];
const HEXES = [`0x${'11'.repeat(20)}`, `0x${'ab'.repeat(20)}`, `0x${'cd'.repeat(32)}`];
const PATTERNS = ['*', 'a*', '?', '*b', '[a-b]*', '[^a]', 'a\\/b', '*/*', '[', '\\', 'x\\*y', '😀'];

const entityArb: fc.Arbitrary<QueryableEntity> = fc.record({
  key: fc.constantFrom(...HEXES),
  owner: fc.constantFrom(...HEXES),
  creator: fc.constantFrom(...HEXES),
  expiresAt: fc.constantFrom(...NUMBERS),
  sequence: fc.constantFrom(...NUMBERS),
  stringAttributes: fc
    .dictionary(fc.constantFrom(...NAMES), fc.constantFrom(...STRINGS))
    .map((d) => new Map(Object.entries(d))),
  numericAttributes: fc
    .dictionary(fc.constantFrom(...NAMES), fc.constantFrom(...NUMBERS))
    .map((d) => new Map(Object.entries(d))),
});

const str = fc.constantFrom(...STRINGS).map((value): Literal => ({ kind: 'string', value }));
const metaStr = fc
  .tuple(fc.constantFrom(...HEXES), fc.boolean())
  .map(
    ([h, upper]): Literal => ({ kind: 'string', value: upper ? h.toUpperCase().replace('0X', '0x') : h, hex: true }),
  );
const num = fc
  .constantFrom(...NUMBERS, 3n)
  .map((value): Literal => ({ kind: 'number', value, text: value.toString() }));
const ops = fc.constantFrom<CompareOp>('=', '!=', '<', '<=', '>', '>=');

const leafArb: fc.Arbitrary<QueryExpr> = fc.oneof(
  fc.record({
    type: fc.constant('compare' as const),
    op: ops,
    attribute: fc.constantFrom(...NAMES),
    value: fc.oneof(str, num),
    position: fc.constant(0),
  }),
  fc.record({
    type: fc.constant('compare' as const),
    op: fc.constantFrom<CompareOp>('=', '!='),
    attribute: fc.constantFrom('$key', '$owner', '$creator', '$expiration', '$sequence'),
    value: fc.oneof(metaStr, num),
    position: fc.constant(0),
  }),
  fc.record({
    type: fc.constant('in' as const),
    negated: fc.boolean(),
    attribute: fc.constantFrom(...NAMES, '$owner', '$sequence'),
    values: fc.oneof(
      fc.array(fc.oneof(str, metaStr), { minLength: 1, maxLength: 3 }),
      fc.array(num, { minLength: 1, maxLength: 3 }),
    ),
    position: fc.constant(0),
  }),
  fc.record({
    type: fc.constant('glob' as const),
    negated: fc.boolean(),
    attribute: fc.constantFrom(...NAMES),
    pattern: fc.constantFrom(...PATTERNS),
    position: fc.constant(0),
  }),
);

const queryArb: fc.Arbitrary<QueryExpr> = fc.letrec<{ node: QueryExpr }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', maxDepth: 4, depthIdentifier: 'sem' },
    leafArb,
    fc.record({ type: fc.constant('and' as const), items: fc.array(tie('node'), { minLength: 2, maxLength: 3 }) }),
    fc.record({ type: fc.constant('or' as const), items: fc.array(tie('node'), { minLength: 2, maxLength: 3 }) }),
    fc.record({ type: fc.constant('not' as const), expr: tie('node') }),
  ),
})).node;

function entity(
  partial: Partial<QueryableEntity> & { s?: Record<string, string>; n?: Record<string, bigint> } = {},
): QueryableEntity {
  return {
    key: partial.key ?? HEXES[2]!,
    owner: partial.owner ?? HEXES[0]!,
    creator: partial.creator ?? HEXES[1]!,
    expiresAt: partial.expiresAt ?? 100n,
    sequence: partial.sequence ?? 7n,
    stringAttributes: new Map(Object.entries(partial.s ?? {})),
    numericAttributes: new Map(Object.entries(partial.n ?? {})),
  };
}

const matches = (q: string, e: QueryableEntity) => compileArkivQuery(parseQuery(q))(e);

describe('compileArkivQuery', () => {
  test('agrees with the DNF reference on random queries and entities', () => {
    fc.assert(
      fc.property(queryArb, fc.array(entityArb, { minLength: 1, maxLength: 8 }), (q, entities) => {
        const compiled = compileArkivQuery(q);
        for (const e of entities) assert.equal(compiled(e), reference(q, e));
      }),
      { numRuns: 1000 },
    );
  });

  test('!(leaf) equals the flipped leaf, and neither matches an entity lacking the attribute', () => {
    fc.assert(
      fc.property(leafArb, entityArb, (leaf, e) => {
        const negated = compileArkivQuery({ type: 'not', expr: leaf })(e);
        assert.equal(negated, reference({ type: 'not', expr: leaf }, e));
        if (
          (leaf.type === 'compare' || leaf.type === 'in' || leaf.type === 'glob') &&
          !leaf.attribute.startsWith('$')
        ) {
          const bare = { ...e, stringAttributes: new Map(), numericAttributes: new Map() };
          assert.equal(compileArkivQuery(leaf)(bare), false);
          assert.equal(compileArkivQuery({ type: 'not', expr: leaf })(bare), false);
        }
      }),
      { numRuns: 500 },
    );
  });

  test('the literal type picks the index', () => {
    const both = entity({ s: { n: '5' }, n: { n: 5n } });
    const onlyNumeric = entity({ n: { n: 5n } });
    assert.equal(matches('n = 5', onlyNumeric), true);
    assert.equal(matches('n = "5"', onlyNumeric), false);
    assert.equal(matches('n != "6"', onlyNumeric), false);
    assert.equal(matches('n = "5" && n = 5', both), true);
    assert.equal(matches('n ~ "5"', onlyNumeric), false);
  });

  test('negation never matches entities without the attribute', () => {
    const without = entity({ s: { other: 'a' } });
    const withA = entity({ s: { x: 'b' } });
    for (const q of [
      'x != "a"',
      '!(x = "a")',
      'x NOT IN ("a")',
      '!(x IN ("a"))',
      'x !~ "a*"',
      '!(x ~ "a*")',
      '!(x < "a")',
    ]) {
      assert.equal(matches(q, without), false, q);
      assert.equal(matches(q, withA), true, q);
    }
    // De Morgan: !(x = "a" && y = "b") is x != "a" || y != "b", still restricted to entities having x or y.
    assert.equal(matches('!(x = "a" && y = "b")', without), false);
    assert.equal(matches('!(x = "a" && y = "b")', withA), true);
    assert.equal(matches('!(!(x = "b"))', withA), true);
  });

  test('string order is UTF-8 byte order, not UTF-16', () => {
    const e = entity({ s: { s: '\uffff' } });
    assert.equal(matches('s < "😀"', e), true);
    assert.equal(matches('s > "é"', e), true);
    assert.equal(matches('s >= "\uffff"', e), true);
    assert.equal(matches('s > "\uffff"', e), false);
    assert.equal(matches('s < "B"', entity({ s: { s: 'a' } })), false);
  });

  test('numeric comparisons are uint64', () => {
    const e = entity({ n: { n: UINT64_MAX } });
    assert.equal(matches('n = 18446744073709551615', e), true);
    assert.equal(matches('n > 18446744073709551614', e), true);
    assert.equal(matches('n < 1', entity({ n: { n: 0n } })), true);
    assert.equal(matches('n IN (1 8)', entity({ n: { n: 8n } })), true);
    assert.equal(matches('n = 010', entity({ n: { n: 8n } })), true);
  });

  test('meta attributes: hex lowercased, $expiration/$sequence numeric', () => {
    const owner = '0x6186b0dba9652262942d5a465d49686eb560834c';
    const e = entity({ owner, expiresAt: 100n, sequence: 7n });
    assert.equal(matches('$owner = 0x6186B0DbA9652262942d5A465d49686eb560834C', e), true);
    assert.equal(matches('$owner = "0x6186B0DBA9652262942D5A465D49686EB560834C"', e), true);
    assert.equal(matches('$owner != 0x6186B0DbA9652262942d5A465d49686eb560834C', e), false);
    assert.equal(matches('$owner IN ("0xAA" "0x6186B0DBA9652262942D5A465D49686EB560834C")', e), true);
    assert.equal(matches('$owner NOT IN ("0x6186B0DBA9652262942D5A465D49686EB560834C")', e), false);
    assert.equal(matches(`$creator = ${owner}`, e), false);
    assert.equal(matches('$expiration = 100 && $sequence IN (6 7)', e), true);
    assert.equal(matches('!($expiration = 100)', e), false);
    assert.equal(matches('$expiration = "100"', e), false);
    assert.equal(matches('$owner = 5', e), false);
    assert.equal(matches('$owner != 5', e), false);
    assert.equal(matches(`$key = ${HEXES[2]!.toUpperCase().replace('0X', '0x')}`, e), true);
  });

  test('glob uses path.Match; a malformed pattern matches nothing, its negation everything with the attribute', () => {
    const e = entity({ s: { mime: 'image/png', foo: 'foobarquz' } });
    assert.equal(matches('foo ~ "*b?r*"', e), true);
    assert.equal(matches('foo ~ "b?r"', e), false);
    assert.equal(matches('mime ~ "image*"', e), false);
    assert.equal(matches('mime glob "image/*"', e), true);
    assert.equal(matches('mime ~ "["', e), false);
    assert.equal(matches('mime !~ "["', e), true);
    assert.equal(matches('missing !~ "["', e), false);
  });

  test('$all and * match every entity', () => {
    assert.equal(matches('$all', entity()), true);
    assert.equal(matches('*', entity({ s: { a: 'x' } })), true);
  });

  test('where-only literals are refused rather than guessed', () => {
    assert.throws(() => compileArkivQuery(parseQuery('a = -5', { dialect: 'where' })), /where dialect/);
    assert.throws(() => compileArkivQuery(parseQuery('a IN (i32(1))', { dialect: 'where' })), /where dialect/);
  });
});
