// The pure parts of `npm run bench:peers`: the equal-recall comparison tables (and test/bench/equalRecall.test.ts), the
// filter cases and the dataset files they travel in, the binary COPY stream the pgvector systems load, the
// libSQL search-width rewrite and the peers' install manifests (the timed runs themselves are not tests,
// and no peer is installed here: nothing below loads one).

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { halfBitsToFloat } from '../../src/collections/index.ts';
import { mulberry32 } from '../helpers/generators.ts';
import {
  type Dataset,
  type Job,
  K,
  type Measured,
  readDataset,
  type Row,
  SYSTEMS,
  setExactQps,
  sweep,
  sweepRows,
  writeDataset,
} from './peers/common.ts';
import { compare, compareAll, formatFull, labelOf } from './peers/compare.ts';
import {
  allowedIds,
  buckets,
  caseData,
  casesFor,
  FILTER_CASES,
  firstAllowed,
  parseFilterCases,
} from './peers/filters.ts';
import { FOLDER_OF, PEER_FOLDERS, type PeerFolder, peerManifest } from './peers/install.ts';
import { withSearchL } from './peers/libsql.ts';
import { binaryCopy, vectorLiteral } from './peers/pgvector.ts';
import { fencedBlocks, readmeSection, shellCommands } from '../helpers/readme.ts';

function row(system: Row['system'], ef: number, recall: number, qps: number): Row {
  return {
    system,
    n: 100,
    dim: 4,
    ef,
    selectivity: 1,
    recall_at_10: recall,
    qps,
    p50_ms: 1,
    p99_ms: 2,
    queries: 10,
    timed_searches: 10,
    build_s: 1,
    build_pts_per_s: 100,
    bytes_per_vector: 1,
  };
}

describe('bench:peers equal-recall comparison', () => {
  it('divides arkivector by each peer present, point by measured point, and checks the targets', () => {
    const rows = [
      row('arkivector', 10, 0.9, 4000),
      row('arkivector', 40, 0.995, 2000),
      row('pglite-pgvector', 10, 0.96, 150),
      row('pglite-pgvector', 40, 0.99, 100),
      { ...row('exact', 10, 1, 30), ef: null },
    ];
    const c = compare(rows);
    assert.equal(c.systems.exact, undefined); // no ef, no curve
    assert.deepEqual(
      c.ratios.map((r) => [r.recall, r.peer, r.ratio]),
      [
        [0.95, 'pglite-pgvector', 2000 / 150],
        [0.99, 'pglite-pgvector', 2000 / 100],
      ],
    );
    assert.deepEqual(
      c.ratios.map((r) => r.met),
      [true, true],
    );
  });
});

