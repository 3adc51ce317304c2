// Tests src/query/parser.ts + lexer.ts: every documented form of the Arkiv query language, the node's
// rejections (with the offending position), and the where dialect's additions.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseQuery, QuerySyntaxError, type Dialect, type Literal, type QueryExpr } from '../../src/query/index.ts';

const ADDR = '0x6186B0DbA9652262942d5A465d49686eb560834C';
const KEY = `0x${'ab'.repeat(32)}`;

const s = (value: string): Literal => ({ kind: 'string', value });
const hex = (value: string): Literal => ({ kind: 'string', value, hex: true });
const n = (value: bigint, text = value.toString()): Literal => ({ kind: 'number', value, text });
const cmp = (attribute: string, op: '=' | '!=' | '<' | '<=' | '>' | '>=', value: Literal, position = 0): QueryExpr => ({
  type: 'compare',
  op,
  attribute,
  value,
  position,
});

function rejects(query: string, position: number, message: RegExp, dialect: Dialect = 'arkiv'): void {
  assert.throws(
    () => parseQuery(query, { dialect }),
    (err: unknown) => {
      assert.ok(err instanceof QuerySyntaxError, `expected QuerySyntaxError for ${JSON.stringify(query)}`);
      assert.equal(err.position, position, `position for ${JSON.stringify(query)}: ${err.message}`);
      assert.match(err.message, message);
      return true;
    },
  );
}

