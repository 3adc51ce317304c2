// The native engine fuzzed through its public JavaScript API (HalfGraph and the addon's HalfIndex), so the
// tests hold whatever changes inside native/src/addon.cc: random operation sequences against a JavaScript
// model (no deleted label ever answers, the exact scan is the model's), hostile numbers for every size
// and count, empty sets, and snapshots damaged field by field (the header and the link-list sizes that
// random byte flips rarely hit). A crash would take the test process down: every case must be an Error
// or a working index. (The API is synchronous on one thread, so there is no read during a swap to race.)
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { floatToHalfBits, HALF_TO_FLOAT32 } from '../../../src/collections/index.ts';
import { HalfGraph } from '../../../src/engine/hnsw/halfGraph.ts';
import { nativeAddon } from '../../../src/engine/hnsw/nativeAddon.ts';
import { METRIC_OPS } from '../../../src/engine/metrics.ts';

const PARAMS = { m: 8, efConstruction: 32 };
const DIM = 6;
const half = (v: Float32Array) =>
  Float32Array.from(v, (x) => HALF_TO_FLOAT32[floatToHalfBits(x, { overflow: 'clamp' })]!);
const vector = fc
  .array(fc.float({ min: -4, max: 4, noNaN: true, noDefaultInfinity: true }), { minLength: DIM, maxLength: DIM })
  .map((a) => Float32Array.from(a));

type Step =
  | { t: 'add'; v: Float32Array }
  | { t: 'remove'; pick: number }
  | { t: 'search'; q: Float32Array; k: number }
  | { t: 'roundTrip' };
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: vector.map((v) => ({ t: 'add' as const, v })) },
  { weight: 3, arbitrary: fc.nat().map((pick) => ({ t: 'remove' as const, pick })) },
  {
    weight: 2,
    arbitrary: fc
      .record({ q: vector, k: fc.integer({ min: 1, max: 40 }) })
      .map((r) => ({ t: 'search' as const, ...r })),
  },
  { weight: 1, arbitrary: fc.constant({ t: 'roundTrip' as const }) },
);

