// The shell client end to end: the real `bin/arkivector.js` as a child process against a gateway (in
// process, with a signer and the fixture embedder) following a devnet. Creates a collection, lists and
// shows it, puts vectors from arguments and JSON lines on stdin (in batches), searches by vector and text,
// and checks the exit codes scripts rely on: 0 ok, 1 refused, 2 usage, 3 no gateway.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createSpec, LIST_PAGES_MAX, listSpec, showSpec } from '../../src/commands/collection.ts';
import { helpFor } from '../../src/commands/index.ts';
import { putSpec } from '../../src/commands/put.ts';
import { searchSpec } from '../../src/commands/search.ts';
import { FLAG_NAMES, parseServeConfig } from '../../src/config.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { createLogger, type Gateway, startGateway } from '../../src/node/index.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { NOTES } from '../http/fixture.ts';
import { definitionArgs } from '../helpers/writes.ts';
import { COLLECTIONS_LIMIT_MAX } from '../../src/service/limits.ts';
import { type EmbedderFixture, startEmbedder } from '../helpers/embedder.ts';
import { defined } from '../helpers/defined.ts';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `arkivector ARGS` (bounded: killed after 120 s) with `stdin` piped in. */
async function arkivector(args: string[], options: { stdin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  const child = spawn(process.execPath, ['bin/arkivector.js', ...args], {
    env: { ...process.env, ARKIVECTOR_URL: '', ARKIVECTOR_TOKEN: '', ...options.env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.stdin ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

const expectExit = (run: Run, code: number) =>
  assert.equal(run.code, code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);

describe('arkivector collection / put / search against a gateway', () => {
  let devnet: Devnet;
  let gateway: Gateway;
  let guarded: Gateway;
  let embedder: EmbedderFixture;
  let dir: string;
  let url: string[];
  const secret = 'cli-test-token-0123456789';

  before(async () => {
    devnet = await startTestDevnet();
    embedder = await startEmbedder();
    dir = await mkdtemp(join(tmpdir(), 'arkivector-cli-'));
    await writeFile(join(dir, 'key'), `${defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey}\n`);
    const sha256 = createHash('sha256').update(secret).digest('hex');
    await writeFile(join(dir, 'tokens.json'), JSON.stringify([{ name: 'reader', sha256, scopes: ['read'] }]));
    const common = ['--rpc', devnet.url, '--ws', devnet.wsUrl, '--http', '127.0.0.1:0'];
    gateway = await startGateway(
      parseServeConfig(
        [...common, '--private-key-file', join(dir, 'key'), '--embedder', embedder.url, '--embedder-model', 'fake'],
        {},
      ),
      createLogger('silent'),
    );
    guarded = await startGateway(
      parseServeConfig([...common, '--tokens', join(dir, 'tokens.json')], {}),
      createLogger('silent'),
    );
    url = ['--url', gateway.httpUrl!];
  });
  after(async () => {
    await guarded?.close();
    await gateway?.close();
    await embedder?.close();
    await devnet?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('help describes every command and every flag', async () => {
    const help = await arkivector(['help']);
    expectExit(help, 0);
    for (const command of [
      'serve',
      'devnet',
      'collection list',
      'collection show',
      'collection create',
      'put',
      'search',
    ])
      assert.ok(help.stdout.includes(command), `help lists ${command}`);
    const put = await arkivector(['put', '--help']);
    expectExit(put, 0);
    assert.equal(put.stdout, `${await helpFor(['put'])}\n`);
    for (const spec of [listSpec, showSpec, createSpec, putSpec, searchSpec]) {
      const text = (await helpFor(spec.name.split(' ')))!;
      for (const flag of [...Object.keys(spec.flags), 'url', 'json', 'help'])
        assert.match(text, new RegExp(`--${flag}\\b`), `${spec.name} --help describes --${flag}`);
    }
    const serve = (await helpFor(['serve']))!;
    for (const flag of FLAG_NAMES) assert.match(serve, new RegExp(`--${flag}\\b`));
    expectExit(await arkivector(['help', 'nonsense']), 2);
  });

  test('collection create, list and show', async () => {
    const created = await arkivector([
      'collection',
      'create',
      'memories',
      '--dim',
      '4',
      '--attr',
      'topic:str',
      '--attr',
      'stars:i32',
      '--open',
      '--description',
      'what the agent remembers',
      ...url,
    ]);
    expectExit(created, 0);
    assert.match(created.stdout, /^created collection memories \(definition 0x[0-9a-f]{64}\) in block \d+\n$/);

    const listed = await arkivector(['collection', 'list', '--json', ...url]);
    expectExit(listed, 0);
    const body = JSON.parse(listed.stdout) as { collections: { name: string; dim: number }[] };
    assert.deepEqual(
      body.collections.map((c) => [c.name, c.dim]),
      [['memories', 4]],
    );
    const text = await arkivector(['collection', 'list', ...url]);
    expectExit(text, 0);
    assert.match(
      text.stdout,
      // The gateway's embedder has the collection's dimension, so the definition records it.
      /^1 collection\(s\) at block \d+ \(\w+\)\n- memories: halfvec\(4\), cosine, 0 live entities, embedder fake\n$/,
    );

    const shown = await arkivector(['collection', 'show', 'memories', ...url]);
    expectExit(shown, 0);
    assert.match(shown.stdout, /^name {9}memories$/m);
    assert.match(shown.stdout, /^attributes {3}(topic:str stars:i32|stars:i32 topic:str)$/m);
    assert.match(shown.stdout, /^description {2}what the agent remembers$/m);
  });

  test('put from arguments and from JSON lines on stdin (in batches), then search by vector and by text', async () => {
    const one = await arkivector([
      'put',
      'memories',
      'cat',
      '--vector',
      '1,0,0,0',
      '--document',
      'Cats purr.',
      '--attr',
      'topic=pets',
      '--attr',
      'stars=5',
      ...url,
    ]);
    expectExit(one, 0);
    assert.match(
      one.stdout,
      /^memories: 1 entities written \(1 created, 0 updated\) in 1 transaction\(s\), block (\d+)/,
    );

    const lines = [
      { id: 'dog', vector: [0.95, 0.08, 0.05, 0], document: 'Dogs bark.', attributes: { topic: 'pets', stars: 4 } },
      {
        id: 'fern',
        vector: [0, 0.1, 1, 0.2],
        document: 'Ferns like shade.',
        attributes: { topic: 'plants', stars: 3 },
      },
      { id: 'cat', vector: [1, 0, 0, 0], document: 'Cats purr a lot.', attributes: { topic: 'pets', stars: 5 } },
    ];
    const many = await arkivector(['put', 'memories', '--batch', '2', '--json', ...url], {
      stdin: `${lines.map((l) => JSON.stringify(l)).join('\n')}\n\n`,
    });
    expectExit(many, 0);
    const answer = JSON.parse(many.stdout) as { results: { id: string; op: string }[]; tx_hashes: string[] };
    assert.deepEqual(
      answer.results.map((r) => [r.id, r.op]),
      [
        ['dog', 'create'],
        ['fern', 'create'],
        ['cat', 'update'],
      ],
    );
    assert.equal(answer.tx_hashes.length, 2, 'three lines in batches of two: two transactions');

    const byVector = await arkivector(
      ['search', 'memories', '--vector', '1,0.05,0,0', '-k', '2', '--where', "topic = 'pets'", ...url],
      {},
    );
    expectExit(byVector, 0);
    const out = byVector.stdout.split('\n');
    assert.match(
      defined(out[0], 'out[0]'),
      /^memories at block \d+ \(\w+\), vector search \((exact|hnsw)\), 2 result\(s\)$/,
    );
    assert.match(
      defined(out[1], 'out[1]'),
      /^ {2}1\. cat {2}score 0\.99\d\d {2}(topic=pets stars=5|stars=5 topic=pets)$/,
    );
    assert.equal(out[2], '     Cats purr a lot.');
    assert.match(defined(out[3], 'out[3]'), /^ {2}2\. dog /);

    const byText = await arkivector(['search', 'memories', 'which plant likes shade?', '-k', '1', '--json', ...url]);
    expectExit(byText, 0);
    const found = JSON.parse(byText.stdout) as { mode: string; results: { id: string; document: string }[] };
    assert.equal(found.mode, 'semantic');
    assert.deepEqual(
      found.results.map((r) => [r.id, r.document]),
      [['fern', 'Ferns like shade.']],
    );
  });

  test('text without a vector goes to the gateway as is: the gateway embeds it', async () => {
    const run = await arkivector(['put', 'memories', 'tea', '--document', 'The user likes green tea.', ...url]);
    expectExit(run, 0);
    const search = await arkivector(['search', 'memories', 'green tea', '-k', '1', '--json', ...url]);
    assert.equal(JSON.parse(search.stdout).results[0].id, 'tea');
  });

  test('exit 1 when the gateway refuses: the problem on stderr, or as JSON on stdout with --json', async () => {
    const missing = await arkivector(['search', 'nosuch', '--vector', '1,0,0,0', ...url]);
    expectExit(missing, 1);
    assert.match(missing.stderr, /collection_not_found \(404\): no collection named "nosuch"/);
    const wrongDim = await arkivector(['put', 'memories', 'x', '--vector', '1,2', '--json', ...url]);
    expectExit(wrongDim, 1);
    assert.equal(JSON.parse(wrongDim.stdout).code, 'dimension_mismatch');
  });

  test('exit 2 for usage errors, nothing sent for a malformed stdin line', async () => {
    expectExit(await arkivector(['search', ...url]), 2);
    expectExit(await arkivector(['search', 'memories', '--vector', '1,x', ...url]), 2);
    expectExit(await arkivector(['put', 'memories', '--bogus', ...url]), 2);
    const bad = await arkivector(['put', 'memories', ...url], { stdin: '{"id":"ok1","vector":[1,0,0,0]}\nnot json\n' });
    expectExit(bad, 2);
    assert.match(bad.stderr, /stdin line 2 is not JSON/);
    const count = await fetch(`${gateway.httpUrl}/v1/collections/memories`).then((r) => r.json());
    // cat, dog, fern and the text-only tea.
    assert.equal((count as { stats: { live_entities: number } }).stats.live_entities, 4, 'ok1 was not sent');
  });

  test('collection list stops after LIST_PAGES_MAX pages of a listing that never ends, and says so', async () => {
    let asked = 0;
    const endless = createHttpServer((req, res) => {
      asked++;
      assert.match(req.url ?? '', /^\/v1\/collections\?/);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ collections: [], as_of_block: 1, sync_state: 'live', total: 0, next_cursor: `c${asked}` }),
        );
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    try {
      const port = (endless.address() as { port: number }).port;
      const run = await arkivector(['collection', 'list', '--url', `http://127.0.0.1:${port}`]);
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, new RegExp(`more than ${LIST_PAGES_MAX} pages`));
      assert.equal(asked, LIST_PAGES_MAX);
    } finally {
      await new Promise<void>((resolve) => endless.close(() => resolve()));
    }
  });

  test('exit 3 when no gateway answers', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const run = await arkivector(['collection', 'list', '--url', `http://127.0.0.1:${port}`]);
    expectExit(run, 3);
    assert.match(run.stderr, /cannot reach the gateway at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  });

  test('the token comes from ARKIVECTOR_TOKEN, is sent as a bearer token and never printed', async () => {
    const guardedUrl = ['--url', guarded.httpUrl!];
    const refused = await arkivector(['collection', 'list', ...guardedUrl]);
    expectExit(refused, 1);
    assert.match(refused.stderr, /unauthorized \(401\)[\s\S]*hint: set ARKIVECTOR_TOKEN/);
    const allowed = await arkivector(['collection', 'list', ...guardedUrl], { env: { ARKIVECTOR_TOKEN: secret } });
    expectExit(allowed, 0);
    assert.match(allowed.stdout, /- memories: halfvec\(4\)/);
    const forbidden = await arkivector(['put', 'memories', 'y', '--vector', '1,0,0,0', ...guardedUrl], {
      env: { ARKIVECTOR_TOKEN: secret },
    });
    expectExit(forbidden, 1);
    for (const run of [refused, allowed, forbidden]) assert.ok(!`${run.stdout}${run.stderr}`.includes(secret));
  });

  test('collection list reads every page of the listing, not just the first', async () => {
    // One page holds at most COLLECTIONS_LIMIT_MAX; two transactions of definitions from another owner.
    const bob = walletClient(devnet, 2);
    const names = Array.from({ length: COLLECTIONS_LIMIT_MAX + 20 }, (_, i) => `many-${String(i).padStart(4, '0')}`);
    for (const part of [names.slice(0, 260), names.slice(260)])
      await bob.mutateEntities({ creates: part.map((name) => definitionArgs(name, NOTES)) });
    assert.ok(await gateway.indexer.waitForBlock(devnet.headNumber, 30_000));
    const listed = await arkivector(['collection', 'list', '--json', ...url]);
    expectExit(listed, 0);
    const body = JSON.parse(listed.stdout) as { collections: { name: string }[]; total: number; next_cursor: null };
    const listedNames = body.collections.map((c) => c.name);
    assert.ok(listedNames.length > COLLECTIONS_LIMIT_MAX);
    assert.equal(listedNames.length, body.total);
    assert.deepEqual(
      listedNames.filter((n) => n.startsWith('many-')),
      names,
    );
    assert.equal(body.next_cursor, null);
    const text = await arkivector(['collection', 'list', ...url]);
    expectExit(text, 0);
    assert.match(text.stdout, new RegExp(`^${body.total} collection\\(s\\) at block \\d+`));
    assert.equal(text.stdout.trim().split('\n').length, body.total + 1);
  });
});
