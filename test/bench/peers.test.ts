// The pure parts of `npm run bench:peers`: the equal-recall interpolation and the binary COPY stream the
// pgvector systems load (the timed runs themselves are not tests).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { halfBitsToFloat } from '../../src/collections/index.ts';
import type { Row } from '../../scripts/peers/common.ts';
import { compare, qpsAtRecall } from '../../scripts/peers/compare.ts';
import { binaryCopy, vectorLiteral } from '../../scripts/peers/pgvector.ts';

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
  it('interpolates log(QPS) linearly in recall between the bracketing ef', () => {
    const pts = [
      row('hnswlib-node', 64, 0.96, 900),
      row('hnswlib-node', 10, 0.8, 4000),
      row('hnswlib-node', 32, 0.9, 1600),
    ];
    const at = qpsAtRecall(pts, 0.95);
    assert.equal(at.kind, 'interpolated');
    assert.deepEqual(at.ef_range, [32, 64]);
    // 5/6 of the way from 0.90 to 0.96 in log space.
    assert.ok(Math.abs(at.qps! - Math.exp(Math.log(1600) + (5 / 6) * Math.log(900 / 1600))) < 1e-6);
  });

  it('says when the narrowest ef already exceeds the target, or the widest never reaches it', () => {
    assert.deepEqual(qpsAtRecall([row('exact', 10, 0.97, 500), row('exact', 16, 0.99, 400)], 0.95), {
      qps: 500,
      kind: 'at_least',
      ef_range: [10],
    });
    assert.deepEqual(qpsAtRecall([row('exact', 10, 0.9, 500)], 0.95), { qps: null, kind: 'not_reached', ef_range: [] });
  });

  it('divides arkivector by each peer present, marks bounds approximate and checks the targets', () => {
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
      c.ratios.map((r) => [r.recall, r.peer]),
      [
        [0.95, 'pglite-pgvector'],
        [0.99, 'pglite-pgvector'],
      ],
    );
    const [at95, at99] = c.ratios;
    assert.equal(at95!.approximate, true); // PGlite's first ef is already above 0.95
    assert.equal(at99!.approximate, false);
    assert.equal(at99!.met, at99!.ratio! >= 10);
    assert.ok(at99!.ratio! > 10 && at99!.ratio! < 40);
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