describe('native engine fuzz (public API)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arkivector-native-fuzz-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('random adds, removes, slot reuse and snapshot round trips: answers match a JavaScript model', async () => {
    const ops = METRIC_OPS.l2;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 60 }), async (steps) => {
        let g = HalfGraph.create(ops, DIM, PARAMS, 4);
        const live = new Map<number, Float32Array>();
        let next = 0;
        const check = (q: Float32Array, k: number) => {
          const want = [...live]
            .map(([label, v]) => ({ label, distance: ops.distance(q, v) }))
            .sort((a, b) => a.distance - b.distance || a.label - b.label)
            .slice(0, k);
          const exact = g.exact(q, k);
          assert.equal(exact.labels.length, want.length);
          exact.labels.forEach((label, i) => {
            const model = live.get(label);
            assert.ok(model, `exact answered label ${label}, which is not live`);
            const d = ops.distance(q, model);
            assert.ok(Math.abs((exact.distances[i] as number) - d) <= 1e-3 * (1 + d), `distance of ${label}`);
            // The k-th answer is as near as the model's k-th (ties may pick other labels).
            assert.ok((exact.distances[i] as number) <= (want[i]?.distance ?? 0) + 1e-3 * (1 + d));
          });
          const approx = g.search(q, k, 64);
          assert.ok(approx.labels.length <= Math.min(k, live.size));
          assert.equal(new Set(approx.labels).size, approx.labels.length, 'a label answered twice');
          for (const label of approx.labels) assert.ok(live.has(label), `search answered label ${label}, not live`);
          for (let i = 1; i < approx.distances.length; i++)
            assert.ok((approx.distances[i - 1] as number) <= (approx.distances[i] as number));
        };
        for (const s of steps) {
          if (s.t === 'add') {
            g.reserve(1);
            g.add(s.v, next);
            live.set(next++, half(s.v));
          } else if (s.t === 'remove' && live.size > 0) {
            const label = [...live.keys()][s.pick % live.size] as number;
            g.remove(label);
            live.delete(label);
          } else if (s.t === 'search') check(s.q, s.k);
          else if (s.t === 'roundTrip') {
            const path = join(dir, 'round.bin');
            await g.write(path);
            const deleted = g.deleted;
            g = await HalfGraph.read(ops, DIM, PARAMS, path);
            g.deleted = deleted;
          }
        }
        check(new Float32Array(DIM), 50);
      }),
      { numRuns: 60 },
    );
  });

  test('empty sets: an empty index, an index with every element deleted, empty candidates', () => {
    const g = HalfGraph.create(METRIC_OPS.cosine, DIM, PARAMS, 4);
    const q = new Float32Array([1, 0, 0, 0, 0, 0]);
    assert.deepEqual(g.search(q, 10, 10).labels, []);
    assert.deepEqual(g.exact(q, 10).labels, []);
    for (let i = 0; i < 3; i++) g.add(new Float32Array([1, i, 0, 0, 0, 0]), i);
    assert.deepEqual(g.exact(q, 10, new Uint32Array(0)).labels, []);
    assert.deepEqual(g.exact(q, 10, new Uint32Array([7, 8, 4294967295])).labels, []);
    for (let i = 0; i < 3; i++) g.remove(i);
    assert.deepEqual(g.search(q, 10, 10).labels, []);
    assert.deepEqual(g.exact(q, 10).labels, []);
  });

  test('hostile numbers for dim, sizes, k, ef and labels are Errors, never a crash', () => {
    const { HalfIndex } = nativeAddon();
    const hostile = fc.oneof(
      fc.double(),
      fc.constantFrom(
        0,
        -0,
        -1,
        0.5,
        2 ** 31,
        2 ** 32,
        2 ** 53,
        2 ** 64,
        Number.MAX_VALUE,
        Number.NaN,
        Number.POSITIVE_INFINITY,
      ),
      fc.integer({ min: -5, max: 70_000 }),
    );
    const ix = new HalfIndex({ metric: 'l2', dim: 3, maxElements: 8, m: 4, efConstruction: 8, seed: 1 });
    ix.addPoint(new Float32Array([1, 2, 3]), 0);
    const tryIt = (call: () => unknown) => {
      try {
        call();
      } catch (error) {
        assert.ok(error instanceof Error);
        assert.equal((error as Error & { code?: string }).code, 'ERR_ARKIVECTOR_NATIVE', (error as Error).message);
      }
    };
    fc.assert(
      fc.property(hostile, hostile, hostile, (a, b, c) => {
        tryIt(
          () =>
            new HalfIndex({
              metric: 'cosine',
              dim: a,
              maxElements: Math.min(Math.abs(b), 64) || b,
              m: 4,
              efConstruction: 8,
              seed: 1,
            }),
        );
        tryIt(() => new HalfIndex({ metric: 'ip', dim: 2, maxElements: 4, m: a, efConstruction: b, seed: c }));
        const out = { labels: new Uint32Array(16), distances: new Float32Array(16), stats: new Int32Array(2) };
        tryIt(() =>
          ix.search(new Float32Array([a, b, c].map((x) => (Number.isFinite(x) ? x % 100 : x))), {
            k: Math.trunc(a) % 20 || a,
            ef: b,
            ...out,
          }),
        );
        tryIt(() => ix.exactSearch(new Float32Array([0, 0, 0]), { k: a, ...out }));
        tryIt(() => ix.getHalves(a, new Uint16Array(3)));
        // Label 0 stays: the index must still answer it at the end.
        if (b !== 0) tryIt(() => ix.markDelete(b));
      }),
      { numRuns: 300 },
    );
    // Still answering.
    const out = { labels: new Uint32Array(4), distances: new Float32Array(4), stats: new Int32Array(2) };
    ix.exactSearch(new Float32Array([1, 2, 3]), { k: 4, ...out });
    assert.equal(out.stats[0], 1);
    assert.equal(out.labels[0], 0);
  });

  test('snapshots damaged field by field (header words, link-list sizes) are refused or still answer', async () => {
    const ops = METRIC_OPS.cosine;
    const g = HalfGraph.create(ops, DIM, PARAMS, 64);
    for (let i = 0; i < 64; i++)
      g.add(
        Float32Array.from({ length: DIM }, (_, d) => Math.sin(i * 7 + d)),
        i,
      );
    const path = join(dir, 'good.bin');
    await g.write(path);
    const good = await readFile(path);
    // hnswlib's header: six size_t, maxlevel and the entry point (4 bytes each), five more 8-byte fields.
    const fields = [0, 8, 16, 24, 32, 40, 48, 52, 56, 64, 72, 80, 88].map((at, i) => ({
      at,
      bytes: i === 6 || i === 7 ? 4 : 8,
    }));
    const count = Number(good.readBigUInt64LE(16));
    const sizePer = Number(good.readBigUInt64LE(24));
    const linkSizesAt = 96 + count * sizePer; // the first element's level-1+ list size
    const hostileValue = fc.constantFrom(
      0n,
      1n,
      2n,
      63n,
      64n,
      65n,
      2n ** 31n,
      2n ** 32n - 1n,
      2n ** 63n,
      2n ** 64n - 1n,
    );
    const where = fc.oneof(
      fc.constantFrom(...fields),
      fc.constant({ at: linkSizesAt, bytes: 4 }),
      fc.nat(count - 1).map((i) => ({ at: 96 + i * sizePer, bytes: 4 })), // a level-0 list's count word
    );
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(where, hostileValue), { minLength: 1, maxLength: 3 }), async (changes) => {
        const bad = Buffer.from(good);
        for (const [{ at, bytes }, value] of changes) {
          if (bytes === 8) bad.writeBigUInt64LE(value & (2n ** 64n - 1n), at);
          else bad.writeUInt32LE(Number(value & 0xffffffffn), at);
        }
        const file = join(dir, 'bad.bin');
        await writeFile(file, bad);
        let back: HalfGraph;
        try {
          back = await HalfGraph.read(ops, DIM, PARAMS, file);
        } catch (error) {
          assert.ok(error instanceof Error);
          refused++;
          return;
        }
        const q = new Float32Array([1, 0, 1, 0, 1, 0]);
        for (const label of back.search(q, 10, 32).labels) assert.ok(label < 64, `label ${label} came from nowhere`);
        back.exact(q, 10);
        back.reserve(1);
        back.add(q, 99);
      }),
      { numRuns: 200 },
    );
    assert.ok(refused > 0);
  });

  test('adding a label that is live with replaceDeleted leaves no ghost of its old vector', () => {
    const { HalfIndex } = nativeAddon();
    const ix = new HalfIndex({ metric: 'l2', dim: 2, maxElements: 8, m: 8, efConstruction: 16, seed: 1 });
    ix.addPoint(new Float32Array([0, 0]), 1);
    ix.addPoint(new Float32Array([5, 5]), 2);
    ix.markDelete(2);
    ix.addPoint(new Float32Array([9, 9]), 1, true);
    ix.markDelete(1);
    const out = { labels: new Uint32Array(4), distances: new Float32Array(4), stats: new Int32Array(2) };
    ix.exactSearch(new Float32Array([0, 0]), { k: 4, ...out });
    assert.equal(out.stats[0], 0, `label ${out.labels[0]} still answers after its delete`);
  });
});
