// Text that fails helpfully: each way the local model's fetch fails against a loopback hub (no route, a
// refusal, a file too large, a wrong hash, a stall, a hub dripping bytes past the deadline, a model that does
// not load) is answered with its cause, when it is tried again and every way out; a failure is not fetched
// again at every call (back-off), yet a model copied into the cache meanwhile is used at the next call. The
// instructions and /v1/status tell "fetching" from "failed". With local:ORG/NAME, a collection created with
// an explicit dim fetches nothing.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CatalogModel } from '../../src/embedder/local/catalog.ts';
import { createLocalEmbedder, modelFolder, parseLocalModel } from '../../src/embedder/local/index.ts';
import { createCollection, status } from '../../src/service/index.ts';
import { instructionsFor } from '../../tools/index.ts';
import { type FakeHub, refuseOtherHosts, startFakeHub } from '../helpers/fakeHub.ts';
import { startGeneration } from '../helpers/generations.ts';
import { TINY_DIM, tinyModelFiles, tinyModelHashes, writeTinyModel } from '../helpers/tinyModel.ts';

const REVISION = 'fedcba9876543210fedcba9876543210fedcba98';
const files = tinyModelFiles();
const tiny: CatalogModel = {
  name: 'tiny',
  repo: 'arkivector-test/tiny',
  revision: REVISION,
  files: tinyModelHashes(files),
  dim: TINY_DIM,
  maxTokens: 512,
  queryPrefix: '',
  passagePrefix: '',
};
const STALL_MS = 2000;

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The embedder_unavailable of a failed model: cause, retry time, and every way out. */
function assertHelpful(error: Error & { code?: string }, cause: RegExp, folder: string): void {
  assert.equal(error.code, 'embedder_unavailable');
  assert.match(error.message, /^the local embedder cannot load tiny: /);
  assert.match(error.message, cause);
  assert.match(error.message, /It is not tried again before \d{4}-\d\d-\d\dT[\d:.]+Z\./);
  assert.ok(error.message.includes(`"arkivector model pull tiny" on a machine that reaches the hub`), error.message);
  assert.ok(error.message.includes(`copy the folder it prints to ${folder}`), error.message);
  for (const way of [
    '--embedder local:PATH',
    '--model-hub URL',
    '--embedder URL --embedder-model NAME',
    'mode "keyword"',
  ])
    assert.ok(error.message.includes(way), `${way} missing: ${error.message}`);
}

