// Tests src/collections/codecs/vectorEntity.ts: RawEntity <-> VectorRecord against a collection definition.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  decodeVectorEntity,
  DimensionMismatchError,
  encodeAttribute,
  encodeVectorEntity,
  encodeVectorPayload,
  halfBitsToFloat,
  floatToHalfBits,
  InvalidArgumentError,
  validateCollectionDefinition,
  VECTOR_CONTENT_TYPE,
  type EncodedVectorEntity,
  type RawEntity,
} from '../../src/collections/index.ts';

const definition = validateCollectionDefinition({
  dim: 4,
  metric: 'cosine',
  attributes: { topic: 'str', stars: 'i32', views: 'uint', score: 'f32', done: 'bool' },
});
const notes = { name: 'notes', definition };
const OWNER = '0x1111111111111111111111111111111111111111';

/** A RawEntity whose attribute maps the tests may edit (the codec only reads them). */
type EditableRaw = RawEntity & {
  stringAttributes: Map<string, string>;
  numericAttributes: Map<string, bigint | number>;
};

function toRaw(e: EncodedVectorEntity, over: Partial<EditableRaw> = {}): EditableRaw {
  return {
    key: `0x${'ab'.repeat(32)}`,
    owner: OWNER,
    creator: OWNER,
    contentType: e.contentType,
    payload: e.payload,
    stringAttributes: new Map(e.stringAttributes.map((a) => [a.key, a.value])),
    numericAttributes: new Map<string, number | bigint>(e.numericAttributes.map((a) => [a.key, a.value])),
    expiresAt: 1000n,
    ...over,
  };
}

const cat = () =>
  encodeVectorEntity(
    {
      collection: 'notes',
      id: 'cat',
      vector: [1, 0.5, -0.25, 0.1],
      document: 'a cat',
      attributes: { topic: 'pets', stars: -3, views: 12, score: 0.75, done: true },
    },
    definition,
  );

function rejected(raw: RawEntity, re: RegExp) {
  const r = decodeVectorEntity(raw, notes);
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.reason, re);
}

describe('encodeVectorEntity', () => {
  test('default: createEntity shape', () => {
    const e = cat();
    assert.equal(e.contentType, VECTOR_CONTENT_TYPE);
    assert.deepEqual(e.stringAttributes, [
      { key: 'arkivector_type', value: 'vector' },
      { key: 'arkivector_collection', value: 'notes' },
      { key: 'arkivector_id', value: 'cat' },
      { key: 'topic', value: 'pets' },
    ]);
    assert.deepEqual(e.numericAttributes, [
      { key: 'done', value: 1 },
      { key: 'score', value: 0xbf400000 },
      { key: 'stars', value: 2 ** 31 - 3 },
      { key: 'views', value: 12 },
    ]);
    assert.deepEqual(e.attributes, [...e.stringAttributes, ...e.numericAttributes]);
    assert.deepEqual([...e.payload.subarray(0, 4)], [1, 1, 4, 0]);
    assert.equal(new TextDecoder().decode(e.payload.subarray(12)), 'a cat');
  });

  test('default: document and attributes are optional, undefined attributes left out', () => {
    const e = encodeVectorEntity(
      { collection: 'notes', id: 'x', vector: [0, 0, 0, 0], attributes: { topic: undefined } },
      definition,
    );
    assert.equal(e.payload.length, 12);
    assert.equal(e.numericAttributes.length, 0);
    assert.equal(e.stringAttributes.length, 3);
  });

  test('error: dimension_mismatch', () => {
    assert.throws(
      () => encodeVectorEntity({ collection: 'notes', id: 'x', vector: [1, 2, 3] }, definition),
      (err: unknown) =>
        err instanceof DimensionMismatchError &&
        err.expected === 4 &&
        err.got === 3 &&
        err.message === 'expected 4 dimensions, not 3',
    );
  });

  test('error: invalid_argument', () => {
    const ok = { collection: 'notes', id: 'x', vector: [1, 2, 3, 4] };
    const cases: [object, RegExp][] = [
      [{ collection: 'Notes' }, /collection name/],
      [{ id: '' }, /1-256 utf-8 bytes/],
      [{ id: 'a\tb' }, /control characters/],
      [{ vector: [1, 2, 3, NaN] }, /vector element 3/],
      [{ vector: [1, 2, 3, 1e6] }, /binary16 range/],
      [{ vector: 'abcd' }, /vector must be an array/],
      [{ document: 'x\uDFFF' }, /lone surrogate/],
      [{ attributes: { color: 'red' } }, /attribute color is not declared by collection notes/],
      [{ attributes: { arkivector_id: 'y' } }, /not declared/],
      [{ attributes: { stars: 2 ** 31 } }, /^attribute stars: i32 attribute must be an integer/],
      [{ attributes: { done: 'yes' } }, /attribute done: bool/],
      [{ attributes: { topic: 'x'.repeat(1025) } }, /more than 1024/],
    ];
    for (const [over, re] of cases) {
      assert.throws(
        () => encodeVectorEntity({ ...ok, ...over } as Parameters<typeof encodeVectorEntity>[0], definition),
        (err: unknown) => err instanceof InvalidArgumentError && re.test(err.message),
        JSON.stringify(over),
      );
    }
  });

  test('behavior: numeric attribute values are what the SDK accepts (non-negative safe integers)', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.maxSafeNat(),
        fc.float({ noNaN: true }),
        fc.boolean(),
        (stars, views, score, done) => {
          const e = encodeVectorEntity(
            { collection: 'notes', id: 'x', vector: [0, 0, 0, 0], attributes: { stars, views, score, done } },
            definition,
          );
          for (const a of e.numericAttributes) assert.ok(Number.isSafeInteger(a.value) && a.value >= 0);
        },
      ),
    );
  });
});

