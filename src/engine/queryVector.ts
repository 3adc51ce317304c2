// A query vector as the graph takes it: float32, of the collection's dimension, every value finite and
// within ±QUERY_VALUE_MAX (limits.ts), checked in one pass.

import { DimensionMismatchError, InvalidArgumentError } from '../collections/index.ts';
import { QUERY_VALUE_MAX } from './limits.ts';

/** A sum of squares above this may hold a value beyond ±QUERY_VALUE_MAX (each value's square is at most this). */
const QUERY_SQUARES_MAX = QUERY_VALUE_MAX * QUERY_VALUE_MAX;

/**
 * Throws for the first value of a query that is not a finite number within ±QUERY_VALUE_MAX (NaN fails
 * both comparisons; out-of-range values would overflow float32 distances into NaN); returns when the
 * large sum of squares came from values all in range.
 */
function rejectQueryValue(vector: ArrayLike<number>): void {
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i]!;
    if (!(x >= -QUERY_VALUE_MAX && x <= QUERY_VALUE_MAX))
      throw new InvalidArgumentError(
        `vector[${i}]: ${x} is not a finite number within ±${QUERY_VALUE_MAX.toExponential()}`,
      );
  }
}

/**
 * The query copied into `into` (of the collection's dimension), checked.
 * @throws DimensionMismatchError for another length, InvalidArgumentError for a value out of range
 */
export function checkedQuery(vector: ArrayLike<number>, into: Float32Array): Float32Array {
  if (vector.length !== into.length) throw new DimensionMismatchError({ expected: into.length, got: vector.length });
  // One sum of squares stands in for a range check per value: it is NaN or infinite when a value is, and
  // above QUERY_SQUARES_MAX whenever one is out of range.
  let squares = 0;
  try {
    for (let i = 0; i < into.length; i++) {
      const x = vector[i]!;
      into[i] = x;
      squares += x * x;
    }
  } catch (conversion) {
    // A value whose conversion to a number throws (an object with a broken toString): an earlier value
    // may be out of range, and that is the error the caller gets, as from the value-by-value check.
    rejectQueryValue(vector);
    throw conversion;
  }
  if (!(squares <= QUERY_SQUARES_MAX)) rejectQueryValue(vector);
  return into;
}
