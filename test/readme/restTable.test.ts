// README "REST API" table as test input, against a real node (devnet, indexer, HTTP app on 127.0.0.1:0,
// tokens on, a signer, --compat kuradb): every route it lists is served with the scope it states (no token:
// 401; a read token on a write route: 403), every route the app serves is listed, and the `/v1/status` row
// names exactly the fields the status answers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHttpApp, docsMount, createMetrics, loadAccessPolicy } from '../../src/http/index.ts';
import { mountConsole } from '../../src/console/index.ts';
import { defined } from '../helpers/defined.ts';
import { codeSpans, docSection, tableRows } from '../helpers/readme.ts';
import { createEntityAs } from '../helpers/generations.ts';
import {
  assertProblem,
  call,
  captureLogger,
  NOTES,
  STUB_WRITER,
  startChain,
  vectorArgs,
  type Chain,
  type Node,
} from '../http/fixture.ts';

const READER = 'readme-reader-0123456789';
const WRITER = 'readme-writer-0123456789';

interface Row {
  method: string;
  path: string;
  scope: string;
  answer: string;
}

/** The table's rows, one per route: `GET /api/health`, `/api/list` is two routes of one row. */
const ROWS: Row[] = tableRows(docSection('rest.md', 'REST API'), 'route').flatMap(
  ([route = '', scope = '', , answer = '']) => {
    const spans = codeSpans(route);
    const method = defined(/^[A-Z]+/.exec(spans[0] ?? '')?.[0], `method in ${route}`);
    return spans.map((span) => ({ method, path: span.replace(/^[A-Z]+ /, ''), scope, answer }));
  },
);

/** A concrete path for a route template: the suite's collection and entity. */
const concrete = (path: string) => path.replace('{c}', 'notes').replace('{ref}', 'cat').replace('{page}', 'rest.md');

