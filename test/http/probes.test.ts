// Liveness, readiness and Prometheus metrics: /healthz always answers, /readyz follows sync_state
// (starting, live, stalled), /metrics carries route, collection and chain series read at scrape time.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, NOTE_ENTITIES, startChain, stateReached, type Chain } from './fixture.ts';

describe('http: probes and metrics', () => {
  let chain: Chain;
  before(async () => {
    chain = await startChain();
  });
  after(() => chain.close());

  test('/readyz: 503 while starting, 200 when live; /healthz: 200 in both', async () => {
    const idle = chain.newIndexer();
    const starting = await chain.node({ ctx: { indexer: idle } });
    const notReady = await call(`${starting.url}/readyz`);
    assert.equal(notReady.status, 503);
    assert.deepEqual(notReady.body, { ready: false, sync_state: 'starting', as_of_block: null, head_block: null });
    assert.equal((await call(`${starting.url}/healthz`)).status, 200);

    idle.start();
    await stateReached(idle, 'live');
    const ready = await call(`${starting.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.equal(ready.body.ready, true);
    assert.equal(ready.body.sync_state, 'live');
    assert.equal(ready.body.as_of_block, idle.asOfBlock);
    const health = await call(`${starting.url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: 'ok' });
  });

  test('/metrics: HTTP series by route template, chain gauges, one-hot sync state, per-collection stats', async () => {
    const node = await chain.node();
    await call(`${node.url}/v1/collections/notes/entities/cat`);
    await call(`${node.url}/v1/collections/notes/entities/dog`);
    await call(`${node.url}/v1/collections/notes/entities/unicorn`);
    await call(`${node.url}/no/such/route`);
    const answer = await call(`${node.url}/metrics`);
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
    const text = answer.body as string;
    assert.match(
      text,
      /arkivector_http_requests_total\{method="GET",route="\/v1\/collections\/:c\/entities\/:ref",status="200"\} 2\n/,
    );
    assert.match(
      text,
      /arkivector_http_requests_total\{method="GET",route="\/v1\/collections\/:c\/entities\/:ref",status="404"\} 1\n/,
    );
    assert.match(text, /arkivector_http_requests_total\{method="GET",route="unmatched",status="404"\} 1\n/);
    assert.match(
      text,
      /arkivector_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/v1\/collections\/:c\/entities\/:ref",status="200"\} 2\n/,
    );
    assert.doesNotMatch(text, /entities\/cat/, 'concrete paths never become labels');
    assert.match(text, new RegExp(`arkivector_head_block ${chain.indexer.headBlock}\\n`));
    assert.match(text, new RegExp(`arkivector_as_of_block ${chain.indexer.asOfBlock}\\n`));
    assert.match(text, /arkivector_sync_lag_blocks 0\n/);
    assert.match(text, /arkivector_sync_state\{state="live"\} 1\n/);
    assert.match(text, /arkivector_sync_state\{state="stalled"\} 0\n/);
    assert.match(
      text,
      new RegExp(`arkivector_collection_live_entities\\{collection="notes"\\} ${NOTE_ENTITIES.length}\\n`),
    );
    assert.match(text, /arkivector_collection_rejected_entities\{collection="notes"\} 0\n/);
    assert.match(text, /arkivector_collection_shadowed_entities\{collection="notes"\} 0\n/);
    assert.match(
      text,
      new RegExp(`arkivector_indexer_events\\{event="bootstraps"\\} ${chain.indexer.counters.bootstraps}\\n`),
    );
    assert.match(
      text,
      new RegExp(`arkivector_indexer_events\\{event="blocksApplied"\\} ${chain.indexer.counters.blocksApplied}\\n`),
    );
  });

  test('/readyz: 503 stalled while the RPC is down', async () => {
    const own = await startChain({ write: false });
    try {
      const node = await own.node();
      assert.equal((await call(`${node.url}/readyz`)).status, 200);
      await own.devnet.suspend();
      await stateReached(own.indexer, 'stalled');
      const stalled = await call(`${node.url}/readyz`);
      assert.equal(stalled.status, 503);
      assert.equal(stalled.body.sync_state, 'stalled');
      assert.equal(stalled.body.as_of_block, own.indexer.asOfBlock);
      assert.equal((await call(`${node.url}/healthz`)).status, 200);
      assert.match((await call(`${node.url}/metrics`)).body, /arkivector_sync_state\{state="stalled"\} 1\n/);
      await own.devnet.resume();
    } finally {
      await own.close();
    }
  });
});