describe('local embedder failures against a loopback hub', () => {
  let hub: FakeHub;
  let undo: () => void;
  const roots: string[] = [];
  const fresh = async () => {
    const root = await mkdtemp(join(tmpdir(), 'arkivector-failures-'));
    roots.push(root);
    return root;
  };

  before(async () => {
    undo = refuseOtherHosts();
    hub = await startFakeHub(tiny.repo, REVISION, files);
  });
  after(async () => {
    await hub?.close();
    undo?.();
    for (const root of roots) await rm(root, { recursive: true, force: true });
  });

  const cases = [
    ['no route to the hub', undefined, /the model hub cannot be reached: .*ECONNREFUSED/, 'unreachable', {}],
    ['the hub refuses', { status: 404 }, /the model hub refused the file: .*HTTP 404/, 'refused', {}],
    [
      'a file too large',
      { body: Buffer.alloc(300_000, 0x20) },
      /larger than allowed: .*300000 bytes/,
      'too_large',
      { maxFileBytes: 100_000 },
    ],
    [
      'a wrong hash',
      { body: Buffer.from('{"x": 1}') },
      /sha256 is not the pinned one: .*expected [0-9a-f]{64}/,
      'hash_mismatch',
      {},
    ],
    ['a stalled transfer', { silent: true }, /stalled: .*no data for 2000 ms/, 'stalled', {}],
    [
      'a hub dripping a byte at a time',
      { drip: { everyMs: 100 } },
      /stalled: .*took longer than 1500 ms/,
      'stalled',
      { fetchDeadlineMs: 1500 },
    ],
  ] as const;
  for (const [name, fault, cause, kind, extra] of cases)
    test(`${name}: the cause, the retry time and the ways out; no fetch again before that time`, async () => {
      const root = await fresh();
      const url = fault === undefined ? `http://127.0.0.1:${await closedPort()}` : hub.url;
      if (fault) hub.faults.set('tokenizer.json', fault);
      try {
        const embedder = createLocalEmbedder(
          { kind: 'hub', model: tiny },
          { hub: url, cacheRoot: root, idleTimeoutMs: STALL_MS, ...extra },
        );
        const folder = modelFolder(root, tiny);
        await assert.rejects(embedder.embed('a cat'), (error: Error & { code?: string }) => {
          assertHelpful(error, cause, folder);
          return true;
        });
        const failed = embedder.state();
        assert.equal(failed.state, 'failed');
        assert.equal(failed.cause, kind);
        assert.ok(Date.parse(failed.retry_at ?? '') > Date.now(), 'tried again later, not at the next call');
        const asked = hub.requests.length;
        await assert.rejects(embedder.embed('a dog'), /It is not tried again before/);
        assert.equal(hub.requests.length, asked, 'a failed model is not fetched again at every call');
        assert.deepEqual(embedder.state(), failed);
        await embedder.close();
      } finally {
        hub.faults.clear();
      }
    });

  test('a model copied into the cache while the failure waits is used at the next call, no restart', async () => {
    const root = await fresh();
    hub.faults.set('tokenizer.json', { status: 500 });
    try {
      const embedder = createLocalEmbedder({ kind: 'hub', model: tiny }, { hub: hub.url, cacheRoot: root });
      await assert.rejects(embedder.embed('cat'), /HTTP 500/);
      const elsewhere = join(await fresh(), 'model');
      await writeTinyModel(elsewhere);
      await cp(elsewhere, modelFolder(root, tiny), { recursive: true });
      assert.equal((await embedder.embed('cat')).length, TINY_DIM);
      assert.equal(embedder.state().state, 'ready');
      await embedder.close();
    } finally {
      hub.faults.clear();
    }
  });

  test('a model outside the catalog that does not load is refused before the cache keeps it', async () => {
    const root = await fresh();
    const junk = await startFakeHub('someone/junk', 'main', {
      ...files,
      'onnx/model.onnx': Buffer.from('this is not an ONNX model'),
    });
    try {
      const ref = parseLocalModel('someone/junk');
      const embedder = createLocalEmbedder(ref, { hub: junk.url, cacheRoot: root });
      await assert.rejects(embedder.embed('cat'), (error: Error) => {
        assert.match(
          error.message,
          /the model does not load: someone\/junk at main from http:\/\/127\.0\.0\.1:\d+ does not load as a model \(.+\): nothing was kept in the cache/,
        );
        return true;
      });
      assert.equal(embedder.state().cause, 'invalid');
      const kept = (await readdir(root, { recursive: true })).map(String);
      assert.deepEqual(kept, ['someone--junk'], `nothing of the junk model stays: ${kept.join(', ')}`);
      await embedder.close();
    } finally {
      await junk.close();
    }
  });
});

