// The console's search box on a text collection (its definition records an embedding model, so the node
// embeds the query text): it searches by text by default, semantically when the node's embedder can
// answer; when it cannot (failed, still fetching, no embedder at all, or another model than the
// collection's), it offers keyword search only and says in one line why, with the ways out that
// GET /v1/status gives. Real parts: a devnet, a loopback embeddings server, a local embedder whose
// runtime is missing, Debian's Chromium.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { createEmbedder, createLocalEmbedder, parseLocalModel } from '../../src/embedder/index.ts';
import type { Embedder } from '../../src/embedder/index.ts';
import { walletClient } from '../helpers/devnet.ts';
import { startEmbedder, type EmbedderFixture } from '../helpers/embedder.ts';
import { call, definitionArgs, NOTE_ENTITIES, NOTES, startChain, vectorArgs, type Chain } from '../http/fixture.ts';
import { launchBrowser, noBrowser, watchPage, type Browser } from './browser.ts';

/** The model the text collection records; the loopback server embeds any model name in the notes' 4-d space. */
const MODEL = 'someone/memo-model';
const MEMO: CollectionDefinition = { ...NOTES, embedder: { model: MODEL, dim: NOTES.dim } };
const WAIT = { timeout: 60_000 };

describe('console: the search box of a text collection', { skip: noBrowser }, () => {
  let chain: Chain;
  let server: EmbedderFixture;
  let browser: Browser;
  let cacheRoot: string;
  const embedders: Embedder[] = [];
  const urls = { ready: '', failed: '', down: '', none: '', other: '' };

  before(async () => {
    chain = await startChain();
    await walletClient(chain.devnet, 1).mutateEntities({
      creates: [definitionArgs('memo', MEMO), ...NOTE_ENTITIES.map((e) => vectorArgs('memo', e, MEMO))],
    });
    assert.ok(await chain.indexer.waitForBlock(chain.devnet.headNumber, 30_000), 'indexer did not reach the head');
    server = await startEmbedder();
    cacheRoot = await mkdtemp(join(tmpdir(), 'arkivector-console-text-'));
    const ready = createEmbedder({ url: server.url, model: MODEL });
    // An installation that dropped the model runtime: failed from the start, with its cause and ways out.
    const failed = createLocalEmbedder(parseLocalModel(MODEL), {
      hub: 'off',
      cacheRoot,
      runtimePackages: ['arkivector-test-absent-runtime'],
    });
    await assert.rejects(failed.ready());
    const other = createEmbedder({ url: server.url, model: 'someone/other-model' });
    // An embeddings server that stopped: its last call failed, refused.
    const stopped = await startEmbedder();
    await stopped.close();
    const down = createEmbedder({ url: stopped.url, model: MODEL, maxAttempts: 1 });
    await assert.rejects(down.embed('cat'));
    embedders.push(ready, failed, other, down);
    urls.ready = (await chain.node({ ctx: { embedder: ready } })).url;
    urls.failed = (await chain.node({ ctx: { embedder: failed } })).url;
    urls.none = (await chain.node()).url;
    urls.other = (await chain.node({ ctx: { embedder: other } })).url;
    urls.down = (await chain.node({ ctx: { embedder: down } })).url;
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await chain?.close();
    await server?.close();
    for (const e of embedders) await (e as { close?: () => Promise<void> }).close?.();
    if (cacheRoot) await rm(cacheRoot, { recursive: true, force: true });
  });

  /** The collection page's search box: the chosen kind, which kinds are offered, and the reason line. */
  async function openBox(url: string, collection = 'memo') {
    const page = await browser.context.newPage();
    const problems = watchPage(page);
    await page.goto(`${url}/#/collections/${collection}`);
    await page.locator('form.search select[name=kind]').waitFor(WAIT);
    const enabled = async (mode: string) =>
      !(await page.locator(`select[name=kind] option[value=${mode}]`).isDisabled());
    const reason = page.locator('form.search [data-field=semantic-unavailable]');
    return {
      page,
      problems,
      kind: () => page.locator('select[name=kind]').inputValue(),
      offered: async () => ({
        keyword: await enabled('keyword'),
        semantic: await enabled('semantic'),
        hybrid: await enabled('hybrid'),
      }),
      reason,
      search: async (query: string) => {
        await page.fill('form.search textarea[name=query]', query);
        await page.click('form.search button[type=submit]');
        await page.locator('[data-field=answer]').waitFor(WAIT);
        return {
          // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the rendered text
          answer: await page.locator('[data-field=answer]').innerText(),
          ids: await page.locator('[data-result] [data-field=id]').allInnerTexts(),
        };
      },
    };
  }

  test('with a working embedder it searches by meaning by default, and says nothing is unavailable', async () => {
    const box = await openBox(urls.ready);
    assert.equal(await box.kind(), 'semantic');
    assert.deepEqual(await box.offered(), { keyword: true, semantic: true, hybrid: true });
    assert.ok(await box.reason.isHidden(), 'no line says semantic is unavailable');
    const found = await box.search('my cat');
    assert.match(found.answer, /mode semantic /);
    assert.equal(found.ids[0], 'cat');
    assert.deepEqual(box.problems, { failedRequests: [], badResponses: [], console: [], pageErrors: [] });
    await box.page.close();
  });

  test('a collection without a recorded model still opens on a vector query', async () => {
    const box = await openBox(urls.ready, 'notes');
    assert.equal(await box.kind(), 'vector');
    await box.page.close();
  });

  test("with a failed embedder it offers keyword only, and one line gives the status's cause and ways out", async () => {
    const box = await openBox(urls.failed);
    const embedder = (await call(`${urls.failed}/v1/status`)).body.embedder;
    assert.equal(embedder.state, 'failed');
    assert.equal(embedder.cause, 'no_runtime');
    assert.equal(await box.kind(), 'keyword');
    assert.deepEqual(await box.offered(), { keyword: true, semantic: false, hybrid: false });
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the rendered text
    const line = await box.reason.innerText(WAIT);
    assert.doesNotMatch(line, /\n/, 'one line');
    assert.ok(line.includes(embedder.error), line);
    assert.ok(line.includes(embedder.ways_out), line);
    assert.match(line, /ONNXRUNTIME_NODE_INSTALL=skip/);
    assert.match(line, /mode "keyword"/);
    const found = await box.search('purr');
    assert.match(found.answer, /mode keyword /);
    assert.deepEqual(found.ids, ['cat']);
    assert.deepEqual(box.problems, { failedRequests: [], badResponses: [], console: [], pageErrors: [] });
    await box.page.close();
  });

  test('on a node without an embedder, with another model than the collection, or whose server is down, keyword only and why', async () => {
    for (const [url, why] of [
      [
        urls.down,
        /has failed: .*connection refused.*Ways out: check the embeddings server at http:\/\/127\.0\.0\.1:\d+\/…/,
      ],
      [urls.none, /no embedder.*--embedder/],
      [urls.other, new RegExp(`embedded with ${MODEL}.*someone/other-model`)],
    ] as const) {
      const box = await openBox(url);
      assert.equal(await box.kind(), 'keyword', url);
      assert.deepEqual(await box.offered(), { keyword: true, semantic: false, hybrid: false });
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the rendered text
      const line = await box.reason.innerText(WAIT);
      assert.match(line, why);
      assert.doesNotMatch(line, /\n/, 'one line');
      assert.deepEqual(box.problems, { failedRequests: [], badResponses: [], console: [], pageErrors: [] });
      await box.page.close();
    }
  });
});
