// README "Errors": `invalid_argument` carries `errors: [{path, message}]`, the same object on MCP and REST.
// Checks raised with a message alone (a collection name, a DB-chain bound on a definition) answered
// without the list; a client reading `errors` found nothing to show.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseServeConfig } from '../../src/config.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { createLogger, type Gateway, startGateway } from '../../src/node/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { docSection, tableRows } from '../helpers/readme.ts';
import { assertProblem, call } from '../http/fixture.ts';

let devnet: Devnet;
let gateway: Gateway;
let dir: string;
let url: string;
before(async () => {
  devnet = await startTestDevnet({ protocol: 'dbchain' });
  dir = await mkdtemp(join(tmpdir(), 'arkivector-errors-'));
  const keyFile = join(dir, 'signer.key');
  await writeFile(keyFile, defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey);
  const args = ['--rpc', devnet.url, '--http', '127.0.0.1:0', '--private-key-file', keyFile, '--embedder', 'none'];
  gateway = await startGateway(parseServeConfig(args, {}), createLogger('silent'));
  url = defined(gateway.httpUrl, 'httpUrl');
});
after(async () => {
  await gateway.close();
  await devnet.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Definitions each refused by a check that has only a message to give. */
const REFUSED = [
  { name: '../x', dim: 4, metric: 'cosine' },
  { name: 'reserved', dim: 4, metric: 'cosine', attributes: { key: 'str' } },
  {
    name: 'wide',
    dim: 4,
    metric: 'cosine',
    attributes: Object.fromEntries(Array.from({ length: 28 }, (_, i) => [`a${i}`, 'str'])),
  },
];

test('README Errors: the invalid_argument row names `errors: [{path, message}]`', () => {
  const row = defined(
    tableRows(docSection('README.md', 'Errors'), 'code').find(([code]) => code === '`invalid_argument`'),
    'the invalid_argument row',
  );
  assert.match(defined(row[3], 'extra fields'), /`errors: \[\{path, message\}\]`/);
});

test('README Errors: every invalid_argument carries its errors list, the same on REST and MCP', async () => {
  const client = new Client({ name: 'readme-errors', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  try {
    for (const definition of REFUSED) {
      const rest = await call(`${url}/v1/collections`, { method: 'POST', json: definition });
      assertProblem(rest, 400, 'invalid_argument');
      assert.ok(Array.isArray(rest.body.errors) && rest.body.errors.length > 0, JSON.stringify(rest.body));
      for (const issue of rest.body.errors) {
        assert.equal(typeof issue.path, 'string');
        assert.equal(typeof issue.message, 'string');
      }
      const tool = await client.callTool({ name: 'arkivector_create_collection', arguments: definition });
      assert.equal(tool.isError, true);
      const text = defined((tool.content as { type: string; text: string }[])[0], 'content').text;
      assert.deepEqual(JSON.parse(text), rest.body);
    }
  } finally {
    await client.close();
  }
});
