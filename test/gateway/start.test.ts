// What `npm start` does on a fresh machine: `arkivector serve` with no --rpc starts the embedded devnet,
// writes the demo collections, serves REST and MCP over HTTP, and prints how to connect. Checked with
// fetch and with the MCP SDK's real Client at the printed URL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseServeConfig, ConfigError } from '../../src/config.ts';
import { defined } from '../helpers/defined.ts';

test('serve without --rpc: demo collections over REST and MCP at the printed URLs, clean exit on SIGTERM; the chain is kept in the per-user data directory', async () => {
  // The installed command keeps its memory like `npm start` does, in ${XDG_DATA_HOME:-~/.local/share}/arkivector.
  const xdg = await mkdtemp(join(tmpdir(), 'arkivector-xdg-'));
  const kept = join(xdg, 'arkivector', 'devnet-dbchain.json');
  const child = spawn(
    process.execPath,
    [
      'bin/arkivector.js',
      'serve',
      '--http',
      '127.0.0.1:0',
      '--devnet-port',
      '0',
      '--block-time',
      '1',
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, XDG_DATA_HOME: xdg } },
  );
  let output = '';
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  try {
    const mcpUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner within 60 s:\n${output}\n${errors}`)), 60_000);
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /MCP:\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(defined(match[1], 'match[1]'));
        }
      });
      child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${errors}`)));
    });
    assert.match(output, /claude mcp add --transport http arkivector http:\/\/127\.0\.0\.1:\d+\/mcp/);
    assert.match(output, /"mcpServers": \{ "arkivector": \{ "command"/);
    assert.ok(output.includes(`Memory:   kept in ${kept} (delete it to start from an empty chain)`), output);
    const base = mcpUrl.replace(/\/mcp$/, '');
    const rest = (await (await fetch(`${base}/v1/collections`)).json()) as {
      collections: { name: string; stats: { live_entities: number } }[];
    };
    assert.deepEqual(
      rest.collections.map((c) => [c.name, c.stats.live_entities]),
      [
        ['demo.docs', 200],
        ['notes', 3],
      ],
    );
    const client = new Client({ name: 'arkivector-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl)));
    try {
      const listed = await client.callTool({ name: 'arkivector_list_collections', arguments: {} });
      assert.match(
        defined((listed.content as { text: string }[])[0], '(listed.content as { text: string }[])[0]').text,
        /^2 collection\(s\)\n- demo\.docs: halfvec\(8\), index hnsw halfvec_cosine_ops, 200 live entities, sync (live|catching_up)\n- notes: halfvec\(4\)/,
      );
    } finally {
      await client.close();
    }
  } finally {
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    assert.equal(code, 0, errors);
    const state = existsSync(kept);
    const snapshot = existsSync(join(xdg, 'arkivector', 'snapshot'));
    await rm(xdg, { recursive: true, force: true });
    assert.ok(state, 'the chain was kept');
    assert.ok(snapshot, 'the snapshots were kept');
  }
});

test('config: flags, environment twins, defaults and refusals', () => {
  const defaults = parseServeConfig([], {});
  assert.deepEqual(
    [defaults.rpc, defaults.http, defaults.stdio, defaults.confirmations, defaults.liveLag, defaults.minBlockTimeoutMs],
    [undefined, { host: '127.0.0.1', port: 8787 }, false, 0, 5, 10_000],
  );
  const stdio = parseServeConfig(['--stdio', '--rpc', 'http://127.0.0.1:8545'], {});
  assert.equal(stdio.http, undefined, '--stdio alone serves no HTTP');
  const env = parseServeConfig([], {
    ARKIVECTOR_RPC: 'http://127.0.0.1:9',
    ARKIVECTOR_PUBLIC_READ: 'true',
    ARKIVECTOR_COLLECTIONS: 'a,b',
    ARKIVECTOR_HTTP: '[::1]:9000',
  });
  assert.deepEqual(
    [env.rpc, env.publicRead, env.collections, env.http],
    ['http://127.0.0.1:9', true, ['a', 'b'], { host: '::1', port: 9000 }],
  );
  assert.equal(
    parseServeConfig(['--confirmations', '3'], { ARKIVECTOR_CONFIRMATIONS: '9' }).confirmations,
    3,
    'flags win over the environment',
  );
  assert.equal(
    parseServeConfig(
      ['--collection-owner', 'notes=0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266'],
      {},
    ).collectionOwners.get('notes'),
    '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
  );
  assert.match(parseServeConfig(['--chain', 'braga'], {}).rpc!, /^https:\/\//);
  const tiramisu = parseServeConfig(['--chain', 'tiramisu', '--rpc-key', 'k1'], {});
  assert.deepEqual(
    [tiramisu.rpc, tiramisu.ws, tiramisu.protocol, tiramisu.rpcKey],
    [
      'https://rpc.tiramisu.db-chain.testnet.arkiv.network',
      'wss://rpc.tiramisu.db-chain.testnet.arkiv.network',
      'dbchain',
      'k1',
    ],
  );
  assert.equal(parseServeConfig([], { ARKIVECTOR_RPC_KEY: 'k2' }).rpcKey, 'k2');
  assert.equal(parseServeConfig([], {}).protocol, 'dbchain', 'the embedded devnet runs the DB-chain');
  assert.equal(parseServeConfig(['--protocol', 'v1'], {}).protocol, 'v1');
  assert.equal(parseServeConfig(['--rpc', 'http://127.0.0.1:9'], {}).protocol, 'auto', 'auto with --rpc');
  for (const [args, pattern] of [
    [['--chain', 'mainnet'], /--chain must be one of tiramisu, braga, kaolin, localhost/],
    [['--protocol', 'gen-b'], /--protocol must be one of v1, dbchain, auto/],
    [['--protocol', 'auto'], /--protocol auto needs --rpc or --chain/],
    [['--http', 'nope'], /--http must be HOST:PORT/],
    [['--confirmations=-1'], /--confirmations must be at least 0/],
    [['--embedder', 'http://127.0.0.1:1'], /--embedder needs --embedder-model/],
    [['--rpc', 'ftp://x'], /--rpc must be an http\(s\) URL/],
    [['--bogus'], /Unknown option '--bogus'/],
  ] as const) {
    assert.throws(
      () => parseServeConfig([...args], {}),
      (e: Error) => e instanceof ConfigError && pattern.test(e.message),
      args.join(' '),
    );
  }
});
