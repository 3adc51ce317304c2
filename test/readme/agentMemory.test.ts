// The README's "Agent memory" snippet with its own "try it on your machine" change applied, run as an MCP
// client would run it (the SDK's stdio transport): an agent's memory on the embedded devnet starts empty
// (no demo collections) and keeps what the agent writes. Paths and the embedder point at this test's own.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { defined } from '../helpers/defined.ts';
import { type EmbedderFixture, startEmbedder, wordEmbedding } from '../helpers/embedder.ts';
import { docSection, fencedBlocks } from '../helpers/readme.ts';

type Entry = { command: string; args: string[]; env?: Record<string, string> };

/** The snippet after the README's "try it" sentence: `replace A with B and drop env`. */
function tryItEntry(): Entry {
  const section = docSection('memory.md', 'Agent memory');
  const entry = (
    JSON.parse(defined(fencedBlocks(section, 'json')[0], 'the Agent memory snippet')) as {
      mcpServers: { arkivector: Entry };
    }
  ).mcpServers.arkivector;
  const [, from, to] = defined(
    /To try it on your machine first, replace\s+`([^`]+)` with\s+`([^`]+)` and drop `env`/.exec(section) ?? undefined,
    'the try-it sentence',
  );
  const list = (text: string | undefined) => JSON.parse(`[${defined(text, 'arguments')}]`) as string[];
  const [remove, add] = [list(from), list(to)];
  const at = entry.args.findIndex((_, i) => remove.every((arg, j) => entry.args[i + j] === arg));
  assert.ok(at >= 0, `the snippet has no ${remove.join(' ')}`);
  const args = [...entry.args.slice(0, at), ...add, ...entry.args.slice(at + remove.length)];
  return { command: entry.command, args };
}

describe('README: Agent memory, tried on your machine', () => {
  let dir: string;
  let embedder: EmbedderFixture;
  let client: Client;
  let stderr = '';

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arkivector-readme-memory-'));
    embedder = await startEmbedder({ models: { 'nomic-embed-text': wordEmbedding } });
    const entry = tryItEntry();
    // The installed command is this checkout's bin/arkivector.js (the README's "From a checkout" line).
    assert.equal(entry.command, 'arkivector');
    const args = [resolve('bin/arkivector.js'), ...entry.args.map((arg) => (arg === '/path/to/memory' ? dir : arg))];
    // Not the README's 8545: other suites and nodes may hold it on a shared machine (README: --devnet-port).
    // This test's own embedder instead of the default local model, which a test machine cannot fetch.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        ...args,
        ...['--embedder', embedder.url, '--embedder-model', 'nomic-embed-text'],
        ...['--devnet-port', '0', '--log-level', 'warn'],
      ],
      env: {},
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    client = new Client({ name: 'readme-agent-memory', version: '1.0.0' });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close();
    await embedder?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("the agent's memory starts empty: no demo collections seeded into it", async () => {
    const listed = (await client.callTool({ name: 'arkivector_list_collections', arguments: {} })) as CallToolResult;
    assert.notEqual(listed.isError, true, `${JSON.stringify(listed.content)}\n${stderr}`);
    assert.deepEqual((listed.structuredContent as { collections: unknown[] }).collections, [], stderr);
  });
});
