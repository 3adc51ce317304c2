// The graph's one label ↔ element map (native/src/labelMirror.h), which hnswlib's code, the exact scan of
// an allowed set and the filtered walk all read (no label inside the elements any more): after any
// sequence of adds, updates, deletes, re-adds of deleted labels, reuse of deleted elements, resizes and
// snapshot round trips, both answer exactly what a model of the live labels says (the scan: the k nearest
// live candidates with their own vectors' distances; the walk: only allowed live labels, none missing).
// Labels far above the element count move the label → element map to a hash map, so those runs cover that
// path too.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { floatToHalfBits, HALF_TO_FLOAT32 } from '../../../src/collections/index.ts';
import { type HalfIndex, nativeAddon } from '../../../src/engine/hnsw/nativeAddon.ts';
import { mulberry32 } from '../helpers.ts';

const DIM = 8;
const K = 10;
/** Above the map's dense limit (max(2^20, 4 × elements)): such labels move it to a hash map. */
const SPARSE_BASE = 1_100_000;
const PARAMS = { metric: 'l2', dim: DIM, m: 8, efConstruction: 32, seed: 5 } as const;

type Op =
  | { t: 'add'; sparse: boolean; reuse: boolean }
  | { t: 'update' | 'delete' | 'readd'; pick: number }
  | { t: 'resize' }
  | { t: 'reload' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      t: fc.constant('add' as const),
      sparse: fc.integer({ min: 0, max: 9 }).map((x) => x === 0),
      reuse: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('update' as const), pick: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('delete' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('readd' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('resize' as const) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('reload' as const) }) },
);

function halves(v: Float32Array): Float32Array {
  return Float32Array.from(v, (x) => HALF_TO_FLOAT32[floatToHalfBits(x, { overflow: 'clamp' })]!);
}

function l2(q: Float32Array, x: Float32Array): number {
  let s = 0;
  for (let i = 0; i < DIM; i++) s += (q[i]! - x[i]!) ** 2;
  return s;
}

