// The store keeps its records in columns (recordColumns.ts, attributeColumns.ts) and builds what readers
// get from them: get, records and search hits answer exactly the records the store was given, across
// replacements, deletes, slot reuse, definition updates and snapshot round trips; a snapshot the store
// wrote before its records became columns loads and answers as a store that applied the same blocks now;
// and a store keeps no object, key string or id string per record.
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import {
  type AttributeValue,
  type CollectionDefinition,
  ENTITY_KEY_FORM_REGEX,
  type VectorRecord,
} from '../../src/collections/index.ts';
import { CollectionStore } from '../../src/engine/index.ts';
import { heapByGroup, heapNodes } from '../helpers/heapSnapshot.ts';
import { COLUMN_FIRST_BLOCK, COLUMN_REMOVED, columnDefinition, columnRecords, columnVector } from './columnRecords.ts';
import { definition, keyOf, makeRecord } from './helpers.ts';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'snapshot-main-caa7a0d');
const FIELDS = ['key', 'owner', 'creator', 'id', 'expiresAt', 'document'] as const;

/** A record's fields as a search hit carries them (no vector, collection or dimension). */
function summaryOf(r: VectorRecord) {
  return {
    key: r.key,
    owner: r.owner,
    creator: r.creator,
    id: r.id,
    expiresAt: r.expiresAt,
    document: r.document,
    attributes: r.attributes,
  };
}

/** `got` has exactly `want`'s fields, attributes in the same order, and (when asked) its vector. */
function assertSameRecord(got: VectorRecord | undefined, want: VectorRecord, withVector = true): void {
  assert.ok(got !== undefined, `${want.id} is missing`);
  for (const f of FIELDS) assert.equal(got[f], want[f], `${want.id}.${f}`);
  assert.deepEqual(Object.keys(got.attributes), Object.keys(want.attributes), `${want.id}: attribute order`);
  assert.deepEqual(got.attributes, want.attributes, `${want.id}.attributes`);
  if (withVector) assert.deepEqual([...got.vector], [...want.vector], `${want.id}.vector`);
}

