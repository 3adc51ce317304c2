// Tests src/engine/plan/, hnsw/ and metrics.ts through CollectionStore.search: recall of
// the graph against exact ground truth, the planner's choice (search_mode) for narrow and broad
// filters, never under-filling k (also when the allowed set lies far from the query, where the probe
// sends it to the exact scan), and pgvector's distance/score definitions for every metric.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VectorRecord } from '../../../src/collections/index.ts';
import { CollectionStore, exactThreshold, METRIC_OPS } from '../../../src/engine/index.ts';
import { clustered, definition, makeRecord } from '../helpers.ts';

function exactTop(
  records: VectorRecord[],
  q: ArrayLike<number>,
  k: number,
  metric: 'cosine' | 'l2' | 'ip' = 'cosine',
  pass: (r: VectorRecord) => boolean = () => true,
): string[] {
  const d = METRIC_OPS[metric].distance;
  return records
    .filter(pass)
    .map((r) => ({ id: r.id, d: d(q, r.vector) }))
    .sort((a, b) => a.d - b.d)
    .slice(0, k)
    .map((x) => x.id);
}

function recall(got: string[], truth: string[]): number {
  const t = new Set(truth);
  return got.filter((id) => t.has(id)).length / truth.length;
}

describe('search: 20k × 32 clustered, default settings', async () => {
  const dim = 32;
  const { vectors, cluster } = clustered(20000, dim, 1);
  const records = vectors.map((v, i) => makeRecord(i, v, { cluster: cluster[i]!, flag: i % 20 !== 0, mod: i % 100 }));
  const store = new CollectionStore('test', definition(dim, { cluster: 'i32', flag: 'bool', mod: 'i32' }));
  await store.apply({ remove: [], upsert: records });
  const queries = clustered(200, dim, 2).vectors;

  test('behavior: recall@10 ≥ 0.95 against exact, graph used', () => {
    assert.ok(records.length > exactThreshold(dim));
    let sum = 0;
    for (const q of queries) {
      const res = store.search({ vector: q, k: 10 });
      assert.equal(res.search_mode, 'hnsw');
      sum += recall(
        res.results.map((r) => r.record.id),
        exactTop(records, q, 10),
      );
    }
    const r = sum / queries.length;
    assert.ok(r >= 0.95, `recall@10 ${r}`);
  });

  test('behavior: narrow filter scans exactly and is exact', () => {
    for (const q of queries.slice(0, 20)) {
      const res = store.search({ vector: q, k: 10, where: 'mod = 7' });
      assert.equal(res.search_mode, 'exact');
      assert.deepEqual(
        res.results.map((r) => r.record.id),
        exactTop(records, q, 10, 'cosine', (r) => r.attributes.mod === 7),
      );
    }
  });

  test('behavior: broad filter searches the graph with the filter applied, recall ≥ 0.95', () => {
    let sum = 0;
    for (const q of queries.slice(0, 50)) {
      const res = store.search({ vector: q, k: 10, filter: { eq: { flag: true } } });
      assert.equal(res.search_mode, 'hnsw');
      assert.equal(res.results.length, 10);
      for (const r of res.results) assert.equal(r.record.attributes.flag, true);
      sum += recall(
        res.results.map((r) => r.record.id),
        exactTop(records, q, 10, 'cosine', (r) => r.attributes.flag === true),
      );
    }
    assert.ok(sum / 50 >= 0.95, `filtered recall ${sum / 50}`);
  });

  test('behavior: returns every match when fewer than k pass, and k when exactly k pass', () => {
    const q = queries[0]!;
    const three = records.slice(0, 3).map((r) => r.key);
    const res = store.search({ vector: q, k: 10, where: `$key IN (${three.join(' ')})` });
    assert.deepEqual(new Set(res.results.map((r) => r.record.key)), new Set(three));
    const ten = records.slice(100, 110).map((r) => r.key);
    assert.equal(store.search({ vector: q, k: 10, where: `$key IN (${ten.join(' ')})` }).results.length, 10);
    assert.equal(store.search({ vector: q, k: 10, where: 'mod = 1000' }).results.length, 0);
  });

  test('args: k larger than the collection, efSearch override, k = 0', () => {
    assert.equal(store.search({ vector: queries[0]!, k: 50, efSearch: 10 }).results.length, 50);
    assert.equal(store.search({ vector: queries[0]!, k: 0 }).results.length, 0);
  });

  test('error: dimension_mismatch', () => {
    assert.throws(
      () => store.search({ vector: [1, 2, 3], k: 10 }),
      (err: Error & { code?: string; expected?: number; got?: number }) => {
        assert.equal(err.code, 'dimension_mismatch');
        assert.equal(err.expected, 32);
        assert.equal(err.got, 3);
        return true;
      },
    );
  });
});