test('the label mirror stays right across adds, updates, deletes, reuse, resizes and snapshot loads (property)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-mirror-'));
  const { HalfIndex } = nativeAddon();
  const labels = new Uint32Array(64);
  const distances = new Float32Array(64);
  const stats = new Int32Array(3);
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 0, max: 1e6 }),
        async (ops, seed) => {
          const rand = mulberry32(seed);
          const vector = () => Float32Array.from({ length: DIM }, () => rand() * 2 - 1);
          let index: HalfIndex = new HalfIndex({ ...PARAMS, maxElements: 16 });
          const live = new Map<number, Float32Array>(); // label → stored values
          const deleted = new Set<number>();
          let nextLabel = 0;
          let nextSparse = SPARSE_BASE;
          const path = join(dir, `g-${seed}.bin`);
          const room = () => {
            const info = index.info();
            if (info.count >= info.capacity) index.resize(info.capacity * 2);
          };
          for (const op of ops) {
            if (op.t === 'add') {
              const label = op.sparse ? nextSparse++ : nextLabel++;
              const v = vector();
              const reuses = op.reuse && index.info().deleted > 0;
              if (!reuses) room();
              index.addPoint(v, label, op.reuse);
              live.set(label, halves(v));
            } else if (op.t === 'update' && live.size > 0) {
              const label = [...live.keys()][op.pick % live.size]!;
              const v = vector();
              index.addPoint(v, label);
              live.set(label, halves(v));
            } else if (op.t === 'delete' && live.size > 0) {
              const label = [...live.keys()][op.pick % live.size]!;
              index.markDelete(label);
              live.delete(label);
              deleted.add(label);
            } else if (op.t === 'readd' && deleted.size > 0) {
              const label = [...deleted][op.pick % deleted.size]!;
              // Still in the graph unless its element was reused by another label.
              const v = vector();
              room();
              index.addPoint(v, label);
              live.set(label, halves(v));
              deleted.delete(label);
            } else if (op.t === 'resize') {
              const info = index.info();
              index.resize(info.capacity + 7);
            } else if (op.t === 'reload') {
              index.save(path);
              index = new HalfIndex({ ...PARAMS, maxElements: 16, path });
            }
          }
          const q = vector();
          // Candidates: live labels, deleted ones, labels never added, and repeats.
          const everLabels = [...live.keys(), ...deleted, nextLabel + 3, SPARSE_BASE - 1];
          const candidates = Uint32Array.from(
            everLabels.filter(() => rand() < 0.7).flatMap((l) => (rand() < 0.2 ? [l, l] : [l])),
          );
          const eligible = (set: Iterable<number>) =>
            [...new Set(set)]
              .filter((l) => live.has(l))
              .map((l) => ({ l, d: l2(q, live.get(l)!) }))
              .sort((a, b) => a.d - b.d || a.l - b.l);
          const check = (what: string, want: { l: number; d: number }[]) => {
            const n = stats[0]!;
            assert.equal(n, Math.min(K, want.length), `${what}: count`);
            for (let i = 0; i < n; i++) {
              const label = labels[i]!;
              assert.ok(live.has(label), `${what}: label ${label} is not live`);
              // The distance is the one of the label's own vector: a mirror pointing at another element fails here.
              assert.ok(Math.abs(distances[i]! - l2(q, live.get(label)!)) < 1e-4, `${what}: distance of ${label}`);
              assert.ok(Math.abs(distances[i]! - want[i]!.d) < 1e-4, `${what}: rank ${i}`);
            }
          };
          index.exactSearch(q, { k: K, labels, distances, stats, candidates });
          check('exact scan of candidates', eligible(candidates));
          index.exactSearch(q, { k: K, labels, distances, stats });
          check('exact scan of all', eligible(live.keys()));
          // The walk over an allowed set of at most 100 live labels (slots: their rank among the labels).
          const all = [...live.keys(), ...deleted].sort((a, b) => a - b);
          const labelSlot = new Int32Array(all.length === 0 ? 1 : all[all.length - 1]! + 1).fill(-1);
          all.forEach((l, s) => {
            labelSlot[l] = s;
          });
          const bits = new Uint8Array((all.length + 8) >>> 3);
          const allowed = all.filter(() => rand() < 0.5).slice(0, 100);
          for (const l of allowed) bits[labelSlot[l]! >>> 3]! |= 1 << (labelSlot[l]! & 7);
          index.filteredSearch(q, {
            k: K,
            ef: 200,
            labels,
            distances,
            stats,
            labelSlot,
            allowed: bits,
            passing: allowed.length,
          });
          const n = stats[0]!;
          const allowedLive = allowed.filter((l) => live.has(l));
          assert.equal(n, Math.min(K, allowedLive.length), 'walk: count');
          for (let i = 0; i < n; i++) {
            const label = labels[i]!;
            assert.ok(allowedLive.includes(label), `walk: label ${label} not allowed and live`);
            assert.ok(Math.abs(distances[i]! - l2(q, live.get(label)!)) < 1e-4, `walk: distance of ${label}`);
          }
        },
      ),
      { numRuns: 60 },
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a level 0 of 16 MiB or more (advised onto huge pages) keeps its answers across a resize and a load', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-huge-'));
  const { HalfIndex } = nativeAddon();
  const dim = 384;
  const params = { metric: 'cosine', dim, m: 16, efConstruction: 32, seed: 3 } as const;
  const rand = mulberry32(11);
  const vector = () => Float32Array.from({ length: dim }, () => rand() * 2 - 1);
  // 24,000 × 912 B: above the 16 MiB limit, so construct, resize and load each take the advice path.
  const index = new HalfIndex({ ...params, maxElements: 24_000 });
  const answer = (ix: HalfIndex, q: Float32Array, candidates?: Uint32Array) => {
    const labels = new Uint32Array(10);
    const distances = new Float32Array(10);
    const stats = new Int32Array(3);
    ix.exactSearch(q, { k: 10, labels, distances, stats, candidates });
    return [...labels.subarray(0, stats[0]!)];
  };
  try {
    for (let i = 0; i < 300; i++) index.addPoint(vector(), i);
    index.resize(48_000);
    for (let i = 300; i < 600; i++) index.addPoint(vector(), i);
    for (let i = 0; i < 600; i += 7) index.markDelete(i);
    const path = join(dir, 'g.bin');
    index.save(path);
    const back = new HalfIndex({ ...params, maxElements: 48_000, path });
    const evens = Uint32Array.from({ length: 300 }, (_, i) => 2 * i);
    for (let t = 0; t < 5; t++) {
      const q = vector();
      const want = answer(index, q);
      assert.equal(want.length, 10);
      assert.ok(want.every((l) => l % 7 !== 0));
      assert.deepEqual(answer(back, q), want);
      assert.deepEqual(answer(back, q, evens), answer(index, q, evens));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
