// The search arguments' fast validation (one loop over the query vector instead of zod's per-element
// schemas) must accept exactly what the full zod schema accepts and return the same arguments, and
// refusals must keep the full schema's issues: property-tested against the full schema as the oracle.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DIM_MAX } from '../../src/collections/index.ts';
import { QUERY_VALUE_MAX } from '../../src/engine/limits.ts';
import { isQueryVector, searchSchema, searchSchemaFast } from '../../src/service/schemas.ts';
import { validate, validateFast } from '../../src/service/validate.ts';

const number = fc.oneof(
  fc.double(),
  fc.double({ min: -QUERY_VALUE_MAX, max: QUERY_VALUE_MAX, noNaN: true }),
  fc.constantFrom(
    QUERY_VALUE_MAX,
    -QUERY_VALUE_MAX,
    QUERY_VALUE_MAX * (1 + Number.EPSILON),
    -QUERY_VALUE_MAX * (1 + Number.EPSILON),
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    -0,
    Number.MIN_VALUE,
    Number.MAX_VALUE,
  ),
);
const element = fc.oneof({ weight: 8, arbitrary: number }, { weight: 1, arbitrary: fc.anything() });
const vector = fc.oneof(
  fc.array(number, { maxLength: 8 }),
  fc.array(element, { maxLength: 8 }),
  fc.constant([]),
  fc.constant(Array.from({ length: DIM_MAX }, () => 0.5)),
  fc.constant(Array.from({ length: DIM_MAX + 1 }, () => 0.5)),
  // A sparse array: a hole is not a number.
  fc.constant(Object.assign(new Array<number>(3), { 0: 1, 2: 3 })),
  fc.anything(),
);
const args = fc.record(
  {
    collection: fc.oneof(fc.constant('notes'), fc.anything()),
    vector,
    k: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.anything()),
    include_document: fc.oneof(fc.boolean(), fc.anything()),
    where: fc.string(),
    extra: fc.anything(),
  },
  { requiredKeys: [] },
);

const outcome = (run: () => unknown) => {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    return { ok: false, value: (error as { meta?: unknown }).meta };
  }
};

test('isQueryVector accepts exactly the vectors the zod schema accepts', () => {
  fc.assert(
    fc.property(vector, (v) => {
      assert.equal(isQueryVector(v), searchSchema.shape.vector.unwrap().safeParse(v).success);
      assert.equal(searchSchemaFast.shape.vector.safeParse(v).success, searchSchema.shape.vector.safeParse(v).success);
    }),
    { numRuns: 2000 },
  );
});

test('validateFast answers as validate with the full schema: same arguments, same refusals and issues', () => {
  fc.assert(
    fc.property(args, (input) => {
      assert.deepEqual(
        outcome(() => validateFast(searchSchemaFast, searchSchema, input)),
        outcome(() => validate(searchSchema, input)),
      );
    }),
    { numRuns: 2000 },
  );
});
