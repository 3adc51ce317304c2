// The native engine's addon (native/src/addon.cc) through its graph wrapper (src/engine/hnsw/halfGraph.ts):
// recall against exact answers on the benchmark generator's data, filtered searches that return only
// allowed labels and never fewer than min(k, allowed), the exact scan against a JavaScript reference over
// the same binary16 values, the portable kernel against the SIMD one, snapshots, and hostile inputs
// (wrong dims, NaN, bad labels, bad buffers, damaged files): each an Error, never a crash.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import hnswlib from 'hnswlib-node';
import { floatToHalfBits, HALF_TO_FLOAT32 } from '../../../src/collections/index.ts';
import { HalfGraph } from '../../../src/engine/hnsw/halfGraph.ts';
import { NATIVE_KERNELS, nativeAddon } from '../../../src/engine/hnsw/nativeAddon.ts';
import { METRIC_OPS, type MetricOps } from '../../../src/engine/metrics.ts';
import { clustered, mulberry32 } from '../helpers.ts';

const PARAMS = { m: 16, efConstruction: 64 };
const DIM = 48;
const N = 2000;
const data = clustered(N, DIM, 1, { latent: 16 }).vectors;
const queries = clustered(40, DIM, 2, { latent: 16 }).vectors;

/** The values a vector has once stored as binary16. */
function halves(v: Float32Array): Float32Array {
  return Float32Array.from(v, (x) => HALF_TO_FLOAT32[floatToHalfBits(x, { overflow: 'clamp' })]!);
}
const stored = data.map(halves);

/** JS reference: exact top-k by pgvector distance (float64 over the float32 query and the stored halves). */
function reference(ops: MetricOps, q: Float32Array, k: number, allowed?: (label: number) => boolean) {
  const all: { label: number; distance: number }[] = [];
  for (let i = 0; i < stored.length; i++)
    if (allowed === undefined || allowed(i)) all.push({ label: i, distance: ops.distance(q, stored[i]!) });
  all.sort((a, b) => a.distance - b.distance || a.label - b.label);
  return all.slice(0, k);
}

function build(ops: MetricOps, kernel?: (typeof NATIVE_KERNELS)[number]): HalfGraph {
  const g = HalfGraph.create(ops, DIM, PARAMS, N, kernel);
  for (let i = 0; i < N; i++) g.add(data[i]!, i);
  return g;
}

const cosine = build(METRIC_OPS.cosine);
const identity = Int32Array.from({ length: N }, (_, i) => i);

