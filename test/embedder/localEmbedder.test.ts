// The local embedder's real loading code, offline: the tiny model generated here (test/helpers/tinyModel.ts)
// served by a loopback fake hub, with this process refusing every other host. A fetch lands in the cache
// whole or not at all (404, 500, a stalled transfer, a wrong hash, a redirect elsewhere: each the
// documented error, no file left), the cached folder is used without the hub, a folder path loads with no
// fetch, and the vectors are the model's mean-pooled, normalised token embeddings.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { CatalogModel } from '../../src/embedder/local/catalog.ts';
import {
  createLocalEmbedder,
  ensureModel,
  ModelFetchError,
  modelFolder,
  parseLocalModel,
} from '../../src/embedder/local/index.ts';
import { recordedHashes, redirectTarget } from '../../src/embedder/local/modelCache.ts';
import { defined } from '../helpers/defined.ts';
import { type FakeHub, refuseOtherHosts, startFakeHub } from '../helpers/fakeHub.ts';
import {
  TINY_DIM,
  TINY_TOPICS,
  tinyExpectedVector,
  tinyModelFiles,
  tinyModelHashes,
  writeTinyModel,
} from '../helpers/tinyModel.ts';

const REVISION = '0123456789abcdef0123456789abcdef01234567';
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

const execFileAsync = promisify(execFile);
// How long a transfer may be silent in these tests: long beside a loopback file of 34 KB on a loaded machine
// (300 ms could stall the files before the faulty one under load), short enough for the stall case.
const STALL_MS = 2000;
const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0);