describe('a snapshot written before the records became columns', () => {
  let dir: string;
  let loaded: CollectionStore;
  let fresh: CollectionStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arkivector-columns-'));
    await cp(FIXTURE, join(dir, 'snap'), { recursive: true });
    loaded = await CollectionStore.load(join(dir, 'snap'), 'cols', columnDefinition());
    fresh = new CollectionStore('cols', columnDefinition());
    const recs = columnRecords();
    await fresh.apply({ remove: [], upsert: recs.slice(0, COLUMN_FIRST_BLOCK) });
    await fresh.apply({ remove: COLUMN_REMOVED.map(keyOf), upsert: recs.slice(COLUMN_FIRST_BLOCK) });
  });
  after(async () => {
    await Promise.all([loaded.close(), fresh.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  test('get and records answer every field as it went in, by id and by key', () => {
    const recs = columnRecords();
    assert.equal(loaded.size, recs.length - COLUMN_REMOVED.length);
    for (const [i, rec] of recs.entries()) {
      if (COLUMN_REMOVED.includes(i)) {
        assert.equal(loaded.get(rec.id), undefined);
        continue;
      }
      const got = ENTITY_KEY_FORM_REGEX.test(rec.id) ? undefined : loaded.get(rec.id);
      assertSameRecord(got, rec);
      assertSameRecord(got, fresh.get(rec.id)!);
      if (ENTITY_KEY_FORM_REGEX.test(rec.key))
        assert.equal(loaded.get(rec.key.toUpperCase().replace('0X', '0x'))?.id, rec.id);
    }
    assert.deepEqual(
      [...loaded.records()].map((r) => r.id),
      [...fresh.records()].map((r) => r.id),
    );
  });

  test('search hits, filters on every column and keyword searches answer the same', () => {
    for (const q of [0, 3, 9, 21]) {
      const a = loaded.search({ vector: columnVector(q), k: 6 }).results;
      const b = fresh.search({ vector: columnVector(q), k: 6 }).results;
      assert.deepEqual(a, b);
    }
    for (const where of [
      `$owner = '0x00000000000000000000000000000000000000aa'`,
      `$creator = '0xbeef'`,
      `$key = '${`0x${'AbCdEf01'.repeat(8)}`.toLowerCase()}'`,
      `$key != 'k'`,
      `n >= 10`,
      `tag = 't1'`,
      `ok = true`,
      `f > 1`,
    ]) {
      assert.equal(loaded.count({ where }), fresh.count({ where }), where);
      assert.deepEqual(loaded.select({ where }), fresh.select({ where }), where);
      assert.deepEqual(
        loaded.search({ vector: columnVector(1), k: 4, where }).results,
        fresh.search({ vector: columnVector(1), k: 4, where }).results,
        where,
      );
    }
    assert.deepEqual(loaded.keywordSearch({ text: 'cats', k: 10 }), fresh.keywordSearch({ text: 'cats', k: 10 }));
  });
});

const DIM = 4;
const DEF = definition(DIM, { n: 'i32', s: 'str', b: 'bool' });
const WIDER: CollectionDefinition = { ...DEF, attributes: { ...DEF.attributes, x: 'f32', u: 'str' } };

const attrName = fc.constantFrom('n', 's', 'b', 'x', 'u', '__proto__', 'zz');
const attrValue = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.double({ noNaN: true, noDefaultInfinity: false }).filter((v) => !Object.is(v, -0)),
  fc.boolean(),
  fc.constantFrom('a', 'b', 'ü', ''),
);
const recordArb = fc.record({
  slot: fc.integer({ min: 0, max: 11 }),
  keyForm: fc.constantFrom('lower', 'upper', 'other'),
  id: fc.oneof(
    fc.constantFrom('', 'ü-id', 'x'.repeat(70)),
    fc.integer({ min: 0, max: 11 }).map((i) => `id-${i}`),
  ),
  owner: fc.constantFrom('0xaa', '0xAA', '0xbb'),
  creator: fc.option(fc.constantFrom('0xaa', '0xAA', '0xcc'), { nil: undefined }),
  expiresAt: fc.oneof(fc.bigInt({ min: 0n, max: 1n << 64n }), fc.constantFrom(-1n, 1n << 80n)),
  document: fc.constantFrom('', 'cats and dogs', 'dogs'),
  // A string under `x` is left out: a snapshot reads any string of an f32 attribute as the ±Infinity it
  // writes for one (x is declared f32 by the definition update).
  attributes: fc.array(
    fc.tuple(attrName, attrValue).filter(([k, v]) => k !== 'x' || typeof v !== 'string'),
    { maxLength: 5 },
  ),
  vector: fc.array(fc.integer({ min: -8, max: 8 }), { minLength: DIM, maxLength: DIM }),
});
const opArb = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.array(recordArb, { minLength: 1, maxLength: 4 }).map((recs) => ({ t: 'upsert' as const, recs })),
  },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 11 }).map((i) => ({ t: 'remove' as const, i })) },
  { weight: 1, arbitrary: fc.constant({ t: 'snapshot' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'widen' as const }) },
);

type Gen = typeof recordArb extends fc.Arbitrary<infer T> ? T : never;

function recordOf(g: Gen): VectorRecord {
  const attrs: Record<string, AttributeValue> = Object.create(null);
  for (const [k, v] of g.attributes) attrs[k] = v;
  const base = keyOf(g.slot * 7 + 0xabc);
  const key =
    g.keyForm === 'lower' ? base : g.keyForm === 'upper' ? `0x${base.slice(2).toUpperCase()}` : `key-${g.slot}`;
  const rec = makeRecord(
    g.slot,
    g.vector.map((v) => v / 4 + 0.01 * g.slot + 0.5),
    attrs,
    {
      key,
      id: g.id,
      owner: g.owner,
      document: g.document,
    },
  );
  rec.creator = g.creator;
  rec.expiresAt = g.expiresAt;
  return rec;
}

