// The web console (src/console/) in a real browser: Debian's Chromium through playwright-core loads
// every page from a node following the devnet, runs searches, and checks what it shows against the REST
// answers, that no request failed, that nothing was logged, that hostile chain data stays text, and that
// a node with tokens asks for one. Without Chromium the browser tests skip with the reason; the HTTP
// checks of the console's routes always run.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { readdirSync } from 'node:fs';
import { CONSOLE_CSP, CONSOLE_DIR, CONSOLE_FILES } from '../../src/console/index.ts';
import { loadAccessPolicy } from '../../src/http/index.ts';
import type { IndexerView } from '../../src/service/index.ts';
import { INSTALL_COMMANDS, VERSION } from '../../src/packageInfo.ts';
import { walletClient } from '../helpers/devnet.ts';
import {
  assertProblem,
  call,
  definitionArgs,
  NOTES,
  startChain,
  vectorArgs,
  type Chain,
  type Node,
} from '../http/fixture.ts';
import { launchBrowser, noBrowser, watchPage, type Browser } from './browser.ts';

const READ_SECRET = 'console-read-secret-0123';
/** Chain data written to look like markup: the console must show it as text and never run it. */
const HOSTILE = {
  id: 'x<img src=x onerror="window.pwned=1">',
  vector: [0.5, 0.5, 0.5, 0.5],
  document: '<script>window.pwned=2</script><img src=x onerror="window.pwned=3">',
  attributes: { topic: '<b onmouseover="window.pwned=4">bold</b>', stars: 2 },
};
const WAIT = { timeout: 60_000 };

let chain: Chain;
let local: Node;
let guarded: Node;

before(async () => {
  chain = await startChain();
  await walletClient(chain.devnet, 1).createEntity(vectorArgs('notes', HOSTILE));
  assert.ok(await chain.indexer.waitForBlock(chain.devnet.headNumber, 30_000), 'indexer did not reach the head');
  local = await chain.node();
  guarded = await chain.node({
    access: await loadAccessPolicy({ tokensEnv: `read:${READ_SECRET}`, publicRead: false, host: '127.0.0.1' }),
  });
});

after(async () => {
  await chain?.close();
});

describe('console: routes', () => {
  test('GET / serves the console page with a strict CSP, without a token even where tokens are required', async () => {
    for (const node of [local, guarded]) {
      const page = await fetch(`${node.url}/`);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      assert.equal(page.headers.get('content-security-policy'), CONSOLE_CSP);
      assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
      assert.match(await page.text(), /<script type="module" src="\/console\/app.js">/);
    }
    assert.match(CONSOLE_CSP, /script-src 'self';/);
    assert.doesNotMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval/);
  });

  test('only the console files are served under /console/, each file of public/; anything else is not_found', async () => {
    // A browser module missing from the list would be a 404 for its import, and the page would not start.
    assert.deepEqual(Object.keys(CONSOLE_FILES).sort(), readdirSync(CONSOLE_DIR).sort());
    for (const [file, type] of Object.entries(CONSOLE_FILES)) {
      if (file === 'index.html') continue;
      const answer = await fetch(`${local.url}/console/${file}`);
      assert.equal(answer.status, 200, file);
      assert.equal(answer.headers.get('content-type'), type);
      assert.equal(answer.headers.get('content-security-policy'), CONSOLE_CSP);
    }
    for (const path of ['/console/index.ts', '/console/..%2Findex.ts', '/console/%2e%2e%2F%2e%2e%2Fpackage.json'])
      assertProblem(await call(`${local.url}${path}`), 404, 'not_found');
  });

  test('node.json answers under the API access rules: 401 without a token where tokens are required', async () => {
    assertProblem(await call(`${guarded.url}/console/node.json`), 401, 'unauthorized');
    assertProblem(
      await call(`${guarded.url}/console/node.json`, { headers: { authorization: 'Bearer wrong' } }),
      401,
      'unauthorized',
    );
    const ok = await call(`${guarded.url}/console/node.json`, { headers: { authorization: `Bearer ${READ_SECRET}` } });
    assert.deepEqual(ok.body, {
      tokens: true,
      public_read: false,
      embedder: null,
      signer: false,
      version: VERSION,
      install: [...INSTALL_COMMANDS],
      stdio: { command: 'arkivector', args: ['serve', '--stdio', '--rpc', chain.devnet.url] },
      stdio_redacted: false,
    });
    // Trust-local mode keeps its DNS-rebinding checks for the console too.
    assertProblem(
      await call(`${local.url}/console/node.json`, { headers: { origin: 'http://attacker.example' } }),
      403,
      'forbidden',
    );
  });
});

