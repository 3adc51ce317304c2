// The README's "Command line" example block, run as written (each line in bash, `arkivector` on PATH) against
// a gateway set up as the README recommends: a signer, and an embedder of a real model's dimension (768,
// nomic-embed-text), not the 4 of the vector examples.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseServeConfig } from '../../src/config.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { createLogger, type Gateway, startGateway } from '../../src/node/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { type EmbedderFixture, hashedEmbedding, startEmbedder } from '../helpers/embedder.ts';
import { arkivectorOnPath, docSection, fencedBlocks, runShell, shellCommands } from '../helpers/readme.ts';

describe('README: Command line', () => {
  let devnet: Devnet;
  let embedder: EmbedderFixture;
  let gateway: Gateway;
  let dir: string;

  before(async () => {
    devnet = await startTestDevnet();
    embedder = await startEmbedder({ models: { 'nomic-embed-text': (text) => hashedEmbedding(text, 768) } });
    dir = await mkdtemp(join(tmpdir(), 'arkivector-readme-'));
    await writeFile(join(dir, 'key'), defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey);
    const args = ['--rpc', devnet.url, '--ws', devnet.wsUrl, '--http', '127.0.0.1:0'];
    gateway = await startGateway(
      parseServeConfig(
        [
          ...args,
          '--private-key-file',
          join(dir, 'key'),
          '--embedder',
          embedder.url,
          '--embedder-model',
          'nomic-embed-text',
        ],
        {},
      ),
      createLogger('silent'),
    );
  });
  after(async () => {
    await gateway?.close();
    await embedder?.close();
    await devnet?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('every command of the example block works as written, in order', { timeout: 600_000 }, async () => {
    const [block] = fencedBlocks(docSection('cli.md', 'Command line'), 'sh');
    const commands = shellCommands(defined(block, 'the first sh block of "Command line"'));
    assert.ok(commands.length >= 10, `only ${commands.length} commands found`);
    const env = {
      ...process.env,
      PATH: `${await arkivectorOnPath(dir)}:${process.env.PATH}`,
      ARKIVECTOR_URL: defined(gateway.httpUrl, 'httpUrl'),
      ARKIVECTOR_TOKEN: '',
    };
    for (const command of commands) {
      const run = await runShell(command, env);
      assert.equal(run.code, 0, `${command}\nexit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
      // What the example pipes on: the documents it asks jq for are there.
      if (/\{id, document\}/.test(command)) {
        const rows = run.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { document: unknown });
        assert.ok(rows.length > 0, command);
        for (const row of rows) assert.equal(typeof row.document, 'string', `${command}: ${JSON.stringify(row)}`);
      }
      if (/search journal/.test(command)) assert.match(run.stdout, /miso/, command);
    }
  });
});