describe('parseQuery (arkiv dialect): accepted forms', () => {
  test('match-all forms', () => {
    assert.deepEqual(parseQuery('$all'), { type: 'all' });
    assert.deepEqual(parseQuery('*'), { type: 'all' });
    assert.deepEqual(parseQuery('  $all \n'), { type: 'all' });
  });

  test('equality and inequality with strings, numbers and hex', () => {
    assert.deepEqual(parseQuery('name = "test\\"2"'), cmp('name', '=', s('test"2')));
    assert.deepEqual(parseQuery('name = 123'), cmp('name', '=', n(123n)));
    assert.deepEqual(parseQuery('name != 123'), cmp('name', '!=', n(123n)));
    assert.deepEqual(parseQuery(`$owner = ${ADDR}`), cmp('$owner', '=', hex(ADDR)));
    assert.deepEqual(parseQuery(`$owner="${ADDR}"`), cmp('$owner', '=', s(ADDR)));
    assert.deepEqual(parseQuery(`$key = ${KEY}`), cmp('$key', '=', hex(KEY)));
    assert.deepEqual(parseQuery('$creator != "x"'), cmp('$creator', '!=', s('x')));
    assert.deepEqual(parseQuery('$expiration = 1000'), cmp('$expiration', '=', n(1000n)));
    assert.deepEqual(parseQuery('$sequence = 42'), cmp('$sequence', '=', n(42n)));
    assert.deepEqual(parseQuery('x = 18446744073709551615'), cmp('x', '=', n(18446744073709551615n)));
  });

  test('range operators on plain identifiers, with numbers, strings and hex', () => {
    assert.deepEqual(parseQuery('n < 5'), cmp('n', '<', n(5n)));
    assert.deepEqual(parseQuery('n <= 5'), cmp('n', '<=', n(5n)));
    assert.deepEqual(parseQuery('n > 5'), cmp('n', '>', n(5n)));
    assert.deepEqual(parseQuery('n >= 5'), cmp('n', '>=', n(5n)));
    assert.deepEqual(parseQuery('a < "x"'), cmp('a', '<', s('x')));
    assert.deepEqual(parseQuery(`a >= ${ADDR}`), cmp('a', '>=', hex(ADDR)));
  });

  test('glob forms', () => {
    const g = (negated: boolean, pattern = '*b?r*'): QueryExpr => ({
      type: 'glob',
      negated,
      attribute: 'foo',
      pattern,
      position: 0,
    });
    assert.deepEqual(parseQuery('foo ~ "*b?r*"'), g(false));
    assert.deepEqual(parseQuery('foo !~ "*b?r*"'), g(true));
    assert.deepEqual(parseQuery('foo GLOB "*b?r*"'), g(false));
    assert.deepEqual(parseQuery('foo glob "*b?r*"'), g(false));
  });

  test('IN / NOT IN lists, space separated', () => {
    assert.deepEqual(parseQuery('n IN (1 2 3)'), {
      type: 'in',
      negated: false,
      attribute: 'n',
      values: [n(1n), n(2n), n(3n)],
      position: 0,
    });
    assert.deepEqual(parseQuery('n in (7)'), {
      type: 'in',
      negated: false,
      attribute: 'n',
      values: [n(7n)],
      position: 0,
    });
    assert.deepEqual(parseQuery('s NOT IN ("a" "b")'), {
      type: 'in',
      negated: true,
      attribute: 's',
      values: [s('a'), s('b')],
      position: 0,
    });
    assert.deepEqual(parseQuery('s not in ("a")'), {
      type: 'in',
      negated: true,
      attribute: 's',
      values: [s('a')],
      position: 0,
    });
    assert.deepEqual(parseQuery(`$owner IN (${ADDR} "0xabc")`), {
      type: 'in',
      negated: false,
      attribute: '$owner',
      values: [hex(ADDR), s('0xabc')],
      position: 0,
    });
    assert.deepEqual(parseQuery('$sequence NOT IN (1 2)'), {
      type: 'in',
      negated: true,
      attribute: '$sequence',
      values: [n(1n), n(2n)],
      position: 0,
    });
  });

  test('&& binds tighter than ||, keywords in both spellings, positions of terms', () => {
    assert.deepEqual(parseQuery('a = 1 || b = 2 && c = 3'), {
      type: 'or',
      items: [cmp('a', '=', n(1n), 0), { type: 'and', items: [cmp('b', '=', n(2n), 9), cmp('c', '=', n(3n), 18)] }],
    });
    const viaWords = parseQuery('a = 1 OR b = 2 AND c = 3');
    const viaLower = parseQuery('a = 1 or b = 2 and c = 3');
    assert.deepEqual(viaWords, viaLower);
    assert.equal(viaWords.type, 'or');
  });

  test('parentheses group without flattening; single-item parens vanish', () => {
    assert.deepEqual(parseQuery('((a = 1))'), cmp('a', '=', n(1n), 2));
    assert.deepEqual(parseQuery('(a = 1 && b = 2) && c = 3'), {
      type: 'and',
      items: [{ type: 'and', items: [cmp('a', '=', n(1n), 1), cmp('b', '=', n(2n), 10)] }, cmp('c', '=', n(3n), 20)],
    });
  });

  test('negation only before a parenthesis, in all spellings', () => {
    const inner = cmp('a', '=', s('x'), 2);
    assert.deepEqual(parseQuery('!(a = "x")'), { type: 'not', expr: inner });
    assert.deepEqual(parseQuery('not(a = "x")'), { type: 'not', expr: { ...inner, position: 4 } });
    assert.deepEqual(parseQuery('NOT (a = "x")'), { type: 'not', expr: { ...inner, position: 5 } });
    assert.deepEqual(parseQuery('!(!(a = "x"))'), {
      type: 'not',
      expr: { type: 'not', expr: { ...inner, position: 4 } },
    });
  });

  test('the SDK-generated example (minus its !flag) parses', () => {
    const q = `category = "doc" && (n > 5 || (m <= 3 && s != "x")) && $owner=${ADDR} && $creator=${ADDR}`;
    const ast = parseQuery(q);
    assert.equal(ast.type, 'and');
    assert.equal(ast.type === 'and' && ast.items.length, 4);
  });

  test('keywords are not reserved: they work as attribute names', () => {
    assert.deepEqual(parseQuery('and = "x"'), cmp('and', '=', s('x')));
    assert.deepEqual(parseQuery('not = 1'), cmp('not', '=', n(1n)));
    assert.deepEqual(parseQuery('in in (1)'), {
      type: 'in',
      negated: false,
      attribute: 'in',
      values: [n(1n)],
      position: 0,
    });
    assert.deepEqual(parseQuery('x = 1 and or = 2'), {
      type: 'and',
      items: [cmp('x', '=', n(1n)), cmp('or', '=', n(2n), 10)],
    });
  });

  test('unicode identifiers, escapes and whitespace variants', () => {
    assert.deepEqual(parseQuery('café = "latte"'), cmp('café', '=', s('latte')));
    assert.deepEqual(parseQuery('名前 = "値"'), cmp('名前', '=', s('値')));
    assert.deepEqual(parseQuery('s = "line\\nnext\\t\\u00e9\\x41\\101"'), cmp('s', '=', s('line\nnext\té' + 'AA')));
    assert.deepEqual(parseQuery('\tname\t=\t"x"\r\n'), cmp('name', '=', s('x'), 1));
    assert.deepEqual(parseQuery('_a1 = 0'), cmp('_a1', '=', n(0n)));
  });

  test('numbers follow strconv.ParseUint base 0: a leading zero means octal', () => {
    assert.deepEqual(parseQuery('n = 010'), cmp('n', '=', n(8n, '010')));
    assert.deepEqual(parseQuery('n = 00'), cmp('n', '=', n(0n, '00')));
  });
});

