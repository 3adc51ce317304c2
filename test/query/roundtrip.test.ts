// Tests src/query/format.ts against src/query/parser.ts: parseQuery(formatQuery(ast)) gives back ast.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { formatQuery, parseQuery, type QueryExpr } from '../../src/query/index.ts';
import { queryArbitrary, withoutPositions } from './arbitraries.ts';

describe('formatQuery round trip', () => {
  for (const dialect of ['arkiv', 'where'] as const) {
    test(`${dialect} dialect: random ASTs survive format → parse`, () => {
      fc.assert(
        fc.property(queryArbitrary(dialect), (ast) => {
          const text = formatQuery(ast);
          assert.deepEqual(withoutPositions(parseQuery(text, { dialect })), withoutPositions(ast), text);
        }),
        { numRuns: 500 },
      );
    });
  }

  test('arkiv-dialect output is also valid where-dialect text with the same AST', () => {
    fc.assert(
      fc.property(queryArbitrary('arkiv'), (ast) => {
        const text = formatQuery(ast);
        assert.deepEqual(parseQuery(text, { dialect: 'where' }), parseQuery(text));
      }),
      { numRuns: 200 },
    );
  });

  test('formatting is a fixpoint on parsed text', () => {
    const q =
      '(a = 1 || b = "x\\"y") && !(c ~ "p*") && $owner IN (0xAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA "q") && n = 010';
    const once = formatQuery(parseQuery(q));
    assert.equal(
      once,
      '(a = 1 || b = "x\\"y") && !(c ~ "p*") && $owner IN (0xAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA "q") && n = 010',
    );
    assert.equal(formatQuery(parseQuery(once)), once);
  });

  test('canonical spellings: glob negation as !~, nested groups keep parentheses, escapes', () => {
    assert.equal(formatQuery(parseQuery("x NOT GLOB 'a*'", { dialect: 'where' })), 'x !~ "a*"');
    const nested: QueryExpr = {
      type: 'or',
      items: [
        {
          type: 'or',
          items: [
            { type: 'compare', op: '=', attribute: 'a', value: { kind: 'number', value: 1n, text: '1' }, position: 0 },
            {
              type: 'compare',
              op: '<',
              attribute: 'b',
              value: { kind: 'string', value: 'line\n\t\u0001' },
              position: 0,
            },
          ],
        },
        { type: 'not', expr: { type: 'glob', negated: false, attribute: 'c', pattern: '*', position: 0 } },
      ],
    };
    assert.equal(formatQuery(nested), '(a = 1 || b < "line\\n\\t\\x01") || !(c ~ "*")');
    assert.equal(
      formatQuery({
        type: 'compare',
        op: '=',
        attribute: 'd',
        value: { kind: 'decimal', value: 5, text: 'bogus' },
        position: 0,
      }),
      'd = 5.0',
    );
    assert.equal(
      formatQuery({
        type: 'compare',
        op: '=',
        attribute: 'd',
        value: { kind: 'number', value: 9n, text: '7' },
        position: 0,
      }),
      'd = 9',
    );
  });

  test('refuses ASTs no text can produce', () => {
    const one: QueryExpr = {
      type: 'compare',
      op: '=',
      attribute: 'a',
      value: { kind: 'number', value: 1n, text: '1' },
      position: 0,
    };
    assert.throws(() => formatQuery({ type: 'and', items: [one] }), /at least two items/);
    assert.throws(() => formatQuery({ type: 'and', items: [one, { type: 'all' }] }), /only valid as the whole query/);
    assert.throws(() => formatQuery({ ...one, attribute: 'bad name' }), /not a valid attribute name/);
    assert.throws(() => formatQuery({ ...one, value: { kind: 'number', value: -1n, text: '-1' } }), /outside uint64/);
  });
});
