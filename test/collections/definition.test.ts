// Tests src/collections/codecs/definition.ts: the collection definition payload, update rules, names and ids.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  checkDefinitionUpdate,
  collectionNameSchema,
  countsInCollection,
  DEFINITION_ATTRIBUTES_MAX,
  DEFINITION_DESCRIPTION_MAX_BYTES,
  DEFINITION_EMBEDDER_MAX_BYTES,
  DEFINITION_PAYLOAD_MAX_BYTES,
  DEFINITION_WRITERS_MAX,
  encodeCollectionDefinition,
  InvalidArgumentError,
  InvalidCollectionDefinitionError,
  isWriterAllowed,
  parseCollectionDefinition,
  validateCollectionDefinition,
  vectorIdSchema,
  type CollectionDefinition,
} from '../../src/collections/index.ts';

const bytes = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const W1 = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';
const W2 = '0x1111111111111111111111111111111111111111';

const base = { dim: 4, metric: 'cosine' };

function rejects(value: unknown, path: string, re: RegExp) {
  assert.throws(
    () => parseCollectionDefinition(bytes(value)),
    (err: unknown) => {
      assert.ok(err instanceof InvalidCollectionDefinitionError);
      assert.ok(err instanceof InvalidArgumentError);
      assert.equal(err.code, 'invalid_argument');
      assert.equal(err.status, 400);
      assert.match(err.message, /^invalid collection definition: [a-z]/);
      const issue = err.errors.find((e) => e.path === path);
      assert.ok(issue, `no issue at ${path}: ${JSON.stringify(err.errors)}`);
      assert.match(issue.message, re);
      return true;
    },
    JSON.stringify(value),
  );
}