describe('search: allowed set far from the query (graph path)', async () => {
  // dim 128 puts the exact threshold at 6000, so an allowed set of ~7000 goes to the graph.
  const dim = 128;
  const { vectors, cluster } = clustered(16000, dim, 3);
  const records = vectors.map((v, i) => makeRecord(i, v, { cluster: cluster[i]! }));
  const store = new CollectionStore('far', definition(dim, { cluster: 'i32' }));
  await store.apply({ remove: [], upsert: records });
  const { vectors: qs, cluster: qc } = clustered(400, dim, 4);
  const far = qs.filter((_, i) => qc[i] === 15).slice(0, 10);

  test('behavior: returns k, with recall ≥ 0.95, when the allowed clusters lie away from the query', () => {
    const allowed = (r: Pick<VectorRecord, 'attributes'>) => (r.attributes.cluster as number) < 7;
    assert.ok(records.filter(allowed).length > exactThreshold(dim));
    let sum = 0;
    for (const q of far) {
      const res = store.search({ vector: q, k: 10, where: 'cluster < 7' });
      assert.equal(res.results.length, 10);
      for (const r of res.results) assert.ok(allowed(r.record));
      sum += recall(
        res.results.map((r) => r.record.id),
        exactTop(records, q, 10, 'cosine', allowed),
      );
    }
    assert.ok(sum / far.length >= 0.95, `recall ${sum / far.length}`);
  });

  test('behavior: the probe sends a far allowed set (~7000, above the threshold) to the exact scan: the true top-k', () => {
    const allowed = (r: Pick<VectorRecord, 'attributes'>) => (r.attributes.cluster as number) < 7;
    const passing = records.filter(allowed).length;
    // The planner's filtered threshold at ef 100: min(exactThreshold, √(2 · ef · n)).
    assert.ok(
      passing > Math.min(exactThreshold(dim), Math.sqrt(2 * 100 * records.length)),
      'above the planner threshold',
    );
    for (const q of far) {
      const truth = exactTop(records, q, 10, 'cosine', allowed);
      for (const params of [{ where: 'cluster < 7' }, { filter: { in: { cluster: [0, 1, 2, 3, 4, 5, 6] } } }]) {
        const res = store.search({ vector: q, k: 10, ...params });
        assert.equal(res.search_mode, 'exact');
        assert.deepEqual(
          res.results.map((r) => r.record.id),
          truth,
        );
      }
    }
  });

  test('behavior: a set spread around the query still takes the graph; a where string trusted as spread still answers far queries exactly', () => {
    // cluster != 15 allows ~15/16 of the data, above the probe's range: always the graph. cluster < 7
    // around a query of cluster 3 is near: the probe finds allowed neighbours and the graph answers.
    const nearQs = qs.filter((_, i) => qc[i] === 3).slice(0, 12);
    const allowed = (r: Pick<VectorRecord, 'attributes'>) => (r.attributes.cluster as number) < 7;
    let sum = 0;
    for (const q of nearQs) {
      const res = store.search({ vector: q, k: 10, where: 'cluster < 7' });
      assert.equal(res.search_mode, 'hnsw');
      sum += recall(
        res.results.map((r) => r.record.id),
        exactTop(records, q, 10, 'cosine', allowed),
      );
    }
    assert.ok(sum / nearQs.length >= 0.95, `recall ${sum / nearQs.length}`);
    // After a run of spread verdicts the same `where` is probed only now and then; far queries that skip
    // the probe are still caught by the walk and rescanned exactly, never short of k.
    for (const q of far) {
      const res = store.search({ vector: q, k: 10, where: 'cluster < 7' });
      assert.deepEqual(
        res.results.map((r) => r.record.id),
        exactTop(records, q, 10, 'cosine', allowed),
      );
    }
  });

  test('behavior: a single far cluster (~1000) is scanned exactly', () => {
    for (const q of far) {
      const res = store.search({ vector: q, k: 10, filter: { eq: { cluster: 2 } } });
      assert.equal(res.search_mode, 'exact');
      assert.deepEqual(
        res.results.map((r) => r.record.id),
        exactTop(records, q, 10, 'cosine', (r) => r.attributes.cluster === 2),
      );
    }
  });
});