describe('native addon', () => {
  test('the kernel is reported: the best this CPU runs, or a lower one when asked', () => {
    const cpu = nativeAddon().cpu();
    assert.ok(NATIVE_KERNELS.includes(cpu.detected));
    assert.equal(cosine.kernel, cpu.default);
    assert.equal(HalfGraph.create(METRIC_OPS.l2, 8, PARAMS, 16, 'portable').kernel, 'portable');
    // Asking for more than the CPU runs gives what it runs, never an illegal instruction.
    assert.equal(HalfGraph.create(METRIC_OPS.l2, 8, PARAMS, 16, 'avx512').kernel, cpu.detected);
    // ARKIVECTOR_SIMD lowers the default for the whole process.
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        "import('./src/engine/hnsw/nativeAddon.ts').then((m) => process.stdout.write(JSON.stringify(m.nativeAddon().cpu())))",
      ],
      { env: { ...process.env, ARKIVECTOR_SIMD: 'portable' }, encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), { detected: cpu.detected, default: 'portable' });
  });

  for (const metric of ['cosine', 'l2', 'ip'] as const) {
    test(`${metric}: recall@10 against exact answers ≥ 0.95 at ef 100, distances are pgvector's`, () => {
      const ops = METRIC_OPS[metric];
      const g = metric === 'cosine' ? cosine : build(ops);
      let found = 0;
      for (const q of queries) {
        const exact = reference(ops, q, 10);
        const hits = g.search(q, 10, 100);
        assert.equal(hits.labels.length, 10);
        const want = new Set(exact.map((e) => e.label));
        for (let i = 0; i < hits.labels.length; i++) {
          if (want.has(hits.labels[i]!)) found++;
          const d = ops.distance(q, stored[hits.labels[i]!]!);
          assert.ok(Math.abs(hits.distances[i]! - d) < 1e-4, `${hits.distances[i]} vs ${d}`);
          if (i > 0) assert.ok(hits.distances[i - 1]! <= hits.distances[i]!);
        }
      }
      const recall = found / (queries.length * 10);
      assert.ok(recall >= 0.95, `recall ${recall}`);
    });

    test(`${metric}: the exact scan equals a JavaScript reference over the binary16 values, whole and over subsets sparse and dense`, () => {
      const ops = METRIC_OPS[metric];
      const g = metric === 'cosine' ? cosine : build(ops);
      const labelsWhere = (allowed: (l: number) => boolean) =>
        Uint32Array.from({ length: N }, (_, l) => l).filter(allowed);
      // Sparse: read label by label. Dense (over 35 % of the ids between their first and last, the addon's
      // SPAN_SCAN_MIN_PERCENT): read over that span, the rest of it computed and dropped; one such run sits
      // inside the labels, so a span that starts at 0 or runs to the end would answer for labels not asked.
      const sets = [
        (l: number) => l % 7 === 0,
        (l: number) => l % 7 !== 0,
        (l: number) => l >= 600 && l < 1400 && l % 3 !== 0,
      ];
      for (const q of queries.slice(0, 10)) {
        for (const [candidates, allowed] of [
          [undefined, undefined],
          ...sets.map((allowed) => [labelsWhere(allowed), allowed] as const),
        ] as const) {
          const want = reference(ops, q, 10, allowed);
          const got = g.exact(q, 10, candidates);
          assert.equal(got.labels.length, 10);
          for (let i = 0; i < 10; i++) {
            assert.ok(
              Math.abs(got.distances[i]! - want[i]!.distance) < 1e-4,
              `${got.distances[i]} vs ${want[i]!.distance}`,
            );
            // Same labels except where two distances tie within float32 rounding.
            if (got.labels[i] !== want[i]!.label)
              assert.ok(Math.abs(ops.distance(q, stored[got.labels[i]!]!) - want[i]!.distance) < 1e-5);
          }
        }
      }
    });
  }

  test('the portable kernel gives the SIMD kernel’s answers', () => {
    const portable = build(METRIC_OPS.cosine, 'portable');
    assert.equal(portable.kernel, 'portable');
    let same = 0;
    for (const q of queries) {
      const a = cosine.search(q, 10, 100);
      const b = portable.search(q, 10, 100);
      const ea = cosine.exact(q, 10);
      const eb = portable.exact(q, 10);
      assert.deepEqual(eb.labels, ea.labels);
      for (let i = 0; i < 10; i++) {
        assert.ok(Math.abs(ea.distances[i]! - eb.distances[i]!) < 1e-5);
        assert.ok(Math.abs(a.distances[i]! - b.distances[i]!) < 1e-3);
      }
      // Summation order differs, so a graph built with one kernel may differ in a few links.
      same += a.labels.filter((l) => b.labels.includes(l)).length;
    }
    assert.ok(same >= queries.length * 10 * 0.98, `${same} of ${queries.length * 10} labels shared`);
  });

  test('filtered search: only allowed, visible labels, never fewer than min(k, allowed) (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.oneof(
          fc.double({ min: 0, max: 1, noNaN: true }).map((share) => ({ share, cluster: -1 })),
          fc.integer({ min: 0, max: 15 }).map((cluster) => ({ share: 1, cluster })),
        ),
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 0, max: queries.length - 1 }),
        (k, set, seed, qi) => {
          const rand = mulberry32(seed);
          const cluster = clustered(N, DIM, 1, { latent: 16 }).cluster;
          const ok = (l: number) => (set.cluster < 0 ? rand() < set.share : cluster[l] === set.cluster);
          const labelSlot = identity.slice();
          const bits = new Uint8Array(Math.ceil(N / 8));
          let allowedCount = 0;
          let passing = 0;
          const allowed = new Set<number>();
          for (let l = 0; l < N; l++) {
            // A few labels invisible (a staged block), whatever the set says.
            if (l % 97 === 0) labelSlot[l] = -1;
            if (ok(l)) {
              passing++;
              bits[l >>> 3]! |= 1 << (l & 7);
              if (labelSlot[l]! >= 0) {
                allowed.add(l);
                allowedCount++;
              }
            }
          }
          const hits = cosine.search(queries[qi]!, k, Math.max(k, 40), {
            labelSlot,
            // The set's size, as the planner passes it: the walk samples its entry points by it (with no
            // size it assumes every element passes, and may miss all of a set of one or two).
            allowed: { bits: () => bits, count: passing },
          });
          assert.equal(hits.labels.length, Math.min(k, allowedCount));
          for (const l of hits.labels) assert.ok(allowed.has(l), `label ${l} not allowed`);
          assert.ok(hits.checks > 0 || allowedCount === 0 || hits.labels.length > 0);
        },
      ),
      { numRuns: 60 },
    );
  });

  test('an empty allowed set, short maps and short bitsets answer nothing outside them', () => {
    const q = queries[0]!;
    const none = cosine.search(q, 10, 50, {
      labelSlot: identity,
      allowed: { bits: () => new Uint8Array(N / 8) },
    });
    assert.deepEqual(none.labels, []);
    const short = cosine.search(q, 10, 50, { labelSlot: identity.subarray(0, 100) });
    assert.ok(short.labels.every((l) => l < 100));
    const bits = new Uint8Array(2).fill(0xff); // slots 0 … 15 only
    const few = cosine.search(q, 30, 50, { labelSlot: identity, allowed: { bits: () => bits } });
    assert.equal(few.labels.length, 16);
    assert.ok(few.labels.every((l) => l < 16));
  });

  test('deletes, slot reuse, resize and a snapshot round trip keep the answers', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-native-'));
    try {
      const g = HalfGraph.create(METRIC_OPS.l2, DIM, PARAMS, 16);
      for (let i = 0; i < 500; i++) {
        g.reserve(1);
        g.add(data[i]!, i);
      }
      assert.ok(g.capacity >= 500);
      for (let i = 0; i < 500; i += 2) g.remove(i);
      assert.equal(g.deleted, 250);
      for (let i = 0; i < 100; i++) g.add(data[500 + i]!, 500 + i); // reuses deleted slots
      assert.equal(g.elementCount, 500);
      assert.equal(g.deleted, 150);
      const q = queries[3]!;
      const before = g.search(q, 10, 100);
      assert.ok(before.labels.every((l) => l % 2 === 1 || l >= 500));
      const path = join(dir, 'hnsw.bin');
      await g.write(path);
      const back = await HalfGraph.read(METRIC_OPS.l2, DIM, PARAMS, path);
      back.deleted = g.deleted;
      assert.deepEqual(back.search(q, 10, 100), before);
      assert.deepEqual(back.exact(q, 10), g.exact(q, 10));
      assert.deepEqual(back.halves(501), g.halves(501));
      // A file of another dim, metric's m, or of the other engine is refused.
      await assert.rejects(HalfGraph.read(METRIC_OPS.l2, DIM + 1, PARAMS, path), /does not match/);
      await assert.rejects(HalfGraph.read(METRIC_OPS.l2, DIM, { m: 8, efConstruction: 64 }, path), /does not match/);
      const other = new hnswlib.HierarchicalNSW('l2', DIM);
      other.initIndex(16, PARAMS.m, PARAMS.efConstruction, 100);
      other.addPoint(Array.from(data[0]!), 0);
      await other.writeIndex(join(dir, 'float.bin'));
      await assert.rejects(
        HalfGraph.read(METRIC_OPS.l2, DIM, PARAMS, join(dir, 'float.bin')),
        /does not match|damaged/,
      );
      await assert.rejects(HalfGraph.read(METRIC_OPS.l2, DIM, PARAMS, join(dir, 'missing.bin')), /cannot open/);
      // A label beyond uint32 (the top byte of element 0's label: 96-byte header, 132 bytes of links and
      // 4 + 2·dim of vector before it) once crashed a search that mapped answers back by label.
      const file = await readFile(path);
      file[96 + 132 + 4 + 2 * DIM + 7] = 1;
      await writeFile(join(dir, 'label.bin'), file);
      await assert.rejects(HalfGraph.read(METRIC_OPS.l2, DIM, PARAMS, join(dir, 'label.bin')), /damaged \(labels\)/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a damaged snapshot is refused or loads into a graph that still answers (random byte changes)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-native-'));
    try {
      const g = HalfGraph.create(METRIC_OPS.cosine, 8, PARAMS, 300);
      for (let i = 0; i < 300; i++) g.add(data[i]!.subarray(0, 8), i);
      const path = join(dir, 'hnsw.bin');
      await g.write(path);
      const good = await readFile(path);
      let refused = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
          fc.boolean(),
          async (changes, truncate) => {
            const bad = Buffer.from(good);
            for (const [at, byte] of changes) bad[at] = byte;
            const file = join(dir, 'bad.bin');
            await writeFile(file, truncate ? bad.subarray(0, changes[0]![0]) : bad);
            let back: HalfGraph;
            try {
              back = await HalfGraph.read(METRIC_OPS.cosine, 8, PARAMS, file);
            } catch (error) {
              assert.ok(error instanceof Error);
              refused++;
              return;
            }
            back.search(queries[0]!.subarray(0, 8), 10, 50);
            back.exact(queries[0]!.subarray(0, 8), 10);
          },
        ),
        { numRuns: 300 },
      );
      assert.ok(refused > 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('hostile arguments are errors, never a crash', () => {
    const { HalfIndex } = nativeAddon();
    const ix = new HalfIndex({ metric: 'cosine', dim: 4, maxElements: 4, m: 8, efConstruction: 16, seed: 1 });
    const v = new Float32Array([1, 2, 3, 4]);
    const out = () => ({ labels: new Uint32Array(10), distances: new Float32Array(10), stats: new Int32Array(2) });
    const bad: [string, () => unknown][] = [
      ['short vector', () => ix.addPoint(new Float32Array(3), 0)],
      ['long vector', () => ix.addPoint(new Float32Array(5), 0)],
      ['NaN', () => ix.addPoint(new Float32Array([1, Number.NaN, 0, 0]), 0)],
      ['Infinity', () => ix.addPoint(new Float32Array([1, Number.POSITIVE_INFINITY, 0, 0]), 0)],
      ['binary16 infinity', () => ix.addPoint(new Uint16Array([0x7c00, 0, 0, 0]), 0)],
      ['number[]', () => ix.addPoint([1, 2, 3, 4] as unknown as Float32Array, 0)],
      ['Float64Array', () => ix.addPoint(new Float64Array(4) as unknown as Float32Array, 0)],
      ['negative label', () => ix.addPoint(v, -1)],
      ['fractional label', () => ix.addPoint(v, 1.5)],
      ['label ≥ 2^32', () => ix.addPoint(v, 2 ** 32)],
      ['NaN label', () => ix.addPoint(v, Number.NaN)],
      ['string label', () => ix.addPoint(v, '1' as unknown as number)],
      ['delete unknown', () => ix.markDelete(3)],
      ['k 0', () => ix.search(v, { k: 0, ef: 10, ...out() })],
      ['k huge', () => ix.search(v, { k: 2 ** 21, ef: 10, ...out() })],
      ['ef NaN', () => ix.search(v, { k: 1, ef: Number.NaN, ...out() })],
      ['short outputs', () => ix.search(v, { k: 11, ef: 10, ...out() })],
      [
        'stats too short',
        () =>
          ix.search(v, {
            k: 1,
            ef: 10,
            labels: new Uint32Array(1),
            distances: new Float32Array(1),
            stats: new Int32Array(1),
          }),
      ],
      ['bitset without map', () => ix.search(v, { k: 1, ef: 10, ...out(), allowed: new Uint8Array(1) })],
      [
        'map of the wrong type',
        () => ix.search(v, { k: 1, ef: 10, ...out(), labelSlot: new Uint32Array(4) as unknown as Int32Array }),
      ],
      ['query NaN', () => ix.exactSearch(new Float32Array([Number.NaN, 0, 0, 0]), { k: 1, ...out() })],
      [
        'candidates of the wrong type',
        () => ix.exactSearch(v, { k: 1, ...out(), candidates: new Int32Array(2) as unknown as Uint32Array }),
      ],
      ['resize to 0', () => ix.resize(0)],
      ['dim 0', () => new HalfIndex({ metric: 'cosine', dim: 0, maxElements: 4 })],
      ['unknown metric', () => new HalfIndex({ metric: 'hamming' as 'l2', dim: 4, maxElements: 4 })],
      ['m 1', () => new HalfIndex({ metric: 'l2', dim: 4, maxElements: 4, m: 1, efConstruction: 4, seed: 1 })],
      ['unknown kernel', () => new HalfIndex({ metric: 'l2', dim: 4, maxElements: 4, kernel: 'sse' as 'avx2' })],
      ['no options', () => new (HalfIndex as unknown as new () => unknown)()],
      ['path with NUL', () => ix.save('/tmp/a\0b')],
      ['unwritable path', () => ix.save('/nonexistent-dir/x.bin')],
    ];
    for (const [name, call] of bad) assert.throws(call, Error, name);
    // A refused argument is a TypeError saying what is wrong, the options object and each option alike.
    const refused = (message: RegExp) => ({ name: 'TypeError', code: 'ERR_ARKIVECTOR_NATIVE', message });
    assert.throws(() => ix.search(v, undefined as never), refused(/search takes an options object/));
    assert.throws(() => ix.exactAsync(v, 10 as never), refused(/exactAsync takes an options object/));
    assert.throws(() => ix.search(v, { ef: 10, ...out() } as never), refused(/k must be a number/));
    assert.throws(() => ix.search(v, { k: 1, ef: 10, ...out(), stats: [0, 0] } as never), refused(/stats must be/));
    const tooFew = { k: 1, ef: 10, allowedLabels: new Uint8Array(1), passing: -1 };
    assert.throws(() => ix.filteredAsync(v, tooFew), refused(/passing must be an integer/));
    const walk = { k: 1, ef: 10, ...out(), passing: 1 };
    assert.throws(() => ix.filteredSearch(v, walk as never), refused(/filteredSearch needs the labelSlot map/));
    // Still a working index after all that.
    for (let i = 0; i < 4; i++) ix.addPoint(new Float32Array([i + 1, 1, 0, 0]), i);
    assert.throws(() => ix.addPoint(v, 9), /full/);
    ix.markDelete(2);
    assert.throws(() => ix.markDelete(2), Error);
    ix.resize(8);
    ix.addPoint(v, 9);
    const { labels, distances, stats } = out();
    ix.search(v, { k: 10, ef: 10, labels, distances, stats });
    assert.equal(stats[0], 4);
    assert.ok(!Array.from(labels.subarray(0, 4)).includes(2));
    ix.exactSearch(v, { k: 10, labels, distances, stats, candidates: new Uint32Array([2, 9, 12345]) });
    assert.equal(stats[0], 1);
    assert.equal(labels[0], 9);
  });
});