describe('parseCollectionDefinition', () => {
  test('default: the DESIGN §4.1 example', () => {
    const def = parseCollectionDefinition(
      bytes({
        dim: 4,
        metric: 'cosine',
        attributes: { topic: 'str', stars: 'i32' },
        open: false,
        writers: [W1],
        index: { m: 16, ef_construction: 64, ef_search: 40 },
        default_ttl: { days: 30 },
        description: 'notes',
        embedder: { model: 'all-MiniLM-L6-v2' },
      }),
    );
    assert.deepEqual(def, {
      dim: 4,
      metric: 'cosine',
      attributes: { stars: 'i32', topic: 'str' },
      open: false,
      writers: [W1.toLowerCase()],
      index: { m: 16, ef_construction: 64, ef_search: 40 },
      default_ttl: { days: 30 },
      description: 'notes',
      embedder: { model: 'all-MiniLM-L6-v2' },
    });
  });

  test('default: defaults applied to a minimal definition', () => {
    assert.deepEqual(parseCollectionDefinition(bytes(base)), {
      dim: 4,
      metric: 'cosine',
      attributes: {},
      open: false,
      writers: [],
      index: { m: 16, ef_construction: 64, ef_search: 40 },
    });
    assert.deepEqual(parseCollectionDefinition(bytes({ ...base, index: { ef_search: 100 } })).index, {
      m: 16,
      ef_construction: 64,
      ef_search: 100,
    });
  });

  test('behavior: unknown top-level and index keys are ignored, embedder keeps its extras', () => {
    const def = parseCollectionDefinition(
      bytes({
        ...base,
        future: { x: 1 },
        index: { m: 8, type: 'ivfflat' },
        embedder: { model: 'm', dimensions: 4, url: 'u' },
      }),
    );
    assert.equal('future' in def, false);
    assert.deepEqual(def.index, { m: 8, ef_construction: 64, ef_search: 40 });
    assert.deepEqual(def.embedder, { model: 'm', dimensions: 4, url: 'u' });
  });

  test('behavior: writers are lowercased and deduplicated', () => {
    const def = parseCollectionDefinition(bytes({ ...base, writers: [W1, W1.toLowerCase(), W2] }));
    assert.deepEqual(def.writers, [W1.toLowerCase(), W2]);
  });

  test('args: every metric and the dim limits', () => {
    for (const metric of ['cosine', 'l2', 'ip'])
      assert.equal(parseCollectionDefinition(bytes({ dim: 1, metric })).metric, metric);
    assert.equal(parseCollectionDefinition(bytes({ dim: 4000, metric: 'l2' })).dim, 4000);
  });

  test('error: dim and metric', () => {
    for (const dim of [0, 4001, 1.5, '4', null, -1])
      rejects({ dim, metric: 'l2' }, 'dim', /^dim must be an integer from 1 to 4000$/);
    rejects({ metric: 'l2' }, 'dim', /dim must be an integer/);
    rejects({ dim: 4, metric: 'dot' }, 'metric', /^metric must be one of cosine, l2, ip$/);
  });

  test('error: attribute names and types', () => {
    rejects({ ...base, attributes: { arkivector_x: 'str' } }, 'attributes.arkivector_x', /reserved/);
    rejects({ ...base, attributes: { arkivector_: 'str' } }, 'attributes.arkivector_', /reserved/);
    for (const name of ['Topic', '1abc', 'a-b', 'a'.repeat(33), '', 'é']) {
      rejects({ ...base, attributes: { [name]: 'str' } }, `attributes.${name}`, /attribute name must be/);
    }
    rejects({ ...base, attributes: { topic: 'int' } }, 'attributes.topic', /must be one of str, i32, uint, f32, bool/);
    rejects({ ...base, attributes: ['str'] }, 'attributes', /must be an object/);
    rejects('{"dim":4,"metric":"l2","attributes":{"__proto__":"str"}}', 'attributes.__proto__', /reserved/);
    assert.deepEqual(
      parseCollectionDefinition(bytes({ ...base, attributes: { _x: 'bool', a: 'f32', ['b'.repeat(32)]: 'uint' } }))
        .attributes,
      {
        _x: 'bool',
        a: 'f32',
        ['b'.repeat(32)]: 'uint',
      },
    );
  });

  test('error: writers, open, ttl, index, embedder, description', () => {
    rejects({ ...base, writers: ['0x123'] }, 'writers.0', /0x address/);
    rejects({ ...base, writers: W1 }, 'writers', /array/);
    rejects({ ...base, open: 'yes' }, 'open', /true or false/);
    rejects({ ...base, default_ttl: {} }, 'default_ttl', /exactly one/);
    rejects({ ...base, default_ttl: { days: 1, hours: 2 } }, 'default_ttl', /exactly one/);
    rejects({ ...base, default_ttl: { days: 0 } }, 'default_ttl.days', /positive integer/);
    rejects({ ...base, default_ttl: { days: 1.5 } }, 'default_ttl.days', /positive integer/);
    rejects(
      { ...base, default_ttl: { weeks: 1 } },
      'default_ttl',
      /^unknown ttl unit "weeks", expected one of seconds, minutes, hours, days, blocks$/,
    );
    rejects({ ...base, index: { m: 1 } }, 'index.m', /from 2 to 100/);
    rejects({ ...base, index: { m: 101 } }, 'index.m', /from 2 to 100/);
    rejects({ ...base, index: { ef_search: 0 } }, 'index.ef_search', /from 1 to 1000/);
    rejects({ ...base, index: { ef_search: 1001 } }, 'index.ef_search', /from 1 to 1000/);
    rejects({ ...base, index: { ef_construction: 3 } }, 'index.ef_construction', /from 4 to 1000/);
    rejects({ ...base, index: { m: 48 } }, 'index.ef_construction', /greater than or equal to 2 \* m/);
    rejects({ ...base, embedder: {} }, 'embedder.model', /embedder.model must be a string/);
    rejects({ ...base, embedder: { model: '' } }, 'embedder.model', /must not be empty/);
    rejects({ ...base, description: 5 }, 'description', /must be a string/);
  });

  test('error: not utf-8, not json, not an object', () => {
    assert.throws(
      () => parseCollectionDefinition(new Uint8Array([0x7b, 0xff, 0x7d])),
      /^InvalidCollectionDefinitionError: invalid collection definition: payload is not valid utf-8$/,
    );
    assert.throws(() => parseCollectionDefinition(bytes('{"dim":4,')), /payload is not valid json/);
    for (const v of ['[]', 'null', '4', '"x"']) rejects(v, '', /must be a json object/);
  });

  test('error: every issue is listed, the message counts the rest', () => {
    assert.throws(
      () => parseCollectionDefinition(bytes({ dim: 0, metric: 'x', open: 1 })),
      (err: unknown) =>
        err instanceof InvalidCollectionDefinitionError &&
        err.errors.length === 3 &&
        err.message === 'invalid collection definition: dim must be an integer from 1 to 4000 (and 2 more)',
    );
  });

  test('behavior: random garbage bytes throw InvalidCollectionDefinitionError only', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 64 }),
          fc.json().map((j) => bytes(j)),
        ),
        (b) => {
          try {
            parseCollectionDefinition(b);
          } catch (err) {
            assert.ok(err instanceof InvalidCollectionDefinitionError, String(err));
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

const attrName = fc
  .stringMatching(/^[a-z_][a-z0-9_]{0,31}$/)
  .filter((s) => !s.startsWith('arkivector_') && s !== '__proto__');
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString('hex')}`);
const definitionArb = fc.record(
  {
    dim: fc.integer({ min: 1, max: 4000 }),
    metric: fc.constantFrom('cosine', 'l2', 'ip'),
    attributes: fc.dictionary(attrName, fc.constantFrom('str', 'i32', 'uint', 'f32', 'bool'), { maxKeys: 8 }),
    open: fc.boolean(),
    writers: fc.uniqueArray(address, { maxLength: 4 }),
    index: fc
      .record({ m: fc.integer({ min: 2, max: 100 }), ef_search: fc.integer({ min: 1, max: 1000 }) })
      .chain((p) =>
        fc.integer({ min: Math.max(4, 2 * p.m), max: 1000 }).map((ef_construction) => ({ ...p, ef_construction })),
      ),
    default_ttl: fc.oneof(
      fc.record({ days: fc.integer({ min: 1, max: 3650 }) }),
      fc.record({ blocks: fc.integer({ min: 1, max: 10 ** 9 }) }),
      fc.record({ seconds: fc.integer({ min: 1, max: 10 ** 9 }) }),
    ),
    description: fc.string({ unit: 'binary', maxLength: 80 }),
    embedder: fc.record({ model: fc.string({ minLength: 1, maxLength: 20 }) }),
  },
  { requiredKeys: ['dim', 'metric'] },
);

describe('encodeCollectionDefinition', () => {
  test('default: fixed key order and defaults written out', () => {
    const text = new TextDecoder().decode(
      encodeCollectionDefinition({ dim: 4, metric: 'cosine', attributes: { topic: 'str' } }),
    );
    assert.equal(
      text,
      '{"dim":4,"metric":"cosine","attributes":{"topic":"str"},"open":false,"writers":[],"index":{"m":16,"ef_construction":64,"ef_search":40}}',
    );
  });

  test('behavior: parse(encode(d)) equals the normalized definition, and encode is idempotent', () => {
    fc.assert(
      fc.property(definitionArb, (d) => {
        const normalized = validateCollectionDefinition(d);
        const encoded = encodeCollectionDefinition(d);
        const parsed = parseCollectionDefinition(encoded);
        assert.deepEqual(parsed, normalized);
        assert.deepEqual(encodeCollectionDefinition(parsed), encoded);
        assert.equal(parsed.dim, d.dim);
        assert.equal(parsed.metric, d.metric);
        assert.equal(parsed.open, d.open ?? false);
        assert.deepEqual(Object.keys(parsed.attributes).sort(), Object.keys(d.attributes ?? {}).sort());
      }),
      { numRuns: 300 },
    );
  });

  test('error: invalid definitions are not encoded', () => {
    assert.throws(() => encodeCollectionDefinition({ dim: 0, metric: 'cosine' }), InvalidCollectionDefinitionError);
  });
});

describe('checkDefinitionUpdate', () => {
  const old: CollectionDefinition = validateCollectionDefinition({
    dim: 4,
    metric: 'cosine',
    attributes: { topic: 'str', stars: 'i32' },
    writers: [W1],
    index: { m: 16, ef_construction: 64, ef_search: 40 },
    default_ttl: { days: 30 },
    description: 'a',
    embedder: { model: 'm1' },
  });

  test('default: allowed changes give no violations', () => {
    const next = validateCollectionDefinition({
      ...old,
      attributes: { ...old.attributes, lang: 'str' },
      writers: [W2],
      open: true,
      index: { ...old.index, ef_search: 200 },
      default_ttl: { blocks: 10 },
      description: 'b',
    });
    assert.deepEqual(checkDefinitionUpdate(old, next), []);
    assert.deepEqual(checkDefinitionUpdate(old, old), []);
  });

  test('error: forbidden changes are listed by field', () => {
    const next = validateCollectionDefinition({
      ...old,
      dim: 8,
      metric: 'l2',
      attributes: { topic: 'i32' },
      index: { m: 8, ef_construction: 100, ef_search: 40 },
      embedder: { model: 'm2' },
    });
    assert.deepEqual(checkDefinitionUpdate(old, next), [
      { field: 'dim', message: 'dim cannot change (4 to 8)' },
      { field: 'metric', message: 'metric cannot change (cosine to l2)' },
      { field: 'attributes.stars', message: 'attribute stars cannot be removed' },
      { field: 'attributes.topic', message: 'attribute topic cannot change type (str to i32)' },
      { field: 'index.m', message: 'index.m cannot change (16 to 8)' },
      { field: 'index.ef_construction', message: 'index.ef_construction cannot change (64 to 100)' },
      { field: 'embedder', message: 'embedder cannot change' },
    ]);
  });

  test('behavior: embedder compared by value, key order irrelevant', () => {
    const a = validateCollectionDefinition({ ...base, embedder: { model: 'm', dimensions: 4 } });
    const b = validateCollectionDefinition({ ...base, embedder: { dimensions: 4, model: 'm' } });
    assert.deepEqual(checkDefinitionUpdate(a, b), []);
    const c = validateCollectionDefinition(base);
    assert.deepEqual(
      checkDefinitionUpdate(a, c).map((v) => v.field),
      ['embedder'],
    );
  });
});

describe('isWriterAllowed', () => {
  test('default: owner and writers of a closed collection, anyone in an open one', () => {
    const closed = validateCollectionDefinition({ ...base, writers: [W1] });
    assert.equal(isWriterAllowed(closed, W2, W2.toUpperCase().replace('0X', '0x')), true);
    assert.equal(isWriterAllowed(closed, W2, W1.toLowerCase()), true);
    assert.equal(isWriterAllowed(closed, W2, '0x2222222222222222222222222222222222222222'), false);
    const open = validateCollectionDefinition({ ...base, open: true });
    assert.equal(isWriterAllowed(open, W2, '0x2222222222222222222222222222222222222222'), true);
  });
});

describe('countsInCollection', () => {
  const stranger = '0x2222222222222222222222222222222222222222';
  test('closed: a permitted writer must have created it and must own it now', () => {
    const closed = validateCollectionDefinition({ ...base, writers: [W1] });
    assert.equal(countsInCollection(closed, W2, { owner: W1, creator: W2 }), true);
    // handed in by ChangeOwner from outside: never counts
    assert.equal(countsInCollection(closed, W2, { owner: W2, creator: stranger }), false);
    // handed out to a stranger: no longer counts
    assert.equal(countsInCollection(closed, W2, { owner: stranger, creator: W2 }), false);
    assert.equal(countsInCollection(closed, W2, { owner: W2, creator: undefined }), false);
  });
  test('open: every writer counts', () => {
    const open = validateCollectionDefinition({ ...base, open: true });
    assert.equal(countsInCollection(open, W2, { owner: stranger, creator: undefined }), true);
  });
});

describe('definition bounds', () => {
  const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  test('boundary: every bounded field accepts its limit and refuses one more', () => {
    const cases: [string, (n: number) => unknown, number][] = [
      ['description', (n) => ({ ...base, description: 'é'.repeat(n / 2) }), DEFINITION_DESCRIPTION_MAX_BYTES],
      [
        'writers',
        (n) => ({ ...base, writers: Array.from({ length: n }, (_, i) => `0x${i.toString(16).padStart(40, '0')}`) }),
        DEFINITION_WRITERS_MAX,
      ],
      [
        'attributes',
        (n) => ({ ...base, attributes: Object.fromEntries(Array.from({ length: n }, (_, i) => [`a${i}`, 'str'])) }),
        DEFINITION_ATTRIBUTES_MAX,
      ],
      [
        'embedder',
        // {"model":"…"} is 12 bytes of json around the model
        (n) => ({ ...base, embedder: { model: 'm'.repeat(n - 12) } }),
        DEFINITION_EMBEDDER_MAX_BYTES,
      ],
    ];
    for (const [field, make, limit] of cases) {
      assert.doesNotThrow(() => parseCollectionDefinition(enc(make(limit))), field);
      assert.throws(
        () => parseCollectionDefinition(enc(make(limit + 2))),
        InvalidCollectionDefinitionError,
        `${field} over its limit`,
      );
    }
  });
  test('error: a payload over the limit is refused before it is parsed', () => {
    const padded = new Uint8Array(DEFINITION_PAYLOAD_MAX_BYTES + 1).fill(0x20);
    padded.set(enc(base));
    assert.throws(() => parseCollectionDefinition(padded), /payload is 65537 bytes/);
    assert.doesNotThrow(() => parseCollectionDefinition(padded.subarray(0, DEFINITION_PAYLOAD_MAX_BYTES)));
  });
});

describe('collectionNameSchema', () => {
  test('default: accepts DESIGN §4.1 names', () => {
    for (const n of ['notes', 'demo.docs', '0', 'a-b_c.d', 'a'.repeat(63)])
      assert.equal(collectionNameSchema.parse(n), n);
  });
  test('error: bad names', () => {
    for (const n of ['', '.x', '-x', '_x', 'Notes', 'a b', 'a/b', 'a'.repeat(64), 'é']) {
      const r = collectionNameSchema.safeParse(n);
      assert.equal(r.success, false, n);
      assert.match(r.error?.issues[0]?.message ?? '', /^collection name must be 1-63 characters/);
    }
    assert.equal(collectionNameSchema.safeParse(5).success, false);
  });
});

describe('vectorIdSchema', () => {
  test('default: 1-256 utf-8 bytes', () => {
    const nearKeys = [`0x${'ab'.repeat(31)}a`, `0x${'ab'.repeat(32)}0`, `1x${'ab'.repeat(32)}`, `0x${'ag'.repeat(32)}`];
    for (const id of ['cat', 'a', 'a'.repeat(256), '😀'.repeat(64), 'doc#3 chunk 2', 'ü'.repeat(128), ...nearKeys])
      assert.equal(vectorIdSchema.parse(id), id);
  });
  test('error: empty, too long, control characters, lone surrogates', () => {
    const cases: [string, RegExp][] = [
      ['', /1-256 utf-8 bytes/],
      ['a'.repeat(257), /1-256 utf-8 bytes/],
      [`${'😀'.repeat(64)}a`, /1-256 utf-8 bytes/],
      ['a\nb', /control characters/],
      ['\u0000', /control characters/],
      ['\u007f', /control characters/],
      ['\u0085', /control characters/],
      ['a\uD800', /lone surrogate/],
      [`0x${'ab'.repeat(32)}`, /form of an entity key/],
      [`0x${'AB'.repeat(32)}`, /form of an entity key/],
    ];
    for (const [id, re] of cases) {
      const r = vectorIdSchema.safeParse(id);
      assert.equal(r.success, false, JSON.stringify(id));
      assert.match(r.error?.issues[0]?.message ?? '', re);
    }
  });
});