describe('decodeVectorEntity', () => {
  test('default: round trip of an encoded entity', () => {
    const r = decodeVectorEntity(toRaw(cat()), notes);
    assert.equal(r.ok, true);
    if (!r.ok) return;
    const rec = r.record;
    assert.equal(rec.id, 'cat');
    assert.equal(rec.collection, 'notes');
    assert.equal(rec.key, `0x${'ab'.repeat(32)}`);
    assert.equal(rec.owner, OWNER);
    assert.equal(rec.expiresAt, 1000n);
    assert.equal(rec.dim, 4);
    assert.deepEqual([...rec.vector], [1, 0.5, -0.25, halfBitsToFloat(floatToHalfBits(0.1))]);
    assert.deepEqual([...rec.halfvec], [0x00, 0x3c, 0x00, 0x38, 0x00, 0xb4, 0x66, 0x2e]);
    assert.equal(rec.document, 'a cat');
    assert.deepEqual({ ...rec.attributes }, { topic: 'pets', stars: -3, views: 12, score: 0.75, done: true });
  });

  test('behavior: random entities round-trip', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: 4, maxLength: 4 }),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((s) => !/\p{Cc}/u.test(s)),
        fc.string({ unit: 'binary', maxLength: 100 }),
        fc.record(
          {
            topic: fc.string({ maxLength: 50 }),
            stars: fc.integer(),
            views: fc.maxSafeNat(),
            score: fc.float({ noNaN: true }),
            done: fc.boolean(),
          },
          { requiredKeys: [] },
        ),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        (vector, id, document, attributes, expiresAt) => {
          const e = encodeVectorEntity({ collection: 'notes', id, vector, document, attributes }, definition);
          const r = decodeVectorEntity(toRaw(e, { expiresAt }), notes);
          assert.equal(r.ok, true, r.ok ? '' : r.reason);
          if (!r.ok) return;
          assert.equal(r.record.id, id);
          assert.equal(r.record.document, document);
          assert.equal(r.record.expiresAt, expiresAt);
          vector.forEach((x, i) => {
            assert.equal(r.record.vector[i], halfBitsToFloat(floatToHalfBits(x)));
          });
          const expected: Record<string, unknown> = { ...attributes };
          if (typeof expected.score === 'number') expected.score = Math.fround(expected.score) + 0;
          assert.deepEqual({ ...r.record.attributes }, expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('behavior: missing declared attributes are absent, undeclared ones ignored', () => {
    const e = encodeVectorEntity(
      { collection: 'notes', id: 'x', vector: [0, 0, 0, 1], attributes: { topic: 't' } },
      definition,
    );
    const raw = toRaw(e);
    raw.stringAttributes.set('color', 'red');
    raw.numericAttributes.set('weight', 2 ** 60);
    raw.numericAttributes.set('arkivector_version', 2);
    const r = decodeVectorEntity(raw, notes);
    assert.equal(r.ok, true);
    if (r.ok) {
      assert.deepEqual({ ...r.record.attributes }, { topic: 't' });
      assert.equal(Object.getPrototypeOf(r.record.attributes), null);
    }
  });

  test('behavior: number expiresAt and bigint numeric attributes (uint64 from the chain)', () => {
    const raw = toRaw(cat(), { expiresAt: 77 });
    raw.numericAttributes.set('views', 12n);
    const r = decodeVectorEntity(raw, notes);
    assert.equal(r.ok, true);
    if (r.ok) {
      assert.equal(r.record.expiresAt, 77n);
      assert.equal(r.record.attributes.views, 12);
    }
  });

  test('error: envelope (content type, type, collection, id, payload, expiresAt)', () => {
    const e = cat();
    rejected(toRaw(e, { contentType: 'application/octet-stream' }), /content type is "application\/octet-stream"/);
    rejected(toRaw(e, { contentType: undefined }), /content type is null/);
    const wrongType = toRaw(e);
    wrongType.stringAttributes.set('arkivector_type', 'collection');
    rejected(wrongType, /arkivector_type is "collection", expected "vector"/);
    const noType = toRaw(e);
    noType.stringAttributes.delete('arkivector_type');
    rejected(noType, /arkivector_type is null/);
    const other = toRaw(e);
    other.stringAttributes.set('arkivector_collection', 'other');
    rejected(other, /arkivector_collection is "other", expected "notes"/);
    for (const [id, re] of [
      [undefined, /id must be a string/],
      ['', /1-256/],
      ['a'.repeat(257), /1-256/],
      ['a\u0000', /control/],
    ] as const) {
      const raw = toRaw(e);
      if (id === undefined) raw.stringAttributes.delete('arkivector_id');
      else raw.stringAttributes.set('arkivector_id', id);
      rejected(raw, re);
    }
    rejected(toRaw(e, { payload: undefined }), /payload is missing/);
    rejected(toRaw(e, { expiresAt: 1.5 }), /expiresAt is not an integer/);
    rejected(toRaw(e, { expiresAt: -1n }), /expiresAt is negative/);
  });

  test('error: payload (dim mismatch, truncated, non-finite, bad utf-8)', () => {
    const e = cat();
    rejected(
      toRaw(e, { payload: encodeVectorPayload({ vector: new Array(8).fill(0), document: '' }) }),
      /^payload: expected 4 dimensions, not 8$/,
    );
    rejected(toRaw(e, { payload: e.payload.subarray(0, 10) }), /^payload: payload is 10 bytes, too short/);
    const inf = e.payload.slice();
    inf[5] = 0x7c;
    inf[4] = 0x00;
    rejected(toRaw(e, { payload: inf }), /^payload: vector element 0 is not finite/);
    const badDoc = new Uint8Array([...e.payload.subarray(0, 12), 0xff]);
    rejected(toRaw(e, { payload: badDoc }), /^payload: document is not valid utf-8$/);
  });

  test('error: attributes of the wrong kind or with bad values', () => {
    const cases: [(raw: EditableRaw) => void, RegExp][] = [
      [(r) => r.numericAttributes.set('topic', 1), /attribute topic is declared str but stored as numeric/],
      [(r) => r.stringAttributes.set('stars', '5'), /attribute stars is declared i32 but stored as string/],
      [
        (r) => r.numericAttributes.set('stars', 2 ** 32),
        /^attribute stars: stored i32 4294967296 is above 4294967295$/,
      ],
      [(r) => r.numericAttributes.set('views', 2n ** 63n), /^attribute views: stored number/],
      [(r) => r.numericAttributes.set('done', 2), /^attribute done: stored bool must be 0 or 1, not 2$/],
      [
        (r) => r.numericAttributes.set('score', -1),
        /^attribute score: stored number -1 is not an integer from 0 to 9007199254740991$/,
      ],
      [
        (r) => r.numericAttributes.set('score', (encodeAttribute('f32', 1).value as number) + 0.5),
        /^attribute score: stored number .* is not an integer/,
      ],
      [(r) => r.numericAttributes.set('score', 0xffc00000), /^attribute score: stored f32 4290772992 is NaN$/],
      [(r) => r.stringAttributes.set('topic', '€'.repeat(342)), /^attribute topic: str attribute is 1026 utf-8 bytes/],
    ];
    for (const [mutate, re] of cases) {
      const raw = toRaw(cat());
      mutate(raw);
      rejected(raw, re);
    }
  });

  test('behavior: random garbage never throws', () => {
    const e = cat();
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 80 }),
        fc.dictionary(
          fc.constantFrom('arkivector_type', 'arkivector_collection', 'arkivector_id', 'topic', 'stars', 'x'),
          fc.string(),
        ),
        fc.dictionary(
          fc.constantFrom('topic', 'stars', 'views', 'score', 'done', 'y'),
          fc.oneof(fc.double(), fc.bigInt(), fc.integer()),
        ),
        (payload, strs, nums) => {
          const raw = toRaw(e, {
            payload,
            stringAttributes: new Map([...toRaw(e).stringAttributes, ...Object.entries(strs)]),
            numericAttributes: new Map(Object.entries(nums)),
          });
          const r = decodeVectorEntity(raw, notes);
          if (r.ok) {
            for (const v of r.record.vector) assert.ok(Number.isFinite(v));
            assert.equal(r.record.vector.length, 4);
          } else assert.equal(typeof r.reason, 'string');
        },
      ),
      { numRuns: 2000 },
    );
  });

  test('behavior: hostile shapes never throw', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), (a, b, c) => {
        const raw = {
          key: a,
          owner: b,
          contentType: VECTOR_CONTENT_TYPE,
          payload: c,
          stringAttributes: a,
          numericAttributes: b,
          expiresAt: c,
        };
        const r = decodeVectorEntity(raw as unknown as RawEntity, notes);
        assert.equal(r.ok, false);
      }),
    );
    assert.deepEqual(decodeVectorEntity(null as unknown as RawEntity, notes), {
      ok: false,
      reason: 'entity could not be decoded',
    });
    const weird = toRaw(cat());
    weird.stringAttributes.set('topic', 5 as unknown as string);
    rejected(weird, /attribute topic: str attribute value is not a string/);
  });
});
