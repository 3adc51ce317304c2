import assert from 'node:assert/strict';

/**
 * Asserts that an indexed read found something, and returns it narrowed (tests only: production code handles absence).
 * @example const first = defined(answer.results[0], 'first result');
 */
export function defined<T>(value: T | undefined, what: string): T {
  assert.ok(value !== undefined, `${what} is missing`);
  return value;
}