describe('parseQuery (arkiv dialect): rejections point at the offending token', () => {
  test('empty and blank queries', () => {
    rejects('', 0, /^1:1: unexpected token "<EOF>"/);
    rejects('   ', 3, /^1:4: unexpected token "<EOF>"/);
  });

  test('!name (the SDK not()) is an error at the name', () => {
    rejects('!name', 1, /^1:2: unexpected token "name"/);
    rejects('a = 1 && !flag', 10, /unexpected token "flag"/);
    rejects('!!(a = 1)', 1, /unexpected token "!"/);
  });

  test('meta attributes only with =, !=, IN, NOT IN', () => {
    rejects('$expiration > 1', 12, /^1:13: unexpected token ">"/);
    rejects(`$owner < ${ADDR}`, 7, /unexpected token "<"/);
    rejects('$key ~ "0x*"', 5, /unexpected token "~"/);
    rejects('$createdAtBlock = 1', 0, /invalid input text "\$createdAtBlock/);
    rejects('$keys = "x"', 4, /unexpected token "s"/);
  });

  test('hex literals of other lengths, numbers that are not uint64', () => {
    rejects('a = 0x123', 5, /unexpected token "x123"/);
    rejects(`a = 0x${'1'.repeat(50)}`, 46, /unexpected token "1111111111"/);
    rejects('a = 18446744073709551616', 4, /invalid integer "18446744073709551616".*value out of range/);
    rejects('a = 08', 4, /invalid integer "08".*invalid syntax/);
    rejects('key = 8e', 7, /^1:8: unexpected token "e"$/);
    rejects('a = -1', 4, /invalid input text "-1"/);
    rejects('a = 1.5', 5, /invalid input text "\.5"/);
  });

  test('IN lists: no commas, no mixing, not empty', () => {
    rejects('a IN ("x", "y")', 9, /invalid input text ", \\"y\\"\)"/);
    rejects('a IN ("x" 1)', 10, /unexpected token "1"/);
    rejects('a IN (1 "x")', 8, /unexpected token "\\"x\\""/);
    rejects('a IN ()', 6, /unexpected token "\)"/);
    rejects('a IN 1', 5, /unexpected token "1"/);
  });

  test('NOT GLOB is rejected like the node does (participle lookahead 1 commits to NOT IN)', () => {
    rejects('foo NOT GLOB "x*"', 8, /unexpected token "GLOB"/);
    rejects('foo not glob "x*"', 8, /unexpected token "glob"/);
    rejects('foo ~ 0x1111111111111111111111111111111111111111', 6, /unexpected token/);
  });

  test('$all and * only as the whole query', () => {
    rejects('$all && a = 1', 5, /unexpected token "&&"/);
    rejects('a = 1 && $all', 9, /unexpected token "\$all"/);
    rejects('($all)', 1, /unexpected token "\$all"/);
    rejects('* *', 2, /unexpected token "\*"/);
  });

  test('trailing garbage and dangling operators', () => {
    rejects('a = "x" "y"', 8, /unexpected token "\\"y\\""/);
    rejects('a = "x" &&', 10, /unexpected token "<EOF>"/);
    rejects('a = "x" ||', 10, /unexpected token "<EOF>"/);
    rejects('a = "x" AND', 11, /unexpected token "<EOF>"/);
    rejects('a =', 3, /unexpected token "<EOF>"/);
    rejects('(a = 1', 6, /unexpected token "<EOF>"/);
    rejects('a = 1)', 5, /unexpected token "\)"/);
    rejects('a == 1', 3, /unexpected token "="/);
    rejects('a = 1 And b = 2', 6, /unexpected token "And"/);
    rejects('a & b', 2, /invalid input text "& b"/);
  });

  test('strings: Go escapes only, no raw newline, no single quotes', () => {
    rejects('a = "x\ny"', 4, /invalid quoted string/);
    rejects('a = "\\q"', 4, /invalid quoted string/);
    rejects('a = "\\\'"', 4, /invalid quoted string/);
    rejects('a = "\\ud800"', 4, /invalid quoted string/);
    rejects('a = "unterminated', 4, /invalid input text/);
    rejects("a = 'x'", 4, /invalid input text "'x'"/);
  });

  test('lexer errors win over earlier grammar errors, and positions count lines', () => {
    rejects('!name , x', 6, /invalid input text ", x"/);
    rejects('a = 1 &&\n  b ~ 5', 15, /^2:7: unexpected token "5"/);
  });

  test('where-dialect literals are not arkiv', () => {
    rejects('a = str("x")', 4, /unexpected token "str"/);
    rejects('a = bool(true)', 4, /unexpected token "bool"/);
  });
});

describe('parseQuery (where dialect)', () => {
  const where = (q: string) => parseQuery(q, { dialect: 'where' });

  test('every arkiv query means the same in the where dialect', () => {
    for (const q of ['$all', 'a = 1 || b = "x" && !(c ~ "p*")', `$owner = ${ADDR}`, 'n NOT IN (1 2)', 'n = 010']) {
      assert.deepEqual(where(q), parseQuery(q), q);
    }
  });

  test("single-quoted strings with \\' and \\\\ escapes", () => {
    assert.deepEqual(where("a = 'it\\'s \\\\ ok'"), cmp('a', '=', s("it's \\ ok")));
    assert.deepEqual(where(`a IN ('x' "y")`), {
      type: 'in',
      negated: false,
      attribute: 'a',
      values: [s('x'), s('y')],
      position: 0,
    });
    rejects("a = 'bad \\n'", 4, /invalid quoted string/, 'where');
  });

  test('negative, fractional and exponent numbers are decimals; plain integers stay uint64', () => {
    assert.deepEqual(where('a = -5'), cmp('a', '=', { kind: 'decimal', value: -5, text: '-5' }));
    assert.deepEqual(where('a >= 0.5'), cmp('a', '>=', { kind: 'decimal', value: 0.5, text: '0.5' }));
    assert.deepEqual(where('a < -1.25e3'), cmp('a', '<', { kind: 'decimal', value: -1250, text: '-1.25e3' }));
    assert.deepEqual(where('a = 7'), cmp('a', '=', n(7n)));
    assert.deepEqual(where('a IN (-1 2 0.5)'), {
      type: 'in',
      negated: false,
      attribute: 'a',
      values: [{ kind: 'decimal', value: -1, text: '-1' }, n(2n), { kind: 'decimal', value: 0.5, text: '0.5' }],
      position: 0,
    });
    rejects('a = 1e999', 4, /out of range/, 'where');
  });

  test('typed literals', () => {
    assert.deepEqual(
      where("a = str('x')"),
      cmp('a', '=', { kind: 'typed', type: 'str', value: 'x', text: "str('x')" }),
    );
    assert.deepEqual(where('a = i32(-5)'), cmp('a', '=', { kind: 'typed', type: 'i32', value: -5, text: 'i32(-5)' }));
    assert.deepEqual(where('a = uint(7)'), cmp('a', '=', { kind: 'typed', type: 'uint', value: 7, text: 'uint(7)' }));
    assert.deepEqual(
      where('a > f32(0.5)'),
      cmp('a', '>', { kind: 'typed', type: 'f32', value: 0.5, text: 'f32(0.5)' }),
    );
    assert.deepEqual(
      where('a = bool(true)'),
      cmp('a', '=', { kind: 'typed', type: 'bool', value: true, text: 'bool(true)' }),
    );
    assert.deepEqual(
      where('a != bool( false )'),
      cmp('a', '!=', { kind: 'typed', type: 'bool', value: false, text: 'bool( false )' }),
    );
    assert.deepEqual(where('str = 1'), cmp('str', '=', n(1n)));
  });

  test('typed literal errors point at the argument', () => {
    rejects('a = i32(2147483648)', 8, /out of int32 range/, 'where');
    rejects('a = i32(1.5)', 8, /expected an integer/, 'where');
    rejects('a = uint(-1)', 9, /expected an unsigned integer/, 'where');
    rejects('a = uint(18446744073709551616)', 9, /out of uint64 range/, 'where');
    rejects('a = f32(1e39)', 8, /out of float32 range/, 'where');
    rejects('a = bool(yes)', 9, /expected true or false/, 'where');
    rejects('a = str(5)', 8, /expected a quoted string/, 'where');
    rejects('a = str()', 8, /unexpected token "\)"/, 'where');
    rejects('a = i32(5', 9, /unexpected token "<EOF>"/, 'where');
  });

  test('NOT GLOB is accepted in the where dialect', () => {
    assert.deepEqual(where("foo NOT GLOB 'x*'"), {
      type: 'glob',
      negated: true,
      attribute: 'foo',
      pattern: 'x*',
      position: 0,
    });
  });

  test('still rejects unknown operators and mixed lists; bare booleans only in the where dialect', () => {
    rejects('a == 1', 3, /unexpected token "="/, 'where');
    rejects('a <> 1', 3, /unexpected token ">"/, 'where');
    rejects('a = true', 4, /unexpected token "true"/, 'arkiv');
    assert.deepEqual(parseQuery('a = true', { dialect: 'where' }), {
      type: 'compare',
      op: '=',
      attribute: 'a',
      value: { kind: 'typed', type: 'bool', value: true, text: 'true' },
      position: 0,
    });
    rejects("a IN (true 'x')", 11, /unexpected token/, 'where');
    rejects("a IN ('x' 1)", 10, /unexpected token "1"/, 'where');
    rejects("a IN (bool(true) 'x')", 17, /unexpected token/, 'where');
    rejects('a = 5 - 3', 6, /invalid input text "- 3"/, 'where');
  });
});