/** Opens the console in a fresh tab; `expectStatus` names the error answers a test provokes. */
async function open(browser: Browser, url: string, expectStatus?: (status: number, url: string) => boolean) {
  const page = await browser.context.newPage();
  const problems = watchPage(page, expectStatus);
  await page.goto(url);
  return { page, problems };
}

// biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText is the rendered text the user sees
const shown = (locator: Locator) => locator.innerText(WAIT);
const text = (page: Page, selector: string) => shown(page.locator(selector).first());

async function assertClean(problems: ReturnType<typeof watchPage>) {
  assert.deepEqual(problems, { failedRequests: [], badResponses: [], console: [], pageErrors: [] });
}

describe('console: in Chromium', { skip: noBrowser }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });

  test('every page shows what the API answers; a search shows its results, as_of_block and search_mode', async () => {
    // The only error answer provoked on purpose is the filter error below.
    const { page, problems } = await open(
      browser,
      `${local.url}/`,
      (status, url) => status === 400 && url.endsWith('/search'),
    );
    const status = (await call(`${local.url}/v1/status`)).body;

    // Overview
    await page.locator('[data-field=as_of_block]').filter({ hasText: /^\d+$/ }).waitFor(WAIT);
    assert.equal(await text(page, '[data-field=chain_id]'), String(status.chain_id));
    // A step slower than three block times (0.2 s blocks, a loaded CI machine) shows `stalled` until the next poll.
    await page
      .locator('[data-field=sync_state]')
      .filter({ hasText: /^live$/ })
      .waitFor(WAIT);
    assert.equal(await text(page, '[data-field=mode]'), 'read-only');
    assert.equal(await text(page, '[data-field=signer]'), 'none');
    assert.match(await text(page, '[data-field=access]'), /local trust/);
    await page.locator('svg.chart polyline.lag').waitFor({ state: 'attached', ...WAIT });

    // Collections
    await page.click('nav a[data-nav=collections]');
    const row = page.locator('tr[data-collection=notes]');
    await row.waitFor(WAIT);
    assert.match(await shown(row), /halfvec\(4\)\s+cosine\s+hnsw halfvec_cosine_ops\s+5\s+0\s+0\s+open$/);

    // One collection: definition and stats
    await row.locator('a').click();
    await page.locator('[data-field=column]').waitFor(WAIT);
    assert.equal(await text(page, '[data-field=column]'), 'halfvec(4)');
    assert.match(await text(page, '[data-field=attributes]'), /stars: i32\s*topic: str/);
    assert.match(await text(page, '[data-field=index]'), /m 16, ef_construction 64, ef_search 40/);
    assert.equal(await text(page, '[data-field=live_entities]'), '5');
    // semantic and hybrid need an embedder this node does not have
    assert.equal(await page.locator('select[name=kind] option[value=semantic]').isDisabled(), true);

    // Search playground: the same answer as the REST API
    const where = "topic = str('pets')";
    await page.fill('textarea[name=query]', '[1, 0, 0, 0]');
    await page.fill('input[name=where]', where);
    await page.fill('input[name=k]', '2');
    await page.click('form.search button[type=submit]');
    await page.locator('[data-field=answer]').waitFor(WAIT);
    const rest = (
      await call(`${local.url}/v1/collections/notes/search`, {
        method: 'POST',
        json: { vector: [1, 0, 0, 0], where, k: 2, include_document: true },
      })
    ).body;
    assert.deepEqual(await page.locator('[data-result] [data-field=id]').allInnerTexts(), ['cat', 'dog']);
    assert.deepEqual(
      rest.results.map((r: { id: string }) => r.id),
      ['cat', 'dog'],
    );
    assert.deepEqual(await page.locator('[data-result] [data-field=document]').allInnerTexts(), [
      'Cats purr.',
      'Dogs bark.',
    ]);
    const answer = await text(page, '[data-field=answer]');
    assert.match(answer, new RegExp(`as_of_block ${rest.as_of_block} `));
    assert.match(answer, /mode vector · search_mode exact · 2 result\(s\)/);
    assert.match(await text(page, '[data-result="0"]'), new RegExp(rest.results[0].score.toFixed(4)));

    // A filter error is shown at its position
    await page.fill('input[name=where]', 'topic = = 3');
    await page.click('form.search button[type=submit]');
    const caret = await text(page, '[data-field=filter-error]');
    assert.equal(caret, `topic = = 3\n${' '.repeat(8)}^ position 8`);

    // The entity page of the first result
    await page.fill('input[name=where]', where);
    await page.click('form.search button[type=submit]');
    await page.locator('[data-field=answer]').waitFor(WAIT);
    await page.locator('[data-result="0"] a').click();
    await page.locator('[data-field=owner]').waitFor(WAIT);
    const entity = (await call(`${local.url}/v1/collections/notes/entities/cat`)).body.entity;
    assert.equal(await text(page, '[data-field=key]'), entity.key);
    assert.equal(await text(page, '[data-field=owner]'), entity.owner);
    assert.equal(await text(page, '[data-field=expires_at_block]'), String(entity.expires_at_block));
    assert.equal(await text(page, '[data-field=document]'), 'Cats purr.');

    // MCP client snippets for this node, without a token header (no tokens here)
    await page.click('nav a[data-nav=connect]');
    // The page renders once node.json has answered: its snippets come all at once.
    await page.locator('pre.snippet').first().waitFor(WAIT);
    const snippets = (await page.locator('pre.snippet').allInnerTexts()).join('\n');
    assert.match(snippets, new RegExp(`claude mcp add --transport http arkivector ${local.url}/mcp\\n`));
    assert.match(snippets, /"mcp-remote"/);
    assert.doesNotMatch(snippets, /Authorization/);
    // The stdio entry is the node's own (node.json), and the install line is the README's npm pack route.
    const node = (await call(`${local.url}/console/node.json`)).body;
    assert.ok(snippets.includes(JSON.stringify({ mcpServers: { arkivector: node.stdio } }, null, 2)), snippets);
    assert.equal(await text(page, '[data-field=install]'), INSTALL_COMMANDS.join(' && '));
    assert.doesNotMatch(await shown(page.locator('main')), /npm install -g arkivector/);

    await assertClean(problems);
    await page.close();
  });

  test("a collection's page lists its entities (what did my agent remember?), newest first, as the API does", async () => {
    const { page, problems } = await open(browser, `${local.url}/#/collections/notes`);
    const rows = page.locator('[data-entity]');
    await rows.first().waitFor(WAIT);
    const rest = (await call(`${local.url}/v1/collections/notes/entities?include_document=true&limit=20`)).body;
    assert.deepEqual(
      await page.locator('[data-entity] [data-field=id]').allInnerTexts(),
      rest.entities.map((e: { id: string }) => e.id),
    );
    assert.deepEqual(
      await page.locator('[data-entity] [data-field=document]').allInnerTexts(),
      rest.entities.map((e: { document: string }) => e.document),
    );
    assert.match(await text(page, '[data-field=entities-meta]'), new RegExp(`${rest.total} entities`));
    // A where filter narrows the list through the same REST route.
    await page.fill('form.entities input[name=where]', "topic = str('plants')");
    await page.click('form.entities button[type=submit]');
    // The unfiltered list holds fern too: wait for the list to be the filtered one (one row), not for fern.
    await rows.nth(1).waitFor({ state: 'detached', ...WAIT });
    await rows.filter({ hasText: 'fern' }).waitFor(WAIT);
    assert.deepEqual(await page.locator('[data-entity] [data-field=id]').allInnerTexts(), ['fern']);
    // The filter examples name this collection's own attributes, with literals of their declared types.
    for (const selector of ['form.search input[name=where]', 'form.entities input[name=where]'])
      assert.match((await page.getAttribute(selector, 'placeholder')) ?? '', /^stars >= 1 && topic = str\('…'\)$/);
    assert.match((await page.getAttribute('form.search textarea[name=filter]', 'placeholder')) ?? '', /"stars"/);
    await assertClean(problems);
    await page.close();
  });

  test('a collection without attributes does not suggest attributes it lacks', async () => {
    await walletClient(chain.devnet, 1).createEntity(definitionArgs('bare', { ...NOTES, attributes: {} }));
    assert.ok(await chain.indexer.waitForBlock(chain.devnet.headNumber, 30_000));
    const { page, problems } = await open(browser, `${local.url}/#/collections/bare`);
    await page.locator('form.search').waitFor(WAIT);
    const placeholders = [
      await page.getAttribute('form.search input[name=where]', 'placeholder'),
      await page.getAttribute('form.search textarea[name=filter]', 'placeholder'),
    ].join(' ');
    assert.doesNotMatch(placeholders, /topic|stars/);
    await assertClean(problems);
    await page.close();
  });

  test("the overview shows the node's recall estimate per collection as /v1/status reports it", async () => {
    // More than 10 records: a collection the estimate covers (small enough to be scanned exactly).
    await walletClient(chain.devnet, 2).mutateEntities({
      creates: [
        definitionArgs('recall', NOTES),
        ...Array.from({ length: 12 }, (_, i) =>
          vectorArgs('recall', {
            id: `r${i}`,
            vector: [1, i / 12, 0, 0],
            document: '',
            attributes: { topic: 'r', stars: i },
          }),
        ),
      ],
    });
    assert.ok(await chain.indexer.waitForBlock(chain.devnet.headNumber, 30_000));
    const { page, problems } = await open(browser, `${local.url}/`);
    const row = page.locator('tr[data-recall=recall]');
    await row.waitFor(WAIT);
    const reported = (await call(`${local.url}/v1/status`)).body.recall as {
      collection: string;
      records: number;
      recall_at_10: number;
      search_mode: string;
    }[];
    const mine = reported.find((r) => r.collection === 'recall');
    assert.ok(mine, 'the status reports the collection');
    assert.match(
      await shown(row),
      new RegExp(`^recall\\s+${mine.records}\\s+${mine.recall_at_10.toFixed(3)}\\s+${mine.search_mode}\\b`),
    );
    await assertClean(problems);
    await page.close();
  });

  test('the collection list shows a page at a time, and More appends the next page as the API answers it', async () => {
    // Names after "notes", so the first page still shows it; 100 definitions in one transaction.
    await walletClient(chain.devnet, 2).mutateEntities({
      creates: Array.from({ length: 100 }, (_, i) => definitionArgs(`page-${String(i).padStart(3, '0')}`, NOTES)),
    });
    assert.ok(await chain.indexer.waitForBlock(chain.devnet.headNumber, 30_000));
    const first = (await call(`${local.url}/v1/collections?limit=100`)).body;
    assert.ok(first.next_cursor, 'more than one page on the node');
    const second = (await call(`${local.url}/v1/collections?limit=100&cursor=${first.next_cursor}`)).body;
    const names = [...first.collections, ...second.collections].map((c: { name: string }) => c.name);
    assert.equal(names.length, first.total);

    const { page, problems } = await open(browser, `${local.url}/#/collections`);
    const rows = page.locator('tr[data-collection]');
    await page.locator('tr[data-collection=notes]').waitFor(WAIT);
    assert.equal(await rows.count(), first.collections.length);
    assert.match(
      await text(page, '[data-field=collections-meta]'),
      new RegExp(`^${first.collections.length} of ${first.total} `),
    );
    await page.click('[data-field=collections-more]');
    await page.locator(`tr[data-collection="${names.at(-1)}"]`).waitFor(WAIT);
    assert.deepEqual(await rows.evaluateAll((list) => list.map((r) => r.getAttribute('data-collection'))), names);
    assert.ok(await page.locator('[data-field=collections-more]').isHidden());
    assert.match(await text(page, '[data-field=collections-meta]'), new RegExp(`^${first.total} of ${first.total} `));
    await assertClean(problems);
    await page.close();
  });

  test('at 390 px (a phone) no page is wider than the screen: the header wraps', async () => {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    const problems = watchPage(page);
    for (const [hash, ready] of [
      ['#/', '[data-field=as_of_block]'],
      ['#/collections', 'tr[data-collection=notes]'],
      ['#/collections/notes', '[data-entity]'],
      ['#/connect', 'pre.snippet'],
    ] as const) {
      await page.goto(`${local.url}/${hash}`);
      await page.locator(ready).first().waitFor(WAIT);
      // Evaluated in the page (a string: this suite is compiled without the DOM's types).
      const widths = (await page.evaluate(
        '({ page: document.documentElement.scrollWidth, header: document.querySelector("header").scrollWidth, viewport: window.innerWidth })',
      )) as { page: number; header: number; viewport: number };
      assert.ok(widths.page <= widths.viewport, `${hash}: the page is ${widths.page} px wide at ${widths.viewport}`);
      assert.ok(widths.header <= widths.viewport, `${hash}: the header is ${widths.header} px wide`);
    }
    await assertClean(problems);
    await page.close();
  });

  test('a rate-limited node says so beside its sync state, and shows the call budget it paces itself to', async () => {
    const limited = await chain.node({
      ctx: {
        chain: { chainId: chain.devnet.chainId, rpc: chain.devnet.url, rateLimited: () => true, callsPerHour: 40 },
      },
    });
    const { page, problems } = await open(browser, `${limited.url}/`);
    await page.locator('[data-field=rate_limited]').waitFor(WAIT);
    assert.match(await text(page, '[data-field=rate_limited]'), /throttled, not down/);
    assert.match(await text(page, '[data-field=rpc_budget]'), /^40 calls an hour/);
    assert.match(await text(page, '#sync'), /· rate limited$/);
    await assertClean(problems);
    await page.close();
    // The node that is not limited shows neither.
    const { page: plain } = await open(browser, `${local.url}/`);
    await plain.locator('[data-field=sync_state]').waitFor(WAIT);
    assert.equal(await plain.locator('[data-field=rate_limited]').count(), 0);
    assert.equal(await plain.locator('[data-field=rpc_budget]').count(), 0);
    await plain.close();
  });

  test('the overview says when the head was last read, and a bootstrap paced to its budget its pages and next call', async () => {
    const { page: plain, problems: plainProblems } = await open(browser, `${local.url}/`);
    await plain.locator('[data-field=head_seen_at]').waitFor(WAIT);
    assert.match(await text(plain, '[data-field=head_seen_at]'), /^\d{1,2}:\d\d:\d\d.* \(\d+ s ago\)$/);
    assert.equal(await plain.locator('[data-field=bootstrap]').count(), 0);
    await assertClean(plainProblems);
    await plain.close();
    // The facts of a node in the middle of a paced bootstrap, as its indexer reports them to status.
    const real = chain.ctx.indexer;
    const pacedUntil = Date.now() + 90_000;
    const indexer: IndexerView = {
      asOfBlock: undefined,
      headBlock: real.headBlock,
      headSeenAt: real.headSeenAt,
      syncState: 'starting',
      lastError: undefined,
      collections: new Map(),
      pacedUntil,
      bootstrapProgress: { block: 7, pages: 12, entities: 2_345, startedAt: Date.now() - 60_000 },
      waitForBlock: async () => false,
    };
    const booting = await chain.node({ ctx: { indexer, chain: { ...chain.ctx.chain, callsPerHour: 40 } } });
    const { page, problems } = await open(browser, `${booting.url}/`);
    await page.locator('[data-field=bootstrap]').waitFor(WAIT);
    assert.equal(await text(page, '[data-field=bootstrap]'), 'at block 7: 2,345 entities in 12 pages so far');
    assert.match(await text(page, '[data-field=rpc_budget]'), /^40 calls an hour; next call at /);
    await assertClean(problems);
    await page.close();
  });

  test('a malformed percent-escape in the hash route shows "Not found", with no uncaught error', async () => {
    const { page, problems } = await open(browser, `${local.url}/#/collections/%E0%A4%A`);
    await page.locator('body[data-page=missing]').waitFor(WAIT);
    assert.equal(await text(page, 'h1'), 'Not found');
    await assertClean(problems);
    await page.close();
  });

  test('hostile chain data is shown as text and never runs', async () => {
    const { page, problems } = await open(browser, `${local.url}/#/collections/notes`);
    await page.fill('textarea[name=query]', '0.5, 0.5, 0.5, 0.5');
    await page.click('form.search button[type=submit]');
    const row = page.locator('[data-result="0"]');
    await row.waitFor(WAIT);
    assert.equal(await shown(row.locator('[data-field=id]')), HOSTILE.id);
    assert.equal(await shown(row.locator('[data-field=document]')), HOSTILE.document);
    assert.match(await shown(row), /topic="<b onmouseover/);
    await row.locator('a').click();
    // The collection page (its results and entity list have document cells too) stays until the entity
    // page has rendered: wait for that page, not for any document cell.
    await page.locator('body[data-page=entity] [data-field=document]').waitFor(WAIT);
    assert.equal(await text(page, '[data-field=document]'), HOSTILE.document);
    assert.equal(await text(page, 'h1'), HOSTILE.id);
    assert.equal(await page.locator('main img, main script, main b').count(), 0);
    assert.equal(await page.evaluate('window.pwned'), undefined);
    await assertClean(problems);
    await page.close();
  });

  test('a node with tokens asks for one, keeps it in sessionStorage and sends it as a bearer header', async () => {
    // 401s are this test's point: before a token and for the wrong one.
    const { page, problems } = await open(browser, `${guarded.url}/`, (status) => status === 401);
    await page.locator('form.token').waitFor(WAIT);
    await page.fill('input[name=token]', 'not-the-token');
    await page.click('form.token button');
    await page.locator('form.token [role=alert]').waitFor(WAIT);
    assert.match(await text(page, 'form.token [role=alert]'), /not valid/);

    await page.fill('input[name=token]', READ_SECRET);
    const statusRequest = page.waitForRequest((r) => r.url().endsWith('/v1/status'), WAIT);
    await page.click('form.token button');
    assert.equal((await statusRequest).headers().authorization, `Bearer ${READ_SECRET}`);
    await page.locator('[data-field=as_of_block]').filter({ hasText: /^\d+$/ }).waitFor(WAIT);
    assert.equal(await page.evaluate("sessionStorage.getItem('arkivector.token')"), READ_SECRET);
    assert.equal(await text(page, '[data-field=access]'), 'bearer tokens');

    await page.click('nav a[data-nav=connect]');
    // The page renders once node.json has answered: its snippets come all at once.
    await page.locator('pre.snippet').first().waitFor(WAIT);
    const snippets = (await page.locator('pre.snippet').allInnerTexts()).join('\n');
    assert.match(
      snippets,
      new RegExp(
        `claude mcp add --transport http arkivector ${guarded.url}/mcp --header "Authorization: Bearer \\$ARKIVECTOR_TOKEN"`,
      ),
    );
    // The token itself is never written into the page.
    assert.doesNotMatch(await page.content(), new RegExp(READ_SECRET));
    await assertClean(problems);
    await page.close();
  });
});
