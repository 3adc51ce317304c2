// f32 attribute values come back as the shortest decimal that rounds to the same binary32 value (what a
// writer sent: 8.59, not 8.59000015258789), for every binary32 value.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { decodeAttribute, encodeAttribute } from '../../src/collections/index.ts';
import { shortestF32, typedAttributes } from '../../src/service/render.ts';

const stored = (v: number): number =>
  decodeAttribute('f32', { kind: 'numeric', value: encodeAttribute('f32', v).value as number }) as number;

test('f32: a written decimal comes back as written', () => {
  for (const v of [8.59, 0.1, -2.5, 3.4028235e38, 1e-45, 123456.7, -0.3])
    assert.equal(shortestF32(stored(v)), v, String(v));
  assert.ok(Object.is(shortestF32(-0), -0));
  assert.equal(shortestF32(Number.POSITIVE_INFINITY), Number.POSITIVE_INFINITY);
});

test('f32: the answer rounds to the same binary32 value and no shorter decimal does', () => {
  fc.assert(
    fc.property(fc.float({ noNaN: true }), (f) => {
      const shown = shortestF32(f);
      assert.ok(Object.is(Math.fround(shown), f) || (shown === 0 && f === 0), `${f} -> ${shown}`);
      const digits = Number.isFinite(shown) && shown !== 0 ? shown.toPrecision(9).replace(/e.*$/, '') : '';
      if (digits) {
        const significant = Number(shown).toExponential().replace(/e.*$/, '').replace(/[-.]/g, '').length;
        if (significant > 1) assert.notEqual(Math.fround(Number(shown.toPrecision(significant - 1))), f);
      }
    }),
    { numRuns: 2000 },
  );
});

test('answers render a stored f32 attribute as the decimal written', () => {
  const definition = {
    dim: 1,
    metric: 'cosine',
    open: true,
    writers: [],
    index: { m: 16, ef_construction: 64, ef_search: 40 },
    attributes: { price: 'f32', stars: 'i32' },
  } as const;
  const record = { attributes: { price: stored(8.59), stars: 4 } } as unknown as Parameters<typeof typedAttributes>[0];
  assert.notEqual(stored(8.59), 8.59, 'binary32 holds 8.59 as 8.59000015258789');
  assert.deepEqual(typedAttributes(record, definition as unknown as Parameters<typeof typedAttributes>[1]), {
    price: { type: 'f32', value: 8.59 },
    stars: { type: 'i32', value: 4 },
  });
});
