// withNegativeValues (src/negativeValues.ts): a negative number after a flag that takes a value is that
// value; booleans, other arguments and everything after `--` are left alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { withNegativeValues } from '../../src/negativeValues.ts';

const options = {
  'start-block': { type: 'string' },
  k: { type: 'string', short: 'k' },
  json: { type: 'boolean' },
} as const;

test('withNegativeValues: long and short flags take a negative value; booleans and `--` do not', () => {
  assert.deepEqual(withNegativeValues(['--start-block', '-1', '-k', '-.5'], options), ['--start-block=-1', '-k-.5']);
  assert.deepEqual(withNegativeValues(['--json', '-1'], options), ['--json', '-1']);
  assert.deepEqual(withNegativeValues(['--', '--start-block', '-1'], options), ['--', '--start-block', '-1']);
  assert.deepEqual(withNegativeValues(['--start-block', '-k'], options), ['--start-block', '-k'], 'a flag is a flag');
  assert.deepEqual(withNegativeValues(['--constructor', '-1'], options), ['--constructor', '-1']);
});

test('withNegativeValues: parseArgs then reads every negative number as the value it follows', () => {
  fc.assert(
    fc.property(
      fc.double({ noNaN: true, noDefaultInfinity: true, max: -Number.MIN_VALUE }),
      fc.integer({ max: -1 }),
      (x, n) => {
        const args = ['--start-block', String(n), '-k', String(x), '--json'];
        const { values } = parseArgs({ args: withNegativeValues(args, options), options, strict: true });
        assert.deepEqual({ ...values }, { 'start-block': String(n), k: String(x), json: true });
      },
    ),
  );
});
