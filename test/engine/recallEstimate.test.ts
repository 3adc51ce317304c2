// The node's own recall estimate (src/engine/recallEstimate.ts, CollectionStore.recallEstimate): measured
// in idle time from leave-one-out probes, started by a read that never waits for it, and honest: on a
// collection whose graph is searched with a deliberately narrow width, the estimate agrees with
// recall@10 measured here independently (other records as queries, the store's own search against a
// brute-force scan); a collection small enough to be scanned exactly reports `exact` and 1.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CollectionStore, METRIC_OPS, measureRecall, RECALL_SAMPLE_QUERIES } from '../../src/engine/index.ts';
import { clustered, definition, makeRecord, mulberry32 } from './helpers.ts';

const distance = METRIC_OPS.cosine.distance;

async function storeOf(n: number, dim: number, efSearch: number) {
  const records = clustered(n, dim, 51).vectors.map((v, i) => makeRecord(i, v));
  const def = definition(dim);
  def.index.ef_search = efSearch;
  def.index.m = 4;
  const store = new CollectionStore('recall', def);
  await store.apply({ remove: [], upsert: records });
  return { store, records };
}

/** recall@10 of the store's search for `count` other records as queries, the query's own record left out. */
function measured(store: CollectionStore, records: ReturnType<typeof makeRecord>[], count: number): number {
  const rand = mulberry32(52);
  let found = 0;
  let wanted = 0;
  for (let j = 0; j < count; j++) {
    const qi = Math.floor(rand() * records.length);
    const q = records[qi]!.vector;
    const truth = records
      .map((r, i) => [distance(q, r.vector), i] as const)
      .filter(([, i]) => i !== qi)
      .sort((a, b) => a[0] - b[0])
      .slice(0, 10);
    const kth = truth[9]![0] + 1e-6;
    const got = store
      .search({ vector: q, k: 11 })
      .results.map((h) => Number(h.record.id.slice(3)))
      .filter((i) => i !== qi)
      .slice(0, 10);
    found += got.filter((i) => distance(q, records[i]!.vector) <= kth).length;
    wanted += 10;
  }
  return found / wanted;
}

describe('recall estimate per collection', () => {
  test('honest: agrees with recall@10 measured independently on a graph searched narrowly', async () => {
    // dim 128: the exact threshold is 6000, so 7000 records take the graph; m 4 and ef_search 2 keep
    // recall visibly below 1, where a wrong estimate would show.
    const { store, records } = await storeOf(7000, 128, 2);
    assert.equal(store.recallEstimate(), null, 'nothing measured yet');
    // That read started the measurement in the background (one probe per event-loop turn); this joins it.
    const estimate = await measureRecall(store);
    assert.ok(estimate !== undefined);
    assert.equal(estimate.search_mode, 'hnsw');
    assert.equal(estimate.queries, RECALL_SAMPLE_QUERIES);
    assert.equal(estimate.records, 7000);
    const truth = measured(store, records, 100);
    assert.ok(truth < 0.97, `the narrow graph misses neighbours (measured ${truth})`);
    assert.ok(
      Math.abs(estimate.recall_at_10 - truth) <= 0.08,
      `estimate ${estimate.recall_at_10} vs measured ${truth}`,
    );
    assert.deepEqual(store.recallEstimate(), estimate, 'cached');
  });

  test('a collection scanned exactly reports exact and 1 without measuring', async () => {
    const { store } = await storeOf(500, 16, 40);
    assert.deepEqual(store.recallEstimate(), {
      recall_at_10: 1,
      queries: 0,
      records: 500,
      search_mode: 'exact',
      measured_at: null,
    });
    // The leave-one-out probe agrees: every answer is the exact one.
    const measured = await measureRecall(store);
    assert.equal(measured?.recall_at_10, 1);
    assert.equal(measured?.search_mode, 'exact');
  });

  test('too few records: no estimate', async () => {
    const { store } = await storeOf(8, 16, 40);
    assert.equal(await measureRecall(store), undefined);
    assert.equal(store.recallEstimate(), null);
  });
});
