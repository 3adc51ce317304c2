// Tests src/collections/codecs/attributes.ts: typed attribute encodings of DESIGN §4.2.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  decodeAttribute,
  encodeAttribute,
  InvalidArgumentError,
  type AttributeType,
} from '../../src/collections/index.ts';

const invalid = (re: RegExp) => (err: unknown) =>
  err instanceof InvalidArgumentError && err.code === 'invalid_argument' && re.test(err.message);
const num = (value: number | bigint) => ({ kind: 'numeric' as const, value });
const str = (value: string) => ({ kind: 'string' as const, value });
const enc = (type: AttributeType, v: unknown): number => {
  const s = encodeAttribute(type, v);
  assert.equal(s.kind, 'numeric');
  return s.value as number;
};

describe('encodeAttribute / decodeAttribute', () => {
  test('default: known stored values', () => {
    assert.deepEqual(encodeAttribute('str', 'pets'), { kind: 'string', value: 'pets' });
    assert.deepEqual(encodeAttribute('i32', -(2 ** 31)), { kind: 'numeric', value: 0 });
    assert.deepEqual(encodeAttribute('i32', 0), { kind: 'numeric', value: 2 ** 31 });
    assert.deepEqual(encodeAttribute('i32', -1), { kind: 'numeric', value: 2 ** 31 - 1 });
    assert.deepEqual(encodeAttribute('i32', 2 ** 31 - 1), { kind: 'numeric', value: 2 ** 32 - 1 });
    assert.deepEqual(encodeAttribute('uint', 0), { kind: 'numeric', value: 0 });
    assert.deepEqual(encodeAttribute('uint', Number.MAX_SAFE_INTEGER), {
      kind: 'numeric',
      value: Number.MAX_SAFE_INTEGER,
    });
    assert.deepEqual(encodeAttribute('f32', 1), { kind: 'numeric', value: 0xbf800000 });
    assert.deepEqual(encodeAttribute('f32', -1), { kind: 'numeric', value: 0x407fffff });
    assert.deepEqual(encodeAttribute('f32', 0), { kind: 'numeric', value: 0x80000000 });
    assert.deepEqual(encodeAttribute('f32', Infinity), { kind: 'numeric', value: 0xff800000 });
    assert.deepEqual(encodeAttribute('f32', -Infinity), { kind: 'numeric', value: 0x007fffff });
    assert.deepEqual(encodeAttribute('bool', true), { kind: 'numeric', value: 1 });
    assert.deepEqual(encodeAttribute('bool', false), { kind: 'numeric', value: 0 });
  });

  test('behavior: f32 -0 is stored as +0; a stored -0 from another writer decodes to -0', () => {
    assert.equal(enc('f32', -0), 0x80000000);
    assert.ok(Object.is(decodeAttribute('f32', num(0x80000000)), 0));
    assert.ok(Object.is(decodeAttribute('f32', num(0x7fffffff)), -0));
    assert.equal(enc('f32', -1e-50), 0x80000000); // rounds to -0 in binary32, stored as +0
    assert.equal(enc('f32', -(2 ** -149)), 0x7ffffffe); // smallest negative subnormal stays negative
    assert.ok(Object.is(enc('i32', -0), 2 ** 31));
    assert.ok(Object.is(enc('uint', -0), 0));
  });

  test('behavior: f32 rounds doubles to binary32', () => {
    fc.assert(
      fc.property(fc.double({ min: -3.4e38, max: 3.4e38, noNaN: true }), (x) => {
        const back = decodeAttribute('f32', num(enc('f32', x)));
        assert.ok(Object.is(back, Math.fround(x) + 0), `x=${x}`); // -0 is stored as +0
      }),
    );
    assert.equal(decodeAttribute('f32', num(enc('f32', 0.1))), Math.fround(0.1));
  });

  test('behavior: round trip of every type', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 256 }), (s) => {
        assert.equal(decodeAttribute('str', encodeAttribute('str', s) as ReturnType<typeof str>), s);
      }),
    );
    fc.assert(fc.property(fc.integer(), (v) => assert.equal(decodeAttribute('i32', num(enc('i32', v))), v)));
    fc.assert(fc.property(fc.maxSafeNat(), (v) => assert.equal(decodeAttribute('uint', num(enc('uint', v))), v)));
    fc.assert(
      fc.property(fc.float({ noNaN: true }), (v) => {
        const back = decodeAttribute('f32', num(enc('f32', v)));
        assert.ok(Object.is(back, v === 0 ? 0 : v), `v=${v} back=${String(back)}`);
      }),
    );
    for (const b of [true, false]) assert.equal(decodeAttribute('bool', num(enc('bool', b))), b);
  });

  test('behavior: bigint stored values are accepted within range', () => {
    assert.equal(decodeAttribute('uint', num(5n)), 5);
    assert.equal(decodeAttribute('i32', num(0n)), -(2 ** 31));
    assert.equal(decodeAttribute('f32', num(0xbf800000n)), 1);
    assert.equal(decodeAttribute('bool', num(1n)), true);
    assert.throws(() => decodeAttribute('uint', num(2n ** 53n)), invalid(/outside 0 to 9007199254740991/));
    assert.throws(() => decodeAttribute('i32', num(2n ** 32n)), invalid(/above 4294967295/));
  });

  test('behavior: i32, uint, f32 encodings are monotonic', () => {
    const strict = (type: AttributeType, arb: fc.Arbitrary<number>) =>
      fc.assert(
        fc.property(arb, arb, (a, b) => {
          if (a < b) assert.ok(enc(type, a) < enc(type, b), `${type}: ${a} < ${b}`);
          else if (a > b) assert.ok(enc(type, a) > enc(type, b), `${type}: ${a} > ${b}`);
          else assert.equal(enc(type, a), enc(type, b));
        }),
        { numRuns: 2000 },
      );
    strict('i32', fc.integer());
    strict('uint', fc.maxSafeNat());
    strict('f32', fc.float({ noNaN: true }));
    // Doubles may round to the same binary32: order is kept, not strictness.
    fc.assert(
      fc.property(
        fc.double({ min: -3e38, max: 3e38, noNaN: true }),
        fc.double({ min: -3e38, max: 3e38, noNaN: true }),
        (a, b) => {
          if (a <= b) assert.ok(enc('f32', a) <= enc('f32', b));
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('behavior: sorting by stored f32 equals sorting by value', () => {
    fc.assert(
      fc.property(fc.array(fc.float({ noNaN: true }), { maxLength: 50 }), (vs) => {
        const byValue = [...vs].sort((a, b) => a - b).map((v) => enc('f32', v));
        const byStored = vs.map((v) => enc('f32', v)).sort((a, b) => a - b);
        assert.deepEqual(byStored, byValue);
      }),
    );
  });

  test('behavior: stored numerics are non-negative safe integers below 2^32 for i32 and f32', () => {
    fc.assert(
      fc.property(fc.float({ noNaN: true }), fc.integer(), (f, i) => {
        for (const v of [enc('f32', f), enc('i32', i)]) assert.ok(Number.isSafeInteger(v) && v >= 0 && v < 2 ** 32);
      }),
    );
  });

  test('error: values that break the type', () => {
    assert.throws(() => encodeAttribute('str', 5), invalid(/str attribute must be a string, not 5/));
    assert.throws(() => encodeAttribute('str', 'a\uDC00'), invalid(/lone surrogate/));
    assert.throws(
      () => encodeAttribute('i32', 2 ** 31),
      invalid(/i32 attribute must be an integer from -2147483648 to 2147483647, not 2147483648/),
    );
    assert.throws(() => encodeAttribute('i32', -(2 ** 31) - 1), invalid(/i32/));
    assert.throws(() => encodeAttribute('i32', 1.5), invalid(/not 1.5/));
    assert.throws(() => encodeAttribute('i32', '5'), invalid(/not "5"/));
    assert.throws(() => encodeAttribute('uint', -1), invalid(/uint attribute/));
    assert.throws(() => encodeAttribute('uint', 2 ** 53), invalid(/uint attribute/));
    assert.throws(() => encodeAttribute('uint', 0.5), invalid(/uint attribute/));
    assert.throws(() => encodeAttribute('uint', 5n), invalid(/uint attribute/));
    assert.throws(() => encodeAttribute('f32', NaN), invalid(/NaN/));
    assert.throws(() => encodeAttribute('f32', 1e39), invalid(/binary32 range/));
    assert.throws(() => encodeAttribute('f32', '1'), invalid(/f32 attribute must be a number/));
    assert.throws(() => encodeAttribute('bool', 1), invalid(/bool attribute must be true or false, not 1/));
    assert.throws(() => encodeAttribute('bool', null), invalid(/not null/));
    assert.throws(() => encodeAttribute('date' as AttributeType, 1), invalid(/unknown attribute type "date"/));
  });

  test('error: str over 1024 utf-8 bytes', () => {
    assert.equal(encodeAttribute('str', 'a'.repeat(1024)).value, 'a'.repeat(1024));
    assert.throws(() => encodeAttribute('str', 'a'.repeat(1025)), invalid(/1025 utf-8 bytes, more than 1024/));
    assert.equal(encodeAttribute('str', '€'.repeat(341)).value, '€'.repeat(341)); // 1023 bytes
    assert.throws(() => encodeAttribute('str', '€'.repeat(342)), invalid(/1026 utf-8 bytes/));
    assert.throws(() => encodeAttribute('str', '😀'.repeat(257)), invalid(/1028 utf-8 bytes/));
    assert.throws(() => decodeAttribute('str', str('a'.repeat(1025))), invalid(/more than 1024/));
  });

  test('error: stored values that break the type', () => {
    assert.throws(
      () => decodeAttribute('str', num(1)),
      invalid(/str attribute must be stored as string, not "numeric"/),
    );
    assert.throws(() => decodeAttribute('i32', str('1')), invalid(/i32 attribute must be stored as numeric/));
    assert.throws(() => decodeAttribute('i32', num(2 ** 32)), invalid(/above 4294967295/));
    assert.throws(() => decodeAttribute('i32', num(-1)), invalid(/not an integer from 0/));
    assert.throws(() => decodeAttribute('uint', num(1.5)), invalid(/not an integer from 0/));
    assert.throws(() => decodeAttribute('uint', num(NaN)), invalid(/not an integer/));
    assert.throws(() => decodeAttribute('f32', num(2 ** 32)), invalid(/above/));
    assert.throws(() => decodeAttribute('bool', num(2)), invalid(/0 or 1, not 2/));
  });

  test('error: stored f32 NaN patterns are refused', () => {
    // +NaN bits 0x7fc00000 -> stored 0xffc00000; -NaN 0xffffffff -> stored 0; +NaN 0x7f800001 -> 0xff800001.
    for (const s of [0xffc00000, 0xffffffff, 0xff800001, 0, 0x007ffffe]) {
      assert.throws(() => decodeAttribute('f32', num(s)), invalid(/is NaN/), `stored 0x${s.toString(16)}`);
    }
    assert.equal(decodeAttribute('f32', num(0x007fffff)), -Infinity);
    assert.equal(decodeAttribute('f32', num(0xff800000)), Infinity);
  });
});