describe('bench:peers pgvector load', () => {
  it('writes a binary COPY stream of (int4, halfvec) rows that decodes back to the vectors', () => {
    const dim = 3;
    const base = Float32Array.from([0.5, -0.25, 1, 0.125, 0, -2]);
    const out = binaryCopy(base, 2, dim);
    const view = new DataView(out.buffer);
    assert.deepEqual([...out.subarray(0, 11)], [...Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1')]);
    assert.equal(view.getInt32(11), 0);
    assert.equal(view.getInt32(15), 0);
    const tuple = 18 + 2 * dim;
    for (let i = 0; i < 2; i++) {
      const o = 19 + i * tuple;
      assert.equal(view.getInt16(o), 2);
      assert.equal(view.getInt32(o + 2), 4);
      assert.equal(view.getInt32(o + 6), i);
      assert.equal(view.getInt32(o + 10), 4 + 2 * dim);
      assert.equal(view.getInt16(o + 14), dim);
      assert.equal(view.getInt16(o + 16), 0);
      const got = Array.from({ length: dim }, (_, d) => halfBitsToFloat(view.getUint16(o + 18 + 2 * d)));
      assert.deepEqual(got, [...base.subarray(i * dim, (i + 1) * dim)]);
    }
    assert.equal(view.getInt16(19 + 2 * tuple), -1);
    assert.equal(out.length, 19 + 2 * tuple + 2);
  });

  it('sends each query as a literal that parses back to its float32 values', () => {
    const q = Float32Array.from([0.1, -1 / 3, 1e-7]);
    const parsed = Float32Array.from(JSON.parse(vectorLiteral(q)) as number[]);
    assert.deepEqual([...parsed], [...q]);
  });
});

describe('bench:peers comparison of every label and case', () => {
  const at = (
    system: Row['system'],
    ef: number | null,
    recall: number,
    qps: number,
    extra: Partial<Row> = {},
  ): Row => ({
    ...row(system, ef ?? 0, recall, qps),
    ef,
    ...extra,
  });

  it('labels a row system[:variant][#run]', () => {
    assert.equal(labelOf(at('lancedb', 10, 0.9, 1)), 'lancedb');
    assert.equal(labelOf(at('lancedb', 10, 0.9, 1, { variant: 'flat' })), 'lancedb:flat');
    assert.equal(labelOf(at('arkivector', 10, 0.9, 1, { run: 1 })), 'arkivector');
    assert.equal(
      labelOf(at('usearch-f16', 10, 0.9, 1, { variant: 'post-filter', run: 2 })),
      'usearch-f16:post-filter#2',
    );
  });

  it('keeps filtered rows and repeats out of the unfiltered targets, and holds the native engine to 1.5× raw', () => {
    const rows = [
      at('arkivector-native', 10, 0.9, 6000),
      at('arkivector-native', 40, 0.99, 3000),
      at('hnswlib-node', 10, 0.9, 4000),
      at('hnswlib-node', 40, 0.99, 2500),
      at('hnswlib-node', 40, 0.99, 1, { run: 2 }), // a second round: its own label, not this curve
      at('hnswlib-node', 40, 0.999, 1, { case: 'random-10' }),
    ];
    const c = compare(rows);
    assert.deepEqual(Object.keys(c.systems).sort(), ['arkivector-native', 'hnswlib-node', 'hnswlib-node#2']);
    const native = c.ratios.filter((r) => r.base === 'arkivector-native');
    assert.deepEqual(
      native.map((r) => [r.recall, r.peer, r.target]),
      [
        [0.95, 'hnswlib-node', 1.5],
        [0.99, 'hnswlib-node', 1.5],
      ],
    );
    // Both stand at their ef 40 point, the only one at or above 0.95.
    assert.equal(native[0]!.ratio, 3000 / 2500);
    assert.equal(native[0]!.met, false);
    assert.equal(
      c.ratios.some((r) => r.base === 'arkivector'),
      false,
    ); // no default-engine rows here
  });

  it('stands a one-point scan at every target its recall meets, per case, and divides both engines by each label', () => {
    const rows = [
      at('arkivector', 10, 0.9, 3000),
      at('arkivector', 40, 0.99, 1000),
      at('arkivector-native', 10, 0.9, 4000),
      at('arkivector-native', 40, 0.99, 2000),
      at('exact', null, 1, 50),
      at('arkivector', 10, 0.97, 600, { case: 'clustered-10' }),
      at('lancedb', 10, 0.9, 200, { case: 'clustered-10', variant: 'hnsw-sq' }),
      at('lancedb', 40, 0.96, 100, { case: 'clustered-10', variant: 'hnsw-sq' }),
      at('libsql', null, 0.9, 80, { case: 'clustered-10', variant: 'exact' }),
    ];
    const full = compareAll(rows);
    assert.deepEqual(Object.keys(full.cases).sort(), ['clustered-10', 'unfiltered']);
    assert.deepEqual(full.cases.unfiltered!.exact!['0.99'], { qps: 50, kind: 'measured', ef: null, recall: 1 });
    assert.equal(full.cases['clustered-10']!['libsql:exact']!['0.95']!.kind, 'not_reached');
    assert.equal(full.cases['clustered-10']!['lancedb:hnsw-sq']!['0.99']!.kind, 'not_reached');
    assert.deepEqual(full.best['clustered-10']!['lancedb:hnsw-sq'], { recall: 0.96, qps: 100, ef: 40 });
    const ratio = (c: string, base: string, peer: string, recall: number) =>
      full.ratios.find((r) => r.case === c && r.base === base && r.peer === peer && r.recall === recall);
    assert.ok(Math.abs(ratio('unfiltered', 'arkivector', 'exact', 0.99)!.ratio! - 1000 / 50) < 1e-9);
    assert.ok(Math.abs(ratio('unfiltered', 'arkivector-native', 'arkivector', 0.99)!.ratio! - 2) < 1e-9);
    assert.ok(ratio('unfiltered', 'arkivector', 'arkivector-native', 0.95) !== undefined);
    // arkivector's one clustered point (0.97) against LanceDB's only point at or above 0.95 (ef 40, 0.96).
    assert.equal(ratio('clustered-10', 'arkivector', 'lancedb:hnsw-sq', 0.95)!.ratio, 600 / 100);
    assert.equal(ratio('clustered-10', 'arkivector', 'libsql:exact', 0.95)!.ratio, null);
    assert.equal(ratio('clustered-10', 'arkivector-native', 'lancedb:hnsw-sq', 0.95), undefined); // no native rows there
    const text = formatFull(full);
    assert.match(text, /QPS at equal recall@10, clustered-10 \(/);
    assert.match(text, /libsql:exact\s+not reached \(best 0\.900\)/);
    assert.match(text, /unfiltered\s+@0\.99\s+arkivector-native\s+÷ arkivector\s+2\.00×/);
  });
});

describe('bench:peers filter cases', () => {
  it('draws the buckets scripts/bench.ts draws (mulberry32(7), in id order)', () => {
    const rand = mulberry32(7);
    const b = buckets(500);
    for (let i = 0; i < 500; i++) assert.equal(b[i], Math.floor(rand() * 1000));
    assert.ok(b.every((x) => x >= 0 && x < 1000));
  });

  it('parses --filters: all cases bare, the named ones in order, refusing a name that is no case', () => {
    assert.deepEqual(parseFilterCases('far-10,random-1,far-10'), ['far-10', 'random-1']);
    assert.throws(() => parseFilterCases('random,far-10'), /unknown random \(known: random-10/);
  });

  it('writes and reads a dataset with filter truth, and packs the far case down to the queries it asks', () => {
    const dir = mkdtempSync(join(tmpdir(), 'arkivector-peers-test-'));
    try {
      const dim = 2;
      const n = 30;
      const queries = 4;
      const base = Float32Array.from({ length: n * dim }, (_, i) => i);
      const qs = Float32Array.from({ length: queries * dim }, (_, i) => 100 + i);
      const truth = Int32Array.from({ length: queries * K }, (_, i) => i % n);
      const far = Int32Array.from([1, 3]);
      const data: Dataset = {
        base,
        queries: qs,
        truth,
        bucket: Int32Array.from({ length: n }, (_, i) => i * 30),
        cluster: Int32Array.from({ length: n }, (_, i) => i % 4),
        filteredTruth: {
          'random-10': Int32Array.from({ length: queries * K }, (_, i) => i % 4),
          'far-10': Int32Array.from({ length: far.length * K }, (_, i) => 7 + (i % 3)),
        },
        caseQueries: { 'far-10': far },
      };
      writeDataset(dir, data);
      const job: Job = { system: 'exact', n, dim, queries, exactQueries: 2, data: dir, filters: true };
      const back = readDataset(job);
      assert.deepEqual(back, data);
      assert.deepEqual(
        casesFor(job, back).map((c) => c.name),
        ['random-10', 'far-10'],
      );
      assert.deepEqual(casesFor({ ...job, filters: false }, back), []);
      const farCase = FILTER_CASES.find((c) => c.name === 'far-10')!;
      const packed = caseData(farCase, back, dim);
      assert.deepEqual([...packed.queries], [102, 103, 106, 107]);
      assert.equal(packed.truth, back.filteredTruth!['far-10']);
      // bucket i*30 < 800 and cluster i%4 < 2
      assert.deepEqual([...allowedIds(farCase, back)], [0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25]);
      // A query id out of range is refused, not read past.
      writeDataset(dir, { ...data, caseQueries: { 'far-10': Int32Array.from([4]) } });
      assert.throws(() => readDataset(job), /not a list of query ids below 4/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the first k allowed ids of a post-filtered answer, in order', () => {
    const ids = Array.from({ length: 40 }, (_, i) => 39 - i);
    assert.deepEqual(
      firstAllowed(ids, (id) => id % 3 === 0),
      [39, 36, 33, 30, 27, 24, 21, 18, 15, 12],
    );
    assert.deepEqual(
      firstAllowed([5, 6], () => true),
      [5, 6],
    );
  });
});

describe('bench:peers bounded sweeps', () => {
  const point = (recall: number, cpuQps: number): Measured => ({
    recall,
    qps: cpuQps,
    cpuQps,
    p50: 1,
    p99: 2,
    count: 10,
    timed: 10,
    asked: 10,
  });

  it('stops raising the width at recall 0.99, or once a point is slower than the exact scan of its case, and says why', async () => {
    // recall rises and QPS falls with the width; the exact scan of `random-1` answers 300 QPS per CPU second
    const curve = new Map([
      [10, point(0.5, 2000)],
      [16, point(0.7, 1000)],
      [24, point(0.8, 250)],
      [32, point(0.995, 200)],
      [40, point(0.999, 100)],
    ]);
    const efs = [10, 16, 24, 32, 40];
    setExactQps({ unfiltered: 50, 'random-1': 300 });
    try {
      const asked: number[] = [];
      const at = async (ef: number): Promise<Measured> => {
        asked.push(ef);
        return curve.get(ef)!;
      };
      const unfiltered = await sweep(at, efs);
      assert.deepEqual(
        unfiltered.map((p) => p.ef),
        [10, 16, 24, 32],
        'unfiltered: stops at the first width reaching 0.99',
      );
      assert.equal(unfiltered.at(-1)!.stop, undefined);
      const filtered = await sweep(at, efs, 'random-1');
      assert.deepEqual(
        filtered.map((p) => p.ef),
        [10, 16, 24],
        'random-1: stops at the first width slower than its exact scan',
      );
      assert.match(filtered.at(-1)!.stop!, /slower than the exact scan \(250\.0 < 300\.0/);
      const job: Job = { system: 'hnswlib-node', n: 100, dim: 4, queries: 10, exactQueries: 10, data: '' };
      const rows = sweepRows('hnswlib-node', job, { seconds: 1, bytesPerVector: 1 }, filtered);
      assert.deepEqual(
        rows.map((r) => r.sweep_stop !== undefined),
        [false, false, true],
      );
      // A case without an exact figure sweeps on to 0.99.
      assert.equal((await sweep(at, efs, 'far-10')).length, 4);
      assert.equal(asked.length, 4 + 3 + 4);
    } finally {
      setExactQps(undefined);
    }
  });

  it('marks a point that answered fewer queries than asked', () => {
    const job: Job = { system: 'exact', n: 100, dim: 4, queries: 500, exactQueries: 10, data: '' };
    const [cut, full] = sweepRows('exact', job, { seconds: 1, bytesPerVector: 1 }, [
      { ...point(0.9, 10), ef: 10, count: 60, asked: 500 },
      { ...point(0.9, 10), ef: 16 },
    ]);
    assert.equal(cut!.queries, 60);
    assert.equal(cut!.queries_asked, 500);
    assert.equal(full!.queries_asked, undefined);
  });
});

describe('bench:peers libSQL search width', () => {
  it('rewrites only the search_l entry of the index parameter blob', () => {
    const entry = (tag: number, v: bigint): Buffer => {
      const b = Buffer.alloc(9);
      b[0] = tag;
      b.writeBigUInt64LE(v, 1);
      return b;
    };
    const meta = Buffer.concat([entry(1, 3n), entry(9, 200n), entry(10, 64n)]);
    const out = withSearchL(meta, 40);
    assert.deepEqual(out.subarray(0, 9), meta.subarray(0, 9));
    assert.equal(out.readBigUInt64LE(10), 40n);
    assert.deepEqual(out.subarray(18), meta.subarray(18));
    assert.equal(meta.readBigUInt64LE(10), 200n); // the input is not changed
    assert.throws(() => withSearchL(meta.subarray(0, 10), 40), /unexpected libSQL index parameter blob/);
    assert.throws(() => withSearchL(entry(1, 3n), 40), /no search_l/);
  });
});

describe('bench:peers embedded peers install', () => {
  it('pins every peer to an exact version, outside the product: none is a dependency of package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Record<
      string,
      Record<string, string> | undefined
    >;
    const product = new Set(
      ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'].flatMap((k) =>
        Object.keys(pkg[k] ?? {}),
      ),
    );
    for (const folder of Object.keys(PEER_FOLDERS) as PeerFolder[]) {
      const m = peerManifest(folder) as { private: boolean; dependencies: Record<string, string> };
      assert.equal(m.private, true);
      assert.deepEqual(m.dependencies, PEER_FOLDERS[folder]);
      for (const [name, v] of Object.entries(m.dependencies)) {
        assert.match(v, /^\d+\.\d+\.\d+$/, name);
        assert.equal(product.has(name), false, `${name} must not be a dependency of arkivector`);
      }
    }
    assert.equal(PEER_FOLDERS.lancedb['apache-arrow'], '18.1.0'); // LanceDB 0.31: apache-arrow >=15.0.0 <=18.1.0
    for (const [system, folder] of Object.entries(FOLDER_OF)) {
      assert.ok((SYSTEMS as readonly string[]).includes(system), system);
      assert.ok(folder in PEER_FOLDERS, folder);
    }
  });
});

describe('bench:peers in the README', () => {
  it('names only systems and filter cases the bench knows in its bench:peers commands', () => {
    const commands = fencedBlocks(readmeSection('Benchmarks'), 'sh')
      .flatMap(shellCommands)
      .filter((c) => c.startsWith('npm run bench:peers'));
    assert.ok(commands.length >= 3, 'the how-to-run block');
    const named = new Set<string>();
    for (const c of commands) {
      const args = c.split(/\s+/);
      const value = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
      for (const s of value('--systems')?.split(',') ?? []) {
        assert.ok((SYSTEMS as readonly string[]).includes(s), `${s} in: ${c}`);
        named.add(s);
      }
      const f = value('--filters');
      if (f !== undefined && !f.startsWith('--')) parseFilterCases(f);
    }
    for (const s of ['arkivector', 'arkivector-native', 'hnswlib-node', 'usearch', 'usearch-f16', 'lancedb', 'libsql'])
      assert.ok(named.has(s), s);
  });
});
