// `arkivector ingest` end to end: the real CLI (bin/arkivector.js, a child process) against an in-process
// gateway with a signer, the fixture embedder and --compat kuradb, following a devnet. A folder of
// Markdown, HTML, text, a hand-written PDF, Chinese and Japanese text (and a PNG that is skipped) is
// ingested; what the collection holds is read straight from the chain (the devnet's arkiv_query, decoded
// by the indexer oracle), never from the ingester's own answer; search_rag through a real MCP client
// finds the right source and chunk; an unchanged re-ingest sends no transaction (the signer's nonce
// does not move); an edit, a deletion and a new file leave exactly the right entities; --watch follows
// the folder and stops cleanly on SIGINT.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { privateKeyToAddress } from 'viem/accounts';
import { parseServeConfig } from '../../src/config.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { createLogger, type Gateway, startGateway } from '../../src/node/index.ts';
import { chunkText } from '../../src/ingest/chunk.ts';
import { extractFile } from '../../src/ingest/extract.ts';
import { chunkId } from '../../src/ingest/plan.ts';
import { INGEST_ATTRIBUTES } from '../../src/ingest/remote.ts';
import { validateCollectionDefinition } from '../../src/collections/index.ts';
import { publicClient, startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { vectorArgs } from '../helpers/writes.ts';
import { type EmbedderFixture, startEmbedder } from '../helpers/embedder.ts';
import { expectedCollections } from '../helpers/indexerOracle.ts';
import { minimalPdf } from './minimalPdf.ts';
import { defined } from '../helpers/defined.ts';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `arkivector ARGS` (bounded: killed after 180 s). */
async function arkivector(args: string[]): Promise<Run> {
  const child = spawn(process.execPath, ['bin/arkivector.js', ...args], {
    env: { ...process.env, ARKIVECTOR_URL: '', ARKIVECTOR_TOKEN: '' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

const expectExit = (run: Run, code: number) =>
  assert.equal(run.code, code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);

const FILES: Record<string, string | Uint8Array> = {
  'guide.md': '# Cats\n\nCats purr when they are content.\n\n# Ferns\n\nFerns are plants that reproduce by spores.',
  'site/page.html': '<html><body><h1>Garden</h1><p>The garden grows tomatoes in summer.</p></body></html>',
  'notes.txt': 'Plain notes about the weather: windy.',
  'paper.pdf': minimalPdf(['Photosynthesis makes sugar from light.']),
  'zh.md': '# 植物\n\n光合作用是植物利用光能制造糖的过程。',
  'ja.txt': '東京は日本の首都です。桜がとても綺麗です。',
  'image.png': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]),
};

describe('arkivector ingest', () => {
  let devnet: Devnet;
  let gateway: Gateway;
  let embedder: EmbedderFixture;
  let dir: string;
  let docs: string;
  let url: string[];
  let signer: `0x${string}`;
  let mcp: Client;

  before(async () => {
    devnet = await startTestDevnet();
    embedder = await startEmbedder();
    dir = await mkdtemp(join(tmpdir(), 'arkivector-ingest-'));
    docs = join(dir, 'docs');
    await mkdir(join(docs, 'site'), { recursive: true });
    for (const [name, content] of Object.entries(FILES)) await writeFile(join(docs, name), content);
    await writeFile(join(dir, 'key'), `${defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey}\n`);
    signer = privateKeyToAddress(defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey as `0x${string}`);
    gateway = await startGateway(
      parseServeConfig(
        [
          ...['--rpc', devnet.url, '--ws', devnet.wsUrl, '--http', '127.0.0.1:0'],
          ...['--private-key-file', join(dir, 'key'), '--embedder', embedder.url, '--embedder-model', 'fake'],
          ...['--compat', 'kuradb'],
        ],
        {},
      ),
      createLogger('silent'),
    );
    url = ['--url', gateway.httpUrl!];
    mcp = new Client({ name: 'ingest-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${gateway.httpUrl}/mcp`)));
  });
  after(async () => {
    await mcp?.close();
    await gateway?.close();
    await embedder?.close();
    await devnet?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const nonce = () => publicClient(devnet).getTransactionCount({ address: signer });

  /** (id → [source, chunk, document, content_sha]) of a collection, from the chain at its head. */
  async function onChain(name = 'kb'): Promise<Map<string, [string, number, string, string]>> {
    const head = Number(await publicClient(devnet).getBlockNumber());
    const kb = (await expectedCollections(devnet, head, (n) => n === name))[name];
    assert.ok(kb, `collection ${name} is on chain`);
    return new Map(
      Object.entries(kb.records).map(([id, r]) => {
        const a = r.attributes as Record<string, unknown>;
        return [id, [a.source as string, Number(a.chunk), r.document, a.content_sha as string]];
      }),
    );
  }

  /** What the chain must hold for the files now in the folder. */
  async function expected(files: string[], folder = docs): Promise<Map<string, [string, number, string, string]>> {
    const out = new Map<string, [string, number, string, string]>();
    for (const source of files) {
      const extracted = await extractFile(join(folder, source));
      assert.ok(extracted.ok, source);
      for (const c of chunkText(extracted.text)) out.set(chunkId(source, c.index), [source, c.index, c.text, c.sha]);
    }
    return out;
  }

  async function ragSources(q: string): Promise<[string, number][]> {
    const result = (await mcp.callTool({
      name: 'search_rag',
      arguments: { db: 'kb', q, mode: 'keyword', limit: 5 },
    })) as CallToolResult;
    assert.ok(!result.isError, JSON.stringify(result.content));
    const body = result.structuredContent as { keyword?: { source: string; matches: { chunk: number }[] }[] };
    return (body.keyword ?? []).flatMap((g) => g.matches.map((m): [string, number] => [g.source, m.chunk]));
  }

  test('usage errors: no --collection, a missing path, a missing collection without --create', async () => {
    const none = await arkivector(['ingest', docs, ...url]);
    expectExit(none, 2);
    assert.match(none.stderr, /needs --collection NAME/);
    const missing = await arkivector(['ingest', join(dir, 'nope'), '--collection', 'kb', ...url]);
    expectExit(missing, 2);
    assert.match(missing.stderr, /nope: ENOENT/);
    const absent = await arkivector(['ingest', docs, '--collection', 'absent', ...url]);
    expectExit(absent, 2);
    assert.match(absent.stderr, /collection "absent" does not exist: pass --create/);
  });

  test('ingest --create writes one entity per chunk; search_rag finds the right source and chunk', async () => {
    const run = await arkivector(['ingest', docs, '--collection', 'kb', '--create', '--json', ...url]);
    expectExit(run, 0);
    const summary = JSON.parse(run.stdout);
    assert.equal(summary.files, 6);
    assert.equal(summary.failed.length, 0);
    assert.deepEqual(
      summary.skipped.map((s: { path: string; reason: string }) => [s.path, s.reason]),
      [[join(docs, 'image.png'), 'not a text, Markdown, HTML or PDF file (.png)']],
    );
    const want = await expected(['guide.md', 'ja.txt', 'notes.txt', 'paper.pdf', 'site/page.html', 'zh.md']);
    assert.equal(summary.created, want.size);
    assert.deepEqual(await onChain(), want);

    assert.deepEqual(await ragSources('purr'), [['guide.md', 0]]);
    assert.deepEqual(await ragSources('spores'), [['guide.md', 1]]);
    assert.deepEqual(await ragSources('photosynthesis'), [['paper.pdf', 0]]);
    assert.deepEqual(await ragSources('tomatoes'), [['site/page.html', 0]]);
    assert.deepEqual(await ragSources('光合作用'), [['zh.md', 0]]);
    assert.deepEqual(await ragSources('東京'), [['ja.txt', 0]]);
  });

  test('an unchanged folder sends no transaction', async () => {
    const before = await nonce();
    const chainBefore = await onChain();
    const run = await arkivector(['ingest', docs, '--collection', 'kb', '--prune', '--json', ...url]);
    expectExit(run, 0);
    assert.equal(await nonce(), before);
    assert.deepEqual(await onChain(), chainBefore);
    const summary = JSON.parse(run.stdout);
    assert.deepEqual([summary.created, summary.updated, summary.deleted, summary.transactions], [0, 0, 0, 0]);
  });

  test('edit one file, delete another, add a third: the dry run counts, then the chain holds exactly the folder', async () => {
    await writeFile(
      join(docs, 'guide.md'),
      '# Cats\n\nCats purr when they are content.\n\n# Mosses\n\nMosses have no roots.\n\n# Orchids\n\nOrchids bloom.',
    );
    await unlink(join(docs, 'notes.txt'));
    await writeFile(join(docs, 'new.md'), 'Tulips open in spring.');
    const before = await nonce();
    const dry = await arkivector(['ingest', docs, '--collection', 'kb', '--prune', '--dry-run', '--json', ...url]);
    expectExit(dry, 0);
    assert.equal(await nonce(), before, 'a dry run writes nothing');
    const plan = JSON.parse(dry.stdout);
    // guide.md: chunk 1 changes, chunk 2 is new; new.md: chunk 0; notes.txt: chunk 0 goes.
    assert.deepEqual([plan.created, plan.updated, plan.deleted], [2, 1, 1]);
    assert.equal(plan.transactions, 2, 'one upsert of three entities and one delete');
    const text = await arkivector(['ingest', docs, '--collection', 'kb', '--prune', '--dry-run', ...url]);
    assert.match(
      text.stdout,
      /kb: 6 files, \d+ chunks: would create 2, update 1, delete 1, unchanged \d+; ~2 transactions/,
    );

    const run = await arkivector(['ingest', docs, '--collection', 'kb', '--prune', '--json', ...url]);
    expectExit(run, 0);
    const summary = JSON.parse(run.stdout);
    assert.equal((await nonce()) - before, summary.transactions);
    assert.deepEqual(
      await onChain(),
      await expected(['guide.md', 'ja.txt', 'new.md', 'paper.pdf', 'site/page.html', 'zh.md']),
    );
    assert.deepEqual(await ragSources('windy'), []);
    assert.deepEqual(await ragSources('tulips'), [['new.md', 0]]);
  });

  test('beyond one search page: 60 files and a file of 120 chunks are listed, updated and pruned exactly', async () => {
    const many = join(dir, 'many');
    await mkdir(many);
    const names = Array.from({ length: 60 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`);
    for (const [i, name] of names.entries()) await writeFile(join(many, name), `Item ${i} of the list.`);
    const big = (n: number, changed = -1) =>
      Array.from({ length: n }, (_, i) => `# H${i}\n\nSection ${i} text${i === changed ? ' (edited)' : ''}.`).join(
        '\n\n',
      );
    await writeFile(join(many, 'big.md'), big(120));
    const first = await arkivector(['ingest', many, '--collection', 'kb2', '--create', '--json', ...url]);
    expectExit(first, 0);
    assert.deepEqual([JSON.parse(first.stdout).created, JSON.parse(first.stdout).transactions], [180, 2]);
    assert.deepEqual(await onChain('kb2'), await expected(['big.md', ...names], many));

    for (const gone of ['f05.txt', 'f33.txt', 'f58.txt']) await unlink(join(many, gone));
    await writeFile(join(many, 'big.md'), big(55, 3));
    const before = await nonce();
    const run = await arkivector(['ingest', many, '--collection', 'kb2', '--prune', '--json', ...url]);
    expectExit(run, 0);
    const summary = JSON.parse(run.stdout);
    assert.deepEqual([summary.created, summary.updated, summary.deleted], [0, 1, 3 + 65]);
    assert.equal(summary.transactions, 2, 'one upsert and one delete of 68 chunks');
    assert.equal((await nonce()) - before, 2);
    const left = names.filter((n) => !['f05.txt', 'f33.txt', 'f58.txt'].includes(n));
    assert.deepEqual(await onChain('kb2'), await expected(['big.md', ...left], many));
  });

  test('a file the gateway refuses fails alone: the others are written, and the next run resumes', async () => {
    const part = join(dir, 'partial');
    await mkdir(part);
    expectExit(await arkivector(['ingest', part, '--collection', 'kb3', '--create', '--json', ...url]), 0);
    for (const n of ['a', 'b', 'c']) await writeFile(join(part, `${n}.md`), `Document ${n} about rivers.`);
    // The packed upsert of all three fails, then a.md's own retry: the embedder refuses two requests.
    embedder.faults.push({ status: 400 }, { status: 400 });
    const run = await arkivector(['ingest', part, '--collection', 'kb3', '--json', ...url]);
    expectExit(run, 1);
    const summary = JSON.parse(run.stdout);
    assert.deepEqual(
      summary.failed.map((f: { source: string }) => f.source),
      ['a.md'],
    );
    assert.match(summary.failed[0].reason, /^embedder_unavailable/);
    assert.deepEqual([...(await onChain('kb3')).keys()].sort(), ['b.md#0', 'c.md#0']);

    const again = await arkivector(['ingest', part, '--collection', 'kb3', '--json', ...url]);
    expectExit(again, 0);
    const resumed = JSON.parse(again.stdout);
    assert.deepEqual([resumed.created, resumed.unchanged, resumed.transactions], [1, 2, 1]);
    assert.deepEqual(await onChain('kb3'), await expected(['a.md', 'b.md', 'c.md'], part));
  });

  test("an open collection: another writer's entity with the same source is left alone, run after run", async () => {
    const created = await fetch(`${gateway.httpUrl}/v1/collections`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'shared', metric: 'cosine', attributes: INGEST_ATTRIBUTES, open: true }),
    });
    assert.equal(created.status, 200, await created.text());
    const info = (await (await fetch(`${gateway.httpUrl}/v1/collections/shared`)).json()) as { dim: number };
    const definition = validateCollectionDefinition({ dim: info.dim, metric: 'cosine', attributes: INGEST_ATTRIBUTES });
    // A stranger (the unmodified SDK, another account) plants a chunk of the same source under its own id.
    const stranger = walletClient(devnet, 2);
    const planted = await stranger.createEntity(
      vectorArgs(
        'shared',
        {
          id: 'planted#0',
          vector: Array.from({ length: info.dim }, (_, i) => (i === 0 ? 1 : 0)),
          document: 'planted',
          attributes: { source: 'owls.md', chunk: 0, content_sha: 'planted' },
        },
        definition,
      ),
    );
    const block = Number((await publicClient(devnet).waitForTransactionReceipt({ hash: planted.txHash })).blockNumber);
    const caughtUp = await fetch(`${gateway.httpUrl}/v1/collections/shared?min_block=${block}`);
    assert.equal(caughtUp.status, 200, 'the gateway indexed the planted entity');
    const folder = join(dir, 'open');
    await mkdir(folder);
    await writeFile(join(folder, 'owls.md'), 'Owls hunt at night.');

    const first = await arkivector(['ingest', folder, '--collection', 'shared', '--prune', '--json', ...url]);
    expectExit(first, 0);
    const summary = JSON.parse(first.stdout);
    assert.deepEqual([summary.created, summary.deleted, summary.failed], [1, 0, []]);
    const again = await arkivector(['ingest', folder, '--collection', 'shared', '--prune', '--json', ...url]);
    expectExit(again, 0);
    assert.equal(JSON.parse(again.stdout).transactions, 0);
    assert.deepEqual([...(await onChain('shared')).keys()].sort(), ['owls.md#0', 'planted#0']);
  });

  test('--watch applies changes as they happen and stops cleanly on SIGINT', async () => {
    const child = spawn(
      process.execPath,
      ['bin/arkivector.js', 'ingest', docs, '--collection', 'kb', '--prune', '--watch', '--json', ...url],
      { env: { ...process.env, ARKIVECTOR_URL: '', ARKIVECTOR_TOKEN: '' } },
    );
    const killer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    const lines: string[] = [];
    let buffer = '';
    let stderr = '';
    let wake: (() => void) | undefined;
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      wake?.();
    });
    child.stdout.on('data', (c: Buffer) => {
      buffer += c.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      lines.push(...parts.filter(Boolean));
      wake?.();
    });
    const exited = once(child, 'exit');
    const until = async (ready: () => boolean) => {
      while (!ready()) {
        const woke = new Promise<void>((resolve) => (wake = resolve));
        await Promise.race([woke, exited.then(() => assert.fail(`ingest exited early: ${stderr}`))]);
      }
    };
    const nextLine = async (n: number) => {
      await until(() => lines.length >= n);
      return JSON.parse(defined(lines[n - 1], 'lines[n - 1]'));
    };
    try {
      const first = await nextLine(1);
      assert.deepEqual([first.created, first.updated, first.deleted], [0, 0, 0]);
      // Files written before the watcher's first scan ends would count as already there.
      await until(() => stderr.includes('ingest: watching for changes'));
      await writeFile(join(docs, 'watched.md'), 'Sunflowers follow the sun.');
      const second = await nextLine(2);
      assert.equal(second.created, 1);
      assert.deepEqual(await ragSources('sunflowers'), [['watched.md', 0]]);
      await unlink(join(docs, 'new.md'));
      const third = await nextLine(3);
      assert.equal(third.deleted, 1);
      assert.deepEqual(await ragSources('tulips'), []);
      child.kill('SIGINT');
      const [code] = (await exited) as [number | null];
      assert.equal(code, 0, stderr);
    } finally {
      clearTimeout(killer);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
