// Production code handles absence; where absence would be a bug of ours (an index just checked, a field
// set on every path that reaches here), this names the broken invariant instead of a later
// "cannot read properties of undefined". The surfaces answer it as `internal` and log the message.

/** A value this code guarantees was missing: a bug, never bad input. */
export class InvariantError extends Error {
  override name = 'InvariantError';
}

/**
 * Returns `value` narrowed, or throws an InvariantError naming `what`.
 * @example const first = defined(items[0], 'first item of a non-empty list');
 */
export function defined<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) throw new InvariantError(`internal: ${what} is missing`);
  return value;
}
