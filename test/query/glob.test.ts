// Tests src/query/glob.ts against the match table of Go's path/match_test.go (path.Match).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { globMatch, pathMatch } from '../../src/query/index.ts';

// [pattern, name, matched, ErrBadPattern]
const GO_MATCH_TESTS: Array<[string, string, boolean, boolean]> = [
  ['abc', 'abc', true, false],
  ['*', 'abc', true, false],
  ['*c', 'abc', true, false],
  ['a*', 'a', true, false],
  ['a*', 'abc', true, false],
  ['a*', 'ab/c', false, false],
  ['a*/b', 'abc/b', true, false],
  ['a*/b', 'a/c/b', false, false],
  ['a*b*c*d*e*/f', 'axbxcxdxe/f', true, false],
  ['a*b*c*d*e*/f', 'axbxcxdxexxx/f', true, false],
  ['a*b*c*d*e*/f', 'axbxcxdxe/xxx/f', false, false],
  ['a*b*c*d*e*/f', 'axbxcxdxexxx/fff', false, false],
  ['a*b?c*x', 'abxbbxdbxebxczzx', true, false],
  ['a*b?c*x', 'abxbbxdbxebxczzy', false, false],
  ['ab[c]', 'abc', true, false],
  ['ab[b-d]', 'abc', true, false],
  ['ab[e-g]', 'abc', false, false],
  ['ab[^c]', 'abc', false, false],
  ['ab[^b-d]', 'abc', false, false],
  ['ab[^e-g]', 'abc', true, false],
  ['a\\*b', 'a*b', true, false],
  ['a\\*b', 'ab', false, false],
  ['a?b', 'a☺b', true, false],
  ['a[^a]b', 'a☺b', true, false],
  ['a???b', 'a☺b', false, false],
  ['a[^a][^a][^a]b', 'a☺b', false, false],
  ['[a-ζ]*', 'α', true, false],
  ['*[a-ζ]', 'A', false, false],
  ['a?b', 'a/b', false, false],
  ['a*b', 'a/b', false, false],
  ['[\\]a]', ']', true, false],
  ['[\\-]', '-', true, false],
  ['[x\\-]', 'x', true, false],
  ['[x\\-]', '-', true, false],
  ['[x\\-]', 'z', false, false],
  ['[\\-x]', 'x', true, false],
  ['[\\-x]', '-', true, false],
  ['[\\-x]', 'a', false, false],
  ['[]a]', ']', false, true],
  ['[-]', '-', false, true],
  ['[x-]', 'x', false, true],
  ['[x-]', '-', false, true],
  ['[x-]', 'z', false, true],
  ['[-x]', 'x', false, true],
  ['[-x]', '-', false, true],
  ['[-x]', 'a', false, true],
  ['\\', 'a', false, true],
  ['[a-b-c]', 'a', false, true],
  ['[', 'a', false, true],
  ['[^', 'a', false, true],
  ['[^bc', 'a', false, true],
  ['a[', 'a', false, true],
  ['a[', 'ab', false, true],
  ['a[', 'x', false, true],
  ['a/b[', 'x', false, true],
  ['*x', 'xxx', true, false],
];

describe('pathMatch / globMatch (Go path.Match)', () => {
  test('Go match table', () => {
    for (const [pattern, name, matched, bad] of GO_MATCH_TESTS) {
      assert.deepEqual(pathMatch(pattern, name), { matched, badPattern: bad }, `${pattern} vs ${name}`);
      assert.equal(globMatch(pattern, name), matched, `${pattern} vs ${name}`);
    }
  });

  test('node examples: whole-value match, * stops at /', () => {
    assert.equal(globMatch('*b?r*', 'foobarquz'), true);
    assert.equal(globMatch('b?r', 'foobarquz'), false);
    assert.equal(globMatch('image*', 'image/png'), false);
    assert.equal(globMatch('image/*', 'image/png'), true);
    assert.equal(globMatch('', ''), true);
    assert.equal(globMatch('', 'a'), false);
  });

  test('? and classes consume a whole astral code point', () => {
    assert.equal(globMatch('a?b', 'a😀b'), true);
    assert.equal(globMatch('a[😀]b', 'a😀b'), true);
    assert.equal(globMatch('a[^😀]b', 'a😀b'), false);
  });

  test('a pattern without metacharacters matches exactly itself', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }).filter((x) => !/[*?[\\]/.test(x)),
        fc.string({ unit: 'binary' }),
        (lit, other) => {
          assert.equal(globMatch(lit, lit), true);
          assert.equal(globMatch(lit, other), lit === other);
        },
      ),
    );
  });
});