test('local:ORG/NAME: creating a collection with an explicit dim asks no hub; status and instructions tell failed from fetching', async () => {
  const undo = refuseOtherHosts();
  const hub = await startFakeHub('someone/unfetched', 'main', files);
  const root = await mkdtemp(join(tmpdir(), 'arkivector-failures-'));
  const generation = await startGeneration('dbchain');
  try {
    hub.faults.set('onnx/model.onnx', { status: 403 });
    const embedder = createLocalEmbedder(parseLocalModel('someone/unfetched'), { hub: hub.url, cacheRoot: root });
    const ctx = { ...generation.ctx, embedder };
    const created = await createCollection(ctx, { name: 'notes', dim: TINY_DIM, metric: 'cosine', wait: 'receipt' });
    assert.deepEqual(created.embedder, { model: 'someone/unfetched', dim: TINY_DIM });
    assert.deepEqual(hub.requests, [], 'the hub was not asked');

    const fetching = instructionsFor(ctx);
    assert.match(fetching, /fetched once from the model hub into the local cache/);
    assert.match(
      fetching,
      /being fetched or loaded, text calls answer embedder_unavailable saying so: try again shortly/,
    );
    await assert.rejects(embedder.embed('cat'), /HTTP 403/);
    const failed = instructionsFor(ctx);
    assert.match(
      failed,
      /It has failed: the model hub refused the file: .*HTTP 403; it is not tried again before \d{4}-/,
    );
    assert.match(failed, /use mode "keyword" meanwhile/);
    const answer = await status(ctx);
    assert.equal(answer.embedder?.state, 'failed');
    assert.equal(answer.embedder?.cause, 'refused');
    assert.match(answer.embedder?.retry_at ?? '', /^\d{4}-/);
    assert.match(answer.embedder?.ways_out ?? '', /arkivector model pull someone\/unfetched/);
    await embedder.close();

    const folder = join(root, 'mine');
    await writeTinyModel(folder);
    const local = createLocalEmbedder(parseLocalModel(folder), { hub: 'off', cacheRoot: root });
    assert.match(instructionsFor({ ...ctx, embedder: local }), /read from its folder \(nothing is fetched\)/);
    assert.doesNotMatch(instructionsFor({ ...ctx, embedder: local }), /fetched once/);
    await local.close();
  } finally {
    await generation.close();
    await hub.close();
    undo();
    await rm(root, { recursive: true, force: true });
  }
});

test('closing a ready local embedder (a normal shutdown) is not reported as a failure', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'arkivector-close-'));
  try {
    await writeTinyModel(folder);
    const states: string[] = [];
    const embedder = createLocalEmbedder(parseLocalModel(folder), {
      hub: 'off',
      onState: (s) => states.push(s.state),
    });
    assert.equal((await embedder.embed('cat')).length, TINY_DIM);
    await embedder.close();
    assert.deepEqual(states, ['loading', 'ready'], 'no "failed" (worker exited) at close');
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});

test('an installation without the model runtime says so from the start: failed, no_runtime, nothing fetched, the reinstall as the way out', async () => {
  const undo = refuseOtherHosts();
  const hub = await startFakeHub('someone/unfetched', 'main', files);
  const root = await mkdtemp(join(tmpdir(), 'arkivector-noruntime-'));
  const generation = await startGeneration('dbchain');
  try {
    const states: string[] = [];
    // A package name no installation has: the same resolution failure as an install that dropped
    // onnxruntime-node (an optional dependency whose install step failed).
    const embedder = createLocalEmbedder(parseLocalModel('someone/unfetched'), {
      hub: hub.url,
      cacheRoot: root,
      runtimePackages: ['onnxruntime-node', 'arkivector-test-absent-runtime'],
      onState: (s) => states.push(s.state),
    });
    const ctx = { ...generation.ctx, embedder };
    await assert.rejects(embedder.ready(), /arkivector-test-absent-runtime cannot be found/);
    assert.deepEqual(states, ['failed'], 'failed at creation, before any text call, never fetching');
    const answer = await status(ctx);
    assert.equal(answer.embedder?.state, 'failed');
    assert.equal(answer.embedder?.cause, 'no_runtime');
    assert.match(answer.embedder?.error ?? '', /the packages that run a local model are not installed/);
    assert.match(
      answer.embedder?.ways_out ?? '',
      /ONNXRUNTIME_NODE_INSTALL=skip npm install -g \.\/arkivector-[\d.]+\.tgz/,
    );
    assert.match(answer.embedder?.ways_out ?? '', /mode "keyword"/);
    assert.match(instructionsFor(ctx), /It has failed: the packages that run a local model are not installed/);
    await assert.rejects(embedder.embed('cat'), /not installed/);
    assert.deepEqual(hub.requests, [], 'the hub was never asked');
    await embedder.close();
  } finally {
    await generation.close();
    await hub.close();
    undo();
    await rm(root, { recursive: true, force: true });
  }
});
