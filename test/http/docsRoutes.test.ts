// The node's manual over HTTP (src/http/docs.ts): GET /docs.md, /docs/NAME.md and /llms.txt against real
// nodes on 127.0.0.1, from the package's own README.md and docs/*.md and from a folder the test writes:
// content types, every page present in order, the index's links answering, the size bound, the access
// rules of the console's node document, and the MCP instructions that point to them.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mountConsole } from '../../src/console/index.ts';
import {
  createHttpApp,
  createMetrics,
  docsMount,
  loadAccessPolicy,
  serveHttp,
  type AccessPolicy,
  type HttpServer,
  type RouteMount,
} from '../../src/http/index.ts';
import { MANUAL_PAGE_MAX_BYTES } from '../../src/http/manual.ts';
import { PACKAGE_ROOT } from '../../src/packageInfo.ts';
import { captureLogger, startChain, type Chain, type LogLine } from './fixture.ts';

const SECRET = 'docs-reader-0123456789';
const bearer = { authorization: `Bearer ${SECRET}` };

let chain: Chain;
const servers: HttpServer[] = [];
let folder: string;

async function node(options: { access?: AccessPolicy; mounts?: RouteMount[] } = {}) {
  const access = options.access ?? (await loadAccessPolicy({ publicRead: false, host: '127.0.0.1' }));
  const { lines, logger } = captureLogger();
  const app = createHttpApp({
    ctx: chain.ctx,
    access,
    metrics: createMetrics(chain.ctx),
    logger,
    mcp: { ctx: chain.ctx, logger },
    mounts: options.mounts ?? [mountConsole, docsMount()],
  });
  const server = await serveHttp({ host: '127.0.0.1', port: 0, app });
  servers.push(server);
  return { url: server.url, logs: lines as LogLine[] };
}

async function get(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/** The links of an llms.txt's "## Docs" list. */
const links = (index: string) =>
  [...(index.split('## Docs')[1] ?? '').matchAll(/^- \[[^\]]+\]\(([^)]+)\)/gm)].map(([, href = '']) => href);