describe('local embedder: fetching the model from a hub', () => {
  let hub: FakeHub;
  let root: string;
  let undo: () => void;

  before(async () => {
    undo = refuseOtherHosts();
    hub = await startFakeHub(tiny.repo, REVISION, files);
  });
  after(async () => {
    await hub?.close();
    undo?.();
  });

  const fresh = async () => {
    root = await mkdtemp(join(tmpdir(), 'arkivector-models-'));
    return root;
  };
  /** Everything under the cache root, as relative paths. */
  const cacheContents = async () => (await readdir(root, { recursive: true })).map(String).sort();

  for (const [name, fault, expected] of [
    ['404', { status: 404 }, /tokenizer\.json from http:\/\/127\.0\.0\.1:\d+\/\S+: HTTP 404/],
    ['500', { status: 500 }, /HTTP 500/],
    ['a stalled transfer', { silent: true }, /no data for 2000 ms/],
    [
      'a wrong hash',
      { body: Buffer.from('{"not": "the pinned file"}') },
      /sha256 [0-9a-f]{64}, expected [0-9a-f]{64}: refused/,
    ],
    [
      'a redirect to another host',
      { redirect: 'http://hub.example.invalid/x' },
      /the test refuses hub\.example\.invalid/,
    ],
    ['redirects in a loop', { redirect: 'tokenizer.json' }, /more than 5 redirects/],
  ] as const) {
    test(`${name}: the documented error, and nothing of the model stays in the cache`, async () => {
      await fresh();
      hub.faults.set('tokenizer.json', fault);
      try {
        await assert.rejects(ensureModel(tiny, { root, hub: hub.url, idleTimeoutMs: STALL_MS }), (error: Error) => {
          assert.ok(error instanceof ModelFetchError, error.stack);
          assert.match(error.message, expected);
          return true;
        });
        assert.deepEqual(await cacheContents(), ['arkivector-test--tiny'], 'no model folder, no partial files');
        // The embedder says why in its embedder_unavailable answer.
        const embedder = createLocalEmbedder(
          { kind: 'hub', model: tiny },
          {
            hub: hub.url,
            cacheRoot: root,
            idleTimeoutMs: STALL_MS,
          },
        );
        await assert.rejects(embedder.embed('a cat'), (error: Error & { code?: string }) => {
          assert.equal(error.code, 'embedder_unavailable');
          assert.match(error.message, /cannot load tiny: /);
          assert.match(error.message, expected);
          return true;
        });
        assert.equal(embedder.state().state, 'failed');
        await embedder.close();
      } finally {
        hub.faults.clear();
        await rm(root, { recursive: true, force: true });
      }
    });
  }

  test('a whole fetch lands in the cache, reports progress, and later starts need no hub', async () => {
    await fresh();
    try {
      const progress: string[] = [];
      const before = hub.requests.length;
      const embedder = createLocalEmbedder(
        { kind: 'hub', model: tiny },
        { hub: hub.url, cacheRoot: root, onProgress: (p) => progress.push(p.file) },
      );
      assert.equal(embedder.state().state, 'idle', 'nothing is fetched before the first text call');
      assert.equal(await embedder.dimension?.(), TINY_DIM, 'the catalog knows the dimension before the fetch');
      assert.equal(hub.requests.length, before);
      const vector = await embedder.embed('cat');
      assert.deepEqual(
        vector.map((x) => x.toFixed(5)),
        tinyExpectedVector(['cat']).map((x) => x.toFixed(5)),
      );
      assert.deepEqual(embedder.state(), {
        state: 'ready',
        source: `${tiny.repo}@${REVISION.slice(0, 12)} from ${hub.url}`,
        dim: TINY_DIM,
      });
      assert.deepEqual([...new Set(progress)].sort(), Object.keys(files).sort());
      const folder = modelFolder(root, tiny);
      for (const [path, body] of Object.entries(files))
        assert.deepEqual(await readFile(join(folder, path)), body, path);
      await embedder.close();

      const requested = hub.requests.length;
      const again = createLocalEmbedder({ kind: 'hub', model: tiny }, { hub: 'off', cacheRoot: root });
      assert.equal((await again.embed('cat')).length, TINY_DIM);
      assert.equal(hub.requests.length, requested, 'the cached folder is used without the hub');
      await again.close();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  test("two nodes sharing a cache: the one that finishes second keeps the first one's folder (it may be loading it)", async () => {
    await fresh();
    const slow = await startFakeHub(tiny.repo, REVISION, files);
    const last = defined(Object.keys(tiny.files).at(-1), 'the last model file');
    let release = () => {};
    let reached = () => {};
    const arrived = new Promise<void>((resolve) => {
      reached = resolve;
    });
    slow.faults.set(last, { hold: { until: new Promise<void>((resolve) => (release = resolve)), reached } });
    try {
      const second = ensureModel(tiny, { root, hub: slow.url, idleTimeoutMs: STALL_MS * 10 });
      await arrived;
      const folder = await ensureModel(tiny, { root, hub: hub.url });
      const first = await stat(join(folder, 'onnx', 'model.onnx'));
      release();
      assert.equal(await second, folder);
      assert.equal(
        (await stat(join(folder, 'onnx', 'model.onnx'))).ino,
        first.ino,
        'the folder was replaced under its reader',
      );
      assert.ok(!(await cacheContents()).some((p) => p.includes('.partial-')), 'a staging folder stayed behind');
    } finally {
      release();
      await slow.close();
    }
  });

  test("staging left by a node killed mid-fetch is removed at the next fetch; a live node's is kept", async () => {
    await fresh();
    const dead = spawnSync(process.execPath, ['-e', '0']).pid as number;
    const folder = modelFolder(root, tiny);
    const killed = `${folder}.partial-${dead}-0badf00d`;
    const live = `${folder}.partial-${process.pid}-00c0ffee`;
    await mkdir(join(killed, 'onnx'), { recursive: true });
    await writeFile(join(killed, 'onnx', 'model.onnx'), 'half a model');
    await mkdir(live, { recursive: true });
    await ensureModel(tiny, { root, hub: hub.url });
    const left = await readdir(dirname(folder));
    assert.ok(!left.includes(basename(killed)), `the dead fetch's staging stayed: ${left.join(', ')}`);
    assert.ok(left.includes(basename(live)), 'a live fetch lost its staging folder');
    await rm(live, { recursive: true });
  });

  test('a file over the size cap is refused while it streams, and nothing stays in the cache', async () => {
    await fresh();
    hub.faults.set('tokenizer.json', { body: Buffer.alloc(300_000, 0x20) });
    try {
      await assert.rejects(
        ensureModel(tiny, { root, hub: hub.url, maxFileBytes: 100_000 }),
        /tokenizer\.json from \S+: 300000 bytes, more than the 100000 a model file may have/,
      );
      assert.deepEqual(await cacheContents(), ['arkivector-test--tiny'], 'no model folder, no partial files');
    } finally {
      hub.faults.delete('tokenizer.json');
    }
  });

  test('a model not in the catalog is fetched at main and its hashes are recorded', async () => {
    await fresh();
    const mainHub = await startFakeHub('someone/tiny-e5-small', 'main', files);
    try {
      const ref = parseLocalModel('someone/tiny-e5-small');
      assert.equal(ref.kind, 'hub');
      if (ref.kind !== 'hub') return;
      assert.deepEqual([ref.model.queryPrefix, ref.model.passagePrefix], ['query: ', 'passage: ']);
      const folder = await ensureModel(ref.model, { root, hub: mainHub.url });
      const { 'special_tokens_map.json': _, ...required } = tinyModelHashes(files);
      assert.deepEqual(await recordedHashes(folder), required);
    } finally {
      await mainHub.close();
      await rm(root, { recursive: true, force: true });
    }
  });

  test('arkivector model pull: the folder on stdout, progress on stderr; a failed pull leaves nothing', async () => {
    await fresh();
    const pullHub = await startFakeHub('someone/tiny-pull', 'main', files);
    // The child's only host is the loopback hub: the model is not in the catalog, no other URL is built.
    const pull = (name: string) =>
      execFileAsync(process.execPath, ['bin/arkivector.js', 'model', 'pull', name], {
        env: { ...process.env, XDG_CACHE_HOME: root, ARKIVECTOR_MODEL_HUB: pullHub.url },
      });
    try {
      const { stdout, stderr } = await pull('someone/tiny-pull');
      const folder = join(root, 'arkivector', 'models', 'someone--tiny-pull', 'main');
      assert.equal(stdout, `${folder}\n`);
      assert.match(stderr, /someone\/tiny-pull: onnx\/model\.onnx [\d.]+ of [\d.]+ MB/);
      assert.deepEqual(await readFile(join(folder, 'tokenizer.json')), files['tokenizer.json']);
      // A repository the hub does not have: 404 on its first file.
      await assert.rejects(pull('someone/tiny-missing'), (error: Error & { code?: number; stderr?: string }) => {
        assert.equal(error.code, 1);
        assert.match(
          error.stderr ?? '',
          /someone\/tiny-missing\/onnx\/model\.onnx from http:\/\/127\.0\.0\.1:\d+\/\S+: HTTP 404/,
        );
        return true;
      });
      assert.deepEqual(
        (await cacheContents()).filter((p) => p.includes('tiny-missing')),
        ['arkivector/models/someone--tiny-missing'],
      );
    } finally {
      await pullHub.close();
      await rm(root, { recursive: true, force: true });
    }
  });

  test('fetching off: a model not in the cache is unavailable, saying how to get it', async () => {
    await fresh();
    try {
      const requested = hub.requests.length;
      const embedder = createLocalEmbedder({ kind: 'hub', model: tiny }, { hub: 'off', cacheRoot: root });
      await assert.rejects(embedder.embed('cat'), /not in the cache .* fetching is off .*arkivector model pull tiny/);
      assert.equal(hub.requests.length, requested, 'nothing was asked of a hub');
      assert.deepEqual(await cacheContents(), []);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

test('local:SPEC names a folder inside the cache and a file route of its own repository, or is refused', () => {
  const root = join(tmpdir(), 'arkivector-models-root');
  const spec = fc.oneof(
    fc.constantFrom('a/..', 'a/.', '../a', './a', '..', 'a/...', '.a/b', 'a/b/c', '~', '~/m', 'org/name', '/abs'),
    fc.stringMatching(/^[a-z./~_-]{1,8}$/),
  );
  fc.assert(
    fc.property(spec, (s) => {
      let ref: ReturnType<typeof parseLocalModel>;
      try {
        ref = parseLocalModel(s);
      } catch {
        return;
      }
      if (ref.kind === 'path') return; // the user's own folder, by design
      const folder = modelFolder(root, ref.model);
      const inside = relative(root, folder).split('/');
      assert.ok(inside[0] !== '..' && inside[0] !== '' && folder.startsWith(`${root}/`), `${s} → ${folder}`);
      const route = new URL(`http://127.0.0.1/${ref.model.repo}/resolve/${ref.model.revision}/config.json`).pathname;
      assert.equal(route, `/${ref.model.repo}/resolve/${ref.model.revision}/config.json`, `${s} fetches ${route}`);
    }),
    { numRuns: 500 },
  );
});

describe('local embedder: a model folder by path', () => {
  let dir: string;
  before(async () => {
    dir = await writeTinyModel(await mkdtemp(join(tmpdir(), 'arkivector-tiny-model-')));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('loads with no fetch; related texts are near, vectors are normalised, batches keep input order', async () => {
    const embedder = createLocalEmbedder(parseLocalModel(dir, 'tiny-test-model'), { hub: 'off', maxBatch: 2 });
    try {
      assert.equal(embedder.model, 'tiny-test-model');
      const texts = [
        'The user has a cat called Miso.',
        'Water the fern every Sunday.',
        'The user works as a translator.',
      ];
      const stored = await embedder.embedMany(texts);
      assert.equal(stored.length, 3);
      for (const v of stored) assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-6);
      const query = await embedder.embed("What is my cat's name?");
      const ranked = stored.map((v, i) => [i, cosine(query, v)] as const).sort((a, b) => b[1] - a[1]);
      assert.equal(ranked[0]?.[0], 0, JSON.stringify(ranked));
      // One batch or three: the same vectors, in input order.
      const one = await Promise.all(texts.map((t) => embedder.embedMany([t])));
      assert.deepEqual(
        one.map(([v]) => v),
        stored,
      );
    } finally {
      await embedder.close();
    }
  });

  test('the event loop stays responsive while a large batch embeds (the model runs in a worker)', async (t) => {
    // One model run of 1,000 texts of 200 words: on the event loop's thread it would block it for the whole
    // batch; the longest gap between 1 ms timer ticks is compared with the batch's own time, not with a
    // fixed number of ms, so a loaded machine slows both alike.
    const words = Object.values(TINY_TOPICS).flat();
    const texts = Array.from({ length: 1000 }, (_, i) =>
      Array.from({ length: 200 }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' '),
    );
    const embedder = createLocalEmbedder(parseLocalModel(dir), { hub: 'off', maxBatch: texts.length });
    try {
      await embedder.embed('warm up');
      let last = performance.now();
      let longest = 0;
      const tick = () => {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
      };
      const timer = setInterval(tick, 1);
      const started = performance.now();
      const vectors = await embedder.embedMany(texts);
      const total = performance.now() - started;
      tick();
      clearInterval(timer);
      t.diagnostic(`batch ${total.toFixed(0)} ms, longest event-loop delay ${longest.toFixed(0)} ms`);
      assert.equal(vectors.length, texts.length);
      assert.ok(total > 100, `the batch took ${total.toFixed(0)} ms: too little work to measure anything`);
      assert.ok(
        longest < total / 4,
        `the longest event-loop delay was ${longest.toFixed(0)} ms while the batch took ${total.toFixed(0)} ms`,
      );
    } finally {
      await embedder.close();
    }
  });

  test('a worker that dies after loading fails only the calls in flight; the next call runs on a new worker', async () => {
    // The worker's heap is capped so one oversized text kills it (V8 ends a worker past its cap, not the
    // process): the crash is real, in the real worker.
    const embedder = createLocalEmbedder(parseLocalModel(dir), { hub: 'off', workerHeapMb: 16 });
    try {
      const before = await embedder.embed('cat');
      assert.equal(embedder.state().state, 'ready');
      const words = Object.values(TINY_TOPICS).flat();
      const huge = Array.from({ length: 1_000_000 }, (_, i) => words[i % words.length]).join(' ');
      await assert.rejects(embedder.embedMany([huge]), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'embedder_unavailable');
        assert.match(error.message, /worker exited/);
        return true;
      });
      assert.equal(embedder.state().state, 'failed');
      assert.deepEqual(await embedder.embed('cat'), before);
      assert.equal(embedder.state().state, 'ready');
    } finally {
      await embedder.close();
    }
  });

  test('a folder without the model files is unavailable, naming what is missing', async () => {
    const embedder = createLocalEmbedder(parseLocalModel(join(dir, 'onnx')), { hub: 'off' });
    await assert.rejects(embedder.embed('cat'), /is not a model folder \(it needs onnx\/model\.onnx/);
    await embedder.close();
  });
});

test('a redirect from an https hub to plain http (or to another scheme) is refused; others resolve as URLs', () => {
  const from = 'https://hub.example/org/model/resolve/main/model.onnx';
  assert.equal(redirectTarget(from, '/files/abc'), 'https://hub.example/files/abc');
  assert.equal(redirectTarget(from, 'https://cdn.example/x?sig=1'), 'https://cdn.example/x?sig=1');
  assert.equal(redirectTarget('http://127.0.0.1:1/a/b', 'https://cdn.example/x'), 'https://cdn.example/x');
  assert.throws(() => redirectTarget(from, 'http://cdn.example/x'), /from https to plain http: refused/);
  assert.throws(() => redirectTarget(from, 'file:///etc/passwd'), /only http and https/);
});
