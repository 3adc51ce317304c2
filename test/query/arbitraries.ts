// fast-check generators of query ASTs shared by the round-trip and semantics tests in test/query.
import fc from 'fast-check';
import { formatLiteral, type CompareOp, type Dialect, type Literal, type QueryExpr } from '../../src/query/index.ts';

export const UINT64_MAX = (1n << 64n) - 1n;
const OPS: CompareOp[] = ['=', '!=', '<', '<=', '>', '>='];
const IDENTS = ['a', 'b', 'c', 'and', 'NOT', 'in', '名前', '_x1'];
const META = ['$key', '$owner', '$creator', '$expiration', '$sequence'];

export const hexLiteral: fc.Arbitrary<Literal> = fc
  .oneof(fc.constant(40), fc.constant(64))
  .chain((len) => fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: len, maxLength: len }))
  .map((digits) => ({ kind: 'string', value: `0x${digits}`, hex: true }));

const quotedString: fc.Arbitrary<Literal> = fc
  .string({ unit: 'binary', maxLength: 8 })
  .map((value) => ({ kind: 'string', value }));

const numberLiteral: fc.Arbitrary<Literal> = fc
  .tuple(fc.bigInt({ min: 0n, max: UINT64_MAX }), fc.boolean())
  // A leading zero is octal on the node; keep some of those spellings in play.
  .map(([value, octal]) => ({
    kind: 'number',
    value,
    text: octal && value > 0n ? `0${value.toString(8)}` : value.toString(),
  }));

const withCanonicalText = (lit: Literal): Literal =>
  ({ ...lit, text: formatLiteral({ ...lit, text: '' } as Literal) }) as Literal;

const decimalLiteral: fc.Arbitrary<Literal> = fc
  .double({ noNaN: true, noDefaultInfinity: true })
  .filter((v) => v < 0 || !Number.isInteger(v) || Object.is(v, -0))
  .map((value) => withCanonicalText({ kind: 'decimal', value, text: '' }));

const typedString: fc.Arbitrary<Literal> = fc
  .string({ unit: 'binary', maxLength: 6 })
  .map((value) => withCanonicalText({ kind: 'typed', type: 'str', value, text: '' }));
const typedNumeric: fc.Arbitrary<Literal> = fc.oneof(
  fc
    .integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })
    .map((value) => withCanonicalText({ kind: 'typed', type: 'i32', value, text: '' })),
  fc.maxSafeNat().map((value) => withCanonicalText({ kind: 'typed', type: 'uint', value, text: '' })),
  fc
    .float({ noNaN: true, noDefaultInfinity: true })
    .map((value) => withCanonicalText({ kind: 'typed', type: 'f32', value, text: '' })),
);
const typedBool: fc.Arbitrary<Literal> = fc
  .boolean()
  .map((value) => withCanonicalText({ kind: 'typed', type: 'bool', value, text: '' }));

function classes(dialect: Dialect): {
  strings: fc.Arbitrary<Literal>;
  numbers: fc.Arbitrary<Literal>;
  bools?: fc.Arbitrary<Literal>;
} {
  if (dialect === 'arkiv') return { strings: fc.oneof(quotedString, hexLiteral), numbers: numberLiteral };
  return {
    strings: fc.oneof(quotedString, hexLiteral, typedString),
    numbers: fc.oneof(numberLiteral, decimalLiteral, typedNumeric),
    bools: typedBool,
  };
}

export function queryArbitrary(dialect: Dialect, maxDepth = 3): fc.Arbitrary<QueryExpr> {
  const { strings, numbers, bools } = classes(dialect);
  const anyLiteral = bools ? fc.oneof(strings, numbers, bools) : fc.oneof(strings, numbers);
  const list = fc.oneof(
    fc.array(strings, { minLength: 1, maxLength: 4 }),
    fc.array(numbers, { minLength: 1, maxLength: 4 }),
    ...(bools ? [fc.array(bools, { minLength: 1, maxLength: 3 })] : []),
  );
  const ident = fc.constantFrom(...IDENTS);
  const atom: fc.Arbitrary<QueryExpr> = fc.oneof(
    fc.record({
      type: fc.constant('compare' as const),
      op: fc.constantFrom(...OPS),
      attribute: ident,
      value: anyLiteral,
      position: fc.constant(0),
    }),
    fc.record({
      type: fc.constant('compare' as const),
      op: fc.constantFrom<CompareOp>('=', '!='),
      attribute: fc.constantFrom(...META),
      value: anyLiteral,
      position: fc.constant(0),
    }),
    fc.record({
      type: fc.constant('in' as const),
      negated: fc.boolean(),
      attribute: fc.constantFrom(...IDENTS, ...META),
      values: list,
      position: fc.constant(0),
    }),
    fc.record({
      type: fc.constant('glob' as const),
      negated: fc.boolean(),
      attribute: ident,
      pattern: fc.string({ unit: 'binary', maxLength: 6 }),
      position: fc.constant(0),
    }),
  );
  const tree = fc.letrec<{ node: QueryExpr }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', maxDepth, depthIdentifier: `q-${dialect}` },
      atom,
      fc.record({ type: fc.constant('and' as const), items: fc.array(tie('node'), { minLength: 2, maxLength: 3 }) }),
      fc.record({ type: fc.constant('or' as const), items: fc.array(tie('node'), { minLength: 2, maxLength: 3 }) }),
      fc.record({ type: fc.constant('not' as const), expr: tie('node') }),
    ),
  })).node;
  return fc.oneof({ weight: 1, arbitrary: fc.constant<QueryExpr>({ type: 'all' }) }, { weight: 9, arbitrary: tree });
}

/** Deep copy without term positions, which depend on the text and not on the meaning. */
export function withoutPositions(expr: QueryExpr): QueryExpr {
  switch (expr.type) {
    case 'all':
      return expr;
    case 'and':
    case 'or':
      return { type: expr.type, items: expr.items.map(withoutPositions) };
    case 'not':
      return { type: 'not', expr: withoutPositions(expr.expr) };
    default:
      return { ...expr, position: 0 };
  }
}