describe('README: the REST API table', () => {
  let chain: Chain;
  let node: Node;
  before(async () => {
    chain = await startChain();
    const access = await loadAccessPolicy({
      tokensEnv: `read:${READER},read+write:${WRITER}`,
      publicRead: false,
      host: '0.0.0.0',
    });
    node = await chain.node({ access, ctx: { writer: STUB_WRITER }, compat: 'kuradb' });
    // More than 10 records, so that /v1/status has a recall row for the collection.
    for (let i = 0; i < 8; i++)
      await createEntityAs(
        chain.devnet,
        0,
        vectorArgs('notes', {
          id: `more-${i}`,
          vector: [1, i, 0, 1],
          document: '',
          attributes: { topic: 'more', stars: i },
        }),
        NOTES,
      );
    assert.ok(await chain.indexer.waitForBlock(chain.devnet.headNumber, 30_000));
  });
  after(async () => await chain.close());

  test('every route the app serves is in the table (the console is in "Web console"), and every listed one is served', async () => {
    const access = await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' });
    const { logger } = captureLogger();
    const app = createHttpApp({
      ctx: chain.ctx,
      access,
      metrics: createMetrics(chain.ctx),
      logger,
      mcp: { ctx: chain.ctx, logger, compat: 'kuradb' },
      mounts: [mountConsole, docsMount()],
    });
    const served = app.routes
      .filter((r) => r.method !== 'ALL')
      .map((r) => `${r.method} ${r.path.replace(/:([a-z]+)/g, '{$1}')}`);
    const consoleRoutes = served.filter((r) => r === 'GET /' || r.startsWith('GET /console/'));
    const webConsole = docSection('console.md', 'Web console');
    for (const path of ['/', '/console/app.js', '/console/style.css', '/console/favicon.svg', '/console/node.json'])
      assert.ok(new RegExp(`\`(GET )?${path}\``).test(webConsole), `"Web console" names ${path}`);
    assert.deepEqual(consoleRoutes.sort(), ['GET /', 'GET /console/{file}', 'GET /console/node.json'].sort());
    const listed = ROWS.map((row) => `${row.method} ${row.path}`);
    // GET and DELETE /mcp are answered 405, as the POST /mcp row says.
    const mcpRow = defined(
      ROWS.find((row) => row.path === '/mcp'),
      'the /mcp row',
    );
    assert.match(mcpRow.answer, /`GET`\/`DELETE \/mcp` answer 405/);
    listed.push('GET /mcp', 'DELETE /mcp');
    assert.deepEqual(
      served.filter((r) => !consoleRoutes.includes(r)).sort(),
      [...new Set(listed)].sort(),
      'README "REST API" routes and the app routes differ',
    );
    for (const method of ['GET', 'DELETE'])
      assert.equal((await fetch(`${node.url}/mcp`, { method })).status, 405, `${method} /mcp`);
  });

  test('every route answers with the scope the table states: none open, read and write need a token, write a write token', async () => {
    const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
    const request = (row: Row, headers: Record<string, string> = {}) =>
      call(`${node.url}${concrete(row.path)}`, {
        method: row.method,
        headers: { accept: 'application/json, text/event-stream', ...headers },
        ...(row.method === 'POST' ? { json: {} } : {}),
      });
    assert.deepEqual([...new Set(ROWS.map((row) => row.scope))].sort(), ['none', 'read', 'write']);
    for (const row of ROWS) {
      const what = `${row.method} ${row.path}`;
      const anonymous = await request(row);
      if (row.scope === 'none') {
        assert.ok(![401, 403, 404].includes(anonymous.status), `${what} without a token: ${anonymous.status}`);
        continue;
      }
      assertProblem(anonymous, 401, 'unauthorized');
      const reader = await request(row, bearer(READER));
      if (row.scope === 'write') assertProblem(reader, 403, 'forbidden');
      else assert.ok(![401, 403, 404].includes(reader.status), `${what} with a read token: ${reader.status}`);
      const writer = await request(row, bearer(WRITER));
      assert.ok(![401, 403, 404].includes(writer.status), `${what} with a write token: ${writer.status}`);
    }
  });

  test('the console files need no token and carry the headers "Web console" spells out', async () => {
    const section = docSection('console.md', 'Web console');
    const paragraph = defined(
      /every console\s+response carries ([\s\S]*?)\.\n/.exec(section)?.[1],
      'the headers sentence',
    );
    const promised = [...paragraph.replace(/\n/g, ' ').matchAll(/`([A-Z][A-Za-z-]+): ([^`]+)`/g)].map(
      ([, name = '', value = '']) => [name.toLowerCase(), value] as const,
    );
    assert.deepEqual(
      promised.map(([name]) => name),
      ['content-security-policy', 'x-content-type-options', 'referrer-policy', 'x-frame-options'],
    );
    for (const path of ['/', '/console/app.js', '/console/style.css', '/console/favicon.svg']) {
      const answer = await fetch(`${node.url}${path}`);
      assert.equal(answer.status, 200, path);
      for (const [name, value] of promised) assert.equal(answer.headers.get(name), value, `${path} ${name}`);
    }
  });

  test('the /v1/status row names every field the status answers, and no other', async () => {
    const row = defined(
      ROWS.find((r) => r.path === '/v1/status'),
      'the /v1/status row',
    );
    // A node without the stub signer: the status reads the signer's balance.
    const plain = await chain.node();
    const answer = await call(`${plain.url}/v1/status`);
    assert.equal(answer.status, 200);
    const documented = defined(/^`\{([^}`]+)\}`/.exec(row.answer)?.[1], 'a `{field, …}` list at the start of the row')
      .split(',')
      .map((field) => field.trim());
    assert.deepEqual(documented, Object.keys(answer.body));
    // The recall rows' fields, which the section spells out in prose (the suite's collection has more than
    // 10 records, so the status lists it).
    const recall = defined(answer.body.recall[0], 'a recall row') as Record<string, unknown>;
    const section = docSection('rest.md', 'REST API');
    const fields = defined(/`recall: \[\{([^}]+)\}\]`/.exec(section)?.[1], 'the recall fields')
      .split(',')
      .map((f) => f.trim());
    assert.deepEqual(fields, Object.keys(recall));
  });
});