before(async () => {
  chain = await startChain({ write: false });
  folder = mkdtempSync(join(tmpdir(), 'arkivector-docs-'));
  mkdirSync(join(folder, 'docs'));
  writeFileSync(
    join(folder, 'README.md'),
    '# Tool\n\nTool does [things](docs/b.md). More here.\n\n## Use\n\nRun it.\n',
  );
  writeFileSync(join(folder, 'docs', 'b.md'), '# Bee page\n\nAbout bees: they fly.\n\n## Wings\n\nTwo pairs.\n');
  writeFileSync(join(folder, 'docs', 'a.md'), '# Ant page\n\n## Colonies\n\n- many ants\n');
  writeFileSync(join(folder, 'docs', 'notes.txt'), 'not a page');
  writeFileSync(join(folder, 'docs', 'huge.md'), `# Huge\n\n${'x'.repeat(MANUAL_PAGE_MAX_BYTES)}\n`);
});
after(async () => {
  for (const server of servers) await server.close();
  await chain?.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('docs routes', () => {
  test('GET /docs.md is the package README and every docs/*.md page, in markdown, each after a separator naming it', async () => {
    const { url } = await node();
    const answer = await get(`${url}/docs.md`);
    assert.equal(answer.status, 200);
    assert.equal(answer.type, 'text/markdown; charset=utf-8');
    const readme = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8').trim();
    assert.ok(answer.text.startsWith(`<!-- file: README.md -->\n\n${readme}`), 'the README comes first, whole');
    const pages = readdirSync(join(PACKAGE_ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .sort();
    let at = 0;
    for (const name of pages) {
      const separator = answer.text.indexOf(`<!-- file: docs/${name} (also at /docs/${name}) -->`);
      assert.ok(separator > at, `docs/${name} is present, after the page before it`);
      at = separator;
      const text = readFileSync(join(PACKAGE_ROOT, 'docs', name), 'utf8').trim();
      assert.ok(answer.text.includes(text), `docs/${name} is there whole, its headings kept`);
    }
  });

  test('GET /llms.txt is an index in the llms.txt convention whose every link answers markdown', async () => {
    const { url } = await node();
    const answer = await get(`${url}/llms.txt`);
    assert.equal(answer.status, 200);
    assert.equal(answer.type, 'text/plain; charset=utf-8');
    const lines = answer.text.split('\n');
    assert.match(lines[0] ?? '', /^# \S/, 'an H1 title first');
    assert.match(lines[2] ?? '', /^> \S/, 'then a blockquote summary');
    const hrefs = links(answer.text);
    const pages = readdirSync(join(PACKAGE_ROOT, 'docs')).filter((name) => name.endsWith('.md'));
    assert.deepEqual(hrefs.sort(), ['/docs.md', ...pages.map((name) => `/docs/${name}`)].sort());
    for (const href of hrefs) {
      const page = await get(`${url}${href}`);
      assert.equal(page.status, 200, href);
      assert.equal(page.type, 'text/markdown; charset=utf-8', href);
    }
  });

  test('pages come from the folder as listed at start: README first, then by name, only *.md, none over the size bound', async () => {
    const { url, logs } = await node({ mounts: [docsMount(folder)] });
    const whole = (await get(`${url}/docs.md`)).text;
    const order = [...whole.matchAll(/<!-- file: (\S+)/g)].map(([, file]) => file);
    assert.deepEqual(order, ['README.md', 'docs/a.md', 'docs/b.md']);
    assert.match(whole, /\n## Wings\n/);
    assert.doesNotMatch(whole, /not a page|# Huge/);
    assert.ok(
      logs.some((line) => line.level === 'warn' && JSON.stringify(line.fields.files) === '["docs/huge.md"]'),
      'the left-out page is logged',
    );
    const index = (await get(`${url}/llms.txt`)).text;
    assert.match(index, /^- \[Tool \(README, then every page below\)\]\(\/docs\.md\): Tool does things\.$/m);
    assert.match(index, /^- \[Bee page\]\(\/docs\/b\.md\): About bees: they fly\.$/m);
    assert.match(index, /^- \[Ant page\]\(\/docs\/a\.md\)$/m);
    assert.deepEqual(links(index), ['/docs.md', '/docs/a.md', '/docs/b.md']);
    assert.equal((await get(`${url}/docs/b.md`)).text, readFileSync(join(folder, 'docs', 'b.md'), 'utf8'));
    // A page added after start is not served: the list is the one read at start.
    writeFileSync(join(folder, 'docs', 'c.md'), '# Late\n');
    for (const path of ['/docs/c.md', '/docs/huge.md', '/docs/notes.txt', '/docs/..%2FREADME.md']) {
      const answer = await get(`${url}${path}`);
      assert.equal(answer.status, 404, path);
      assert.equal(answer.type, 'application/problem+json', path);
    }
    assert.doesNotMatch((await get(`${url}/docs.md`)).text, /# Late/);
  });

  test('a node with tokens refuses them without a token, as it refuses the console document; a public node serves them', async () => {
    const guarded = await node({
      access: await loadAccessPolicy({ tokensEnv: `read:${SECRET}`, publicRead: false, host: '0.0.0.0' }),
    });
    const console = await get(`${guarded.url}/console/node.json`);
    assert.equal(console.status, 401);
    for (const path of ['/docs.md', '/llms.txt', '/docs/missing.md']) {
      const anonymous = await get(`${guarded.url}${path}`);
      assert.equal(anonymous.status, console.status, `${path} without a token`);
      assert.equal(anonymous.type, 'application/problem+json');
      assert.equal((await get(`${guarded.url}${path}`, { authorization: 'Bearer wrong' })).status, 401, path);
    }
    assert.equal((await get(`${guarded.url}/docs.md`, bearer)).status, 200);
    assert.equal((await get(`${guarded.url}/llms.txt`, bearer)).status, 200);
    const open = await node({ access: await loadAccessPolicy({ publicRead: true, host: '0.0.0.0' }) });
    assert.equal((await get(`${open.url}/docs.md`)).status, 200);
    assert.equal((await get(`${open.url}/llms.txt`)).status, 200);
    assert.equal((await get(`${open.url}/docs.md`, { origin: 'http://evil.example' })).status, 403);
  });

  test('the MCP instructions point to the docs when the app serves them, and only then', async () => {
    const instructions = async (url: string) => {
      const client = new Client({ name: 'docs-test', version: '0.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
      const text = client.getInstructions() ?? '';
      await client.close();
      return text;
    };
    const sentence = 'How to use this node: GET /docs.md (all docs) and /llms.txt (index) on its HTTP address';
    assert.ok((await instructions((await node()).url)).includes(sentence));
    const withoutDocs = await node({ mounts: [mountConsole] });
    assert.equal((await get(`${withoutDocs.url}/docs.md`)).status, 404);
    assert.ok(!(await instructions(withoutDocs.url)).includes('/docs.md'));
  });
});
