// `arkivector entities` / `list` and `arkivector forget` end to end: the real `bin/arkivector.js` as a child
// process against a gateway (in process, with a signer) following a devnet, with another writer's memory
// written by the unmodified SDK. Pages (text and --json, --cursor, --all), dry-run-first forgetting, and
// the exit codes: 0 ok, 1 refused, 2 usage.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { entitiesSpec } from '../../src/commands/entities.ts';
import { forgetSpec } from '../../src/commands/forget.ts';
import { helpFor } from '../../src/commands/index.ts';
import { parseServeConfig } from '../../src/config.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { createLogger, type Gateway, startGateway } from '../../src/node/index.ts';
import { startTestDevnet, walletClient } from '../helpers/devnet.ts';
import { vectorArgs } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `arkivector ARGS` (bounded: killed after 120 s). */
async function arkivector(args: string[]): Promise<Run> {
  const child = spawn(process.execPath, ['bin/arkivector.js', ...args], {
    env: { ...process.env, ARKIVECTOR_URL: '', ARKIVECTOR_TOKEN: '' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

const expectExit = (run: Run, code: number) =>
  assert.equal(run.code, code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);

const MEMORIES: CollectionDefinition = {
  dim: 2,
  metric: 'cosine',
  open: true,
  attributes: { topic: 'str' },
  index: { m: 16, ef_construction: 64, ef_search: 40 },
  writers: [],
};

type Page = { as_of_block: number; total: number; entities: { id: string }[]; next_cursor: string | null };

describe('arkivector entities / list / forget against a gateway', () => {
  let devnet: Devnet;
  let gateway: Gateway;
  let dir: string;
  let url: string[];
  const trip = "topic = 'trip'";

  before(async () => {
    devnet = await startTestDevnet();
    dir = await mkdtemp(join(tmpdir(), 'arkivector-cli-forget-'));
    await writeFile(join(dir, 'key'), `${defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey}\n`);
    gateway = await startGateway(
      parseServeConfig(
        ['--rpc', devnet.url, '--ws', devnet.wsUrl, '--http', '127.0.0.1:0', '--private-key-file', join(dir, 'key')],
        {},
      ),
      createLogger('silent'),
    );
    url = ['--url', gateway.httpUrl!];
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${gateway.httpUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(response.status, 200, await response.clone().text());
      return response.json();
    };
    await post('/v1/collections', { name: 'memories', ...MEMORIES });
    await post('/v1/collections/memories/entities', {
      entities: [
        { id: 'lisbon', vector: [1, 0], document: 'Flew to Lisbon.', attributes: { topic: 'trip' } },
        { id: 'porto', vector: [1, 0.1], document: 'Train to Porto.', attributes: { topic: 'trip' } },
        { id: 'tea', vector: [0, 1], document: 'Drinks green tea.', attributes: { topic: 'food' } },
      ],
    });
    await post('/v1/collections/memories/entities', {
      entities: [{ id: 'faro', vector: [1, 0.2], document: 'Beach week in Faro.', attributes: { topic: 'trip' } }],
    });
    await walletClient(devnet, 2).createEntity(
      vectorArgs('memories', { id: 'their-trip', vector: [1, 1], attributes: { topic: 'trip' } }, MEMORIES),
    );
    const synced = await fetch(`${gateway.httpUrl}/v1/collections?min_block=${devnet.headNumber}`);
    assert.equal(synced.status, 200);
  });
  after(async () => {
    await gateway?.close();
    await devnet?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('help lists entities, list and forget and describes every flag', async () => {
    const help = await arkivector(['help']);
    expectExit(help, 0);
    for (const command of ['entities COLLECTION', 'list COLLECTION', 'forget COLLECTION'])
      assert.ok(help.stdout.includes(command), `help lists ${command}`);
    for (const spec of [entitiesSpec, forgetSpec]) {
      const run = await arkivector([spec.name, '--help']);
      expectExit(run, 0);
      assert.equal(run.stdout, `${await helpFor([spec.name])}\n`);
      for (const flag of [...Object.keys(spec.flags), 'url', 'json', 'help'])
        assert.match(run.stdout, new RegExp(`--${flag}\\b`), `${spec.name} --help describes --${flag}`);
    }
  });

  test('entities: a page as text with the next cursor, continued with --cursor; list --all --json follows every page', async () => {
    const first = await arkivector(['entities', 'memories', '--where', trip, '--limit', '2', '--documents', ...url]);
    expectExit(first, 0);
    const lines = first.stdout.trimEnd().split('\n');
    assert.match(defined(lines[0], 'lines[0]'), /^memories at block (\d+) \(\w+\): 4 entities, newest first$/);
    assert.match(defined(lines[1], 'lines[1]'), /^- their-trip {2}block \d+ {2}topic=trip$/);
    const cursor = /^next page: --cursor (\S+)$/.exec(lines.at(-1)!)?.[1];
    assert.ok(cursor, first.stdout);
    const second = await arkivector([
      'entities',
      'memories',
      '--where',
      trip,
      '--limit',
      '2',
      '--cursor',
      cursor,
      ...url,
    ]);
    expectExit(second, 0);
    assert.doesNotMatch(second.stdout, /next page/, 'two pages of two: the second is the last');
    assert.equal(second.stdout.trimEnd().split('\n').length, 3, `header and two entities\n${second.stdout}`);

    const all = await arkivector(['list', 'memories', '--where', trip, '--limit', '1', '--all', '--json', ...url]);
    expectExit(all, 0);
    const pages = all.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Page);
    assert.equal(pages.length, 4, 'one JSON answer per page');
    assert.equal(new Set(pages.map((p) => p.as_of_block)).size, 1, 'every page from one block');
    assert.deepEqual(pages.flatMap((p) => p.entities.map((e) => e.id)).sort(), [
      'faro',
      'lisbon',
      'porto',
      'their-trip',
    ]);
    assert.equal(pages.at(-1)!.next_cursor, null);
  });

  test('entities: a forged cursor is refused (exit 1), a bad flag is a usage error (exit 2)', async () => {
    const forged = await arkivector(['entities', 'memories', '--cursor', 'bm90LWEtY3Vyc29y', ...url]);
    expectExit(forged, 1);
    assert.match(forged.stderr, /invalid_argument \(400\): cursor/);
    expectExit(await arkivector(['entities', 'memories', '--limit', '101', ...url]), 2);
    expectExit(await arkivector(['entities', 'memories', '--order', 'sideways', ...url]), 2);
    expectExit(await arkivector(['entities', ...url]), 2);
  });

  test('forget: dry run unless --yes, skips another writer’s memory, then the topic is gone', async () => {
    expectExit(await arkivector(['forget', 'memories', ...url]), 2);
    const dry = await arkivector(['forget', 'memories', '--where', trip, ...url]);
    expectExit(dry, 0);
    assert.match(dry.stdout, /^dry run: would delete 3 entities in 1 transaction \(run again with --yes to delete\)$/m);
    assert.match(dry.stdout, /^4 matched at block \d+$/m);
    assert.match(dry.stdout, /^1 skipped: another writer's$/m);
    const still = JSON.parse((await arkivector(['entities', 'memories', '--where', trip, '--json', ...url])).stdout);
    assert.equal(still.total, 4, 'the dry run deleted nothing');

    const real = await arkivector(['forget', 'memories', '--where', trip, '--yes', '--json', ...url]);
    expectExit(real, 0);
    const answer = JSON.parse(real.stdout) as { dry_run: boolean; results: unknown[]; block_number: number };
    assert.equal(answer.dry_run, false);
    assert.equal(answer.results.length, 3);
    const left = await arkivector([
      'entities',
      'memories',
      '--where',
      trip,
      '--min-block',
      String(answer.block_number),
      '--json',
      ...url,
    ]);
    expectExit(left, 0);
    assert.deepEqual(
      (JSON.parse(left.stdout) as Page).entities.map((e) => e.id),
      ['their-trip'],
    );
    const food = JSON.parse(
      (await arkivector(['entities', 'memories', '--where', "topic = 'food'", '--json', ...url])).stdout,
    );
    assert.equal(food.total, 1, 'another topic is untouched');
  });
});