for (const metric of ['cosine', 'l2', 'ip'] as const) {
  describe(`metric ${metric}: pgvector distances and scores in both modes`, async () => {
    // dim 64: exact threshold 9000 < 12000 records, so the unfiltered search uses the graph.
    const dim = 64;
    const { vectors } = clustered(12000, dim, 5);
    // Unnormalised vectors, so l2 and ip differ from cosine.
    const records = vectors.map((v, i) =>
      makeRecord(
        i,
        v.map((x) => x * (1 + (i % 5))),
        { small: i < 200 },
      ),
    );
    const store = new CollectionStore('m', definition(dim, { small: 'bool' }, metric));
    await store.apply({ remove: [], upsert: records });
    const ops = METRIC_OPS[metric];
    const q = clustered(1, dim, 6).vectors[0]!;

    for (const [name, params] of [
      ['exact', { where: 'small = bool(true)' }],
      ['hnsw', {}],
    ] as const) {
      test(`${name}: distance = pgvector distance, score by opclass`, () => {
        const res = store.search({ vector: q, k: 10, ...params });
        assert.equal(res.search_mode, name);
        assert.equal(res.results.length, 10);
        for (const r of res.results) {
          const v = store.get(r.record.key)!.vector;
          assert.ok(Math.abs(r.distance - ops.distance(q, v)) < 1e-4, `${r.distance} vs ${ops.distance(q, v)}`);
          const expected = metric === 'cosine' ? 1 - r.distance : metric === 'l2' ? 1 / (1 + r.distance) : -r.distance;
          assert.ok(Math.abs(r.score - expected) < 1e-12);
        }
        const truth = exactTop(
          records,
          q,
          10,
          metric,
          name === 'exact' ? (r) => r.attributes.small === true : undefined,
        );
        assert.ok(
          recall(
            res.results.map((r) => r.record.id),
            truth,
          ) >= 0.9,
        );
      });
    }
  });
}

test('metrics: l2 is Euclidean (not squared), ip is −(a·b), cosine is 1 − cos', () => {
  assert.equal(METRIC_OPS.l2.distance([3, 4], [0, 0]), 5);
  assert.equal(METRIC_OPS.l2.fromHnsw(25), 5);
  assert.equal(METRIC_OPS.ip.distance([1, 2], [3, 4]), -11);
  assert.equal(METRIC_OPS.ip.fromHnsw(1 - 11), -11);
  assert.ok(Math.abs(METRIC_OPS.cosine.distance([1, 0], [1, 1]) - (1 - Math.SQRT1_2)) < 1e-12);
  assert.equal(METRIC_OPS.cosine.score(0.25), 0.75);
  assert.equal(METRIC_OPS.l2.score(1), 0.5);
  assert.equal(METRIC_OPS.ip.score(-11), 11);
});