describe('records kept in columns answer as the records given', () => {
  test('get, records and search hits across replacements, deletes, slot reuse, definition updates and snapshots', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-columns-prop-'));
    let round = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 10 }), async (ops) => {
          let def = DEF;
          let store = new CollectionStore('prop', def);
          // The model: the live records by id, each replacing any with the same id or key (any case).
          const model = new Map<string, VectorRecord>();
          try {
            for (const op of ops) {
              if (op.t === 'upsert') {
                const recs = op.recs.map(recordOf);
                await store.apply({ remove: [], upsert: recs });
                const last = new Map<string, VectorRecord>();
                const idOfKey = new Map<string, string>();
                for (const r of recs) {
                  const prev = idOfKey.get(r.key.toLowerCase());
                  if (prev !== undefined && prev !== r.id) last.delete(prev);
                  last.delete(r.id);
                  last.set(r.id, r);
                  idOfKey.set(r.key.toLowerCase(), r.id);
                }
                for (const r of last.values())
                  for (const [id, m] of model)
                    if (id === r.id || m.key.toLowerCase() === r.key.toLowerCase()) model.delete(id);
                for (const r of last.values()) model.set(r.id, r);
              } else if (op.t === 'remove') {
                const victim = [...model.values()][op.i % Math.max(1, model.size)];
                if (victim === undefined) continue;
                await store.apply({ remove: [victim.key], upsert: [] });
                model.delete(victim.id);
              } else if (op.t === 'widen') {
                def = WIDER;
                store.updateDefinition(def);
              } else {
                const snap = join(dir, `s${round++}`);
                await store.save(snap);
                await store.close();
                store = await CollectionStore.load(snap, 'prop', def);
              }
              assert.equal(store.size, model.size);
              const listed = new Map([...store.records()].map((r) => [r.id, r]));
              assert.equal(listed.size, model.size);
              for (const [id, want] of model) {
                assertSameRecord(listed.get(id), want);
                if (!ENTITY_KEY_FORM_REGEX.test(id)) assertSameRecord(store.get(id), want);
                if (ENTITY_KEY_FORM_REGEX.test(want.key)) assertSameRecord(store.get(want.key), want);
                const hits = store.search({ vector: want.vector, k: Math.min(3, model.size) }).results;
                for (const h of hits) assert.deepEqual(h.record, summaryOf(model.get(h.record.id)!));
              }
              assert.deepEqual(
                store
                  .select({})
                  .map((r) => r.id)
                  .sort(),
                [...model.keys()].sort(),
              );
            }
          } finally {
            await store.close();
          }
        }),
        { numRuns: 60 },
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('what a store keeps per record', () => {
  test('no object, key string or id string per record', async () => {
    // Heap snapshots before and after (exact: live objects only), after a first store made what every
    // store shares once (code, lazily made tables).
    // Enough records that what a store makes once (a few hundred small objects) stays far below one each.
    const N = 6000;
    const def = { ...definition(8), attributes: { bucket: 'i32', cluster: 'i32' } } as const;
    const warm = new CollectionStore('warm', def);
    await warm.apply({ remove: [], upsert: [makeRecord(0, [1, 2, 3, 4, 5, 6, 7, 8], { bucket: 1, cluster: 2 })] });
    warm.search({ vector: [1, 2, 3, 4, 5, 6, 7, 8], k: 1 });
    const before = heapByGroup(await heapNodes());
    const store = await filledStore(def, N);
    const after = heapByGroup(await heapNodes());
    const perRecord = (group: string) => ((after.get(group)?.count ?? 0) - (before.get(group)?.count ?? 0)) / N;
    assert.ok(perRecord('object Object') < 0.1, `${perRecord('object Object')} plain objects a record`);
    assert.ok(perRecord('string key') < 0.05, `${perRecord('string key')} key strings a record`);
    assert.ok(perRecord('string digits') < 0.05, `${perRecord('string digits')} id strings a record`);
    assert.equal(store.get('1234')?.key, keyOf(1234));
    await Promise.all([store.close(), warm.close()]);
  });
});

/**
 * A store of `n` records in blocks of 500 with decimal ids. Built in a function of its own: a suspended
 * async function keeps its last block in a register, which the heap snapshot would count.
 */
async function filledStore(def: CollectionDefinition, n: number): Promise<CollectionStore> {
  const store = new CollectionStore('mem', def);
  for (let i = 0; i < n; i += 500) {
    const block = Array.from({ length: 500 }, (_, j) =>
      makeRecord(
        i + j,
        [Math.sin(i + j), 1, 2, 3, 4, 5, 6, 7],
        { bucket: (i + j) % 100, cluster: j % 4 },
        { id: String(i + j) },
      ),
    );
    await store.apply({ remove: [], upsert: block });
  }
  return store;
}
