// A `"__proto__"` key in a request (an own key after JSON.parse) was dropped by the argument schemas without an
// issue: a collection created with attributes {"__proto__": "str", …} or an upsert carrying that attribute
// succeeded without it. Now it is invalid_argument naming the key's path, on REST and MCP, before signing.
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
import { assertProblem, call } from '../http/fixture.ts';

let devnet: Devnet;
let gateway: Gateway;
let dir: string;
let url: string;
let client: Client;
before(async () => {
  devnet = await startTestDevnet({ protocol: 'dbchain' });
  dir = await mkdtemp(join(tmpdir(), 'arkivector-proto-'));
  const keyFile = join(dir, 'signer.key');
  await writeFile(keyFile, defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey);
  const args = ['--rpc', devnet.url, '--http', '127.0.0.1:0', '--private-key-file', keyFile, '--embedder', 'none'];
  gateway = await startGateway(parseServeConfig(args, {}), createLogger('silent'));
  url = defined(gateway.httpUrl, 'httpUrl');
  client = new Client({ name: 'proto-keys', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
});
after(async () => {
  await client.close();
  await gateway.close();
  await devnet.stop();
  await rm(dir, { recursive: true, force: true });
});

/** REST with the body as text (an object literal's `__proto__` would set the prototype, not a key). */
const post = (path: string, body: string) =>
  call(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

async function refusedOnBoth(path: string, body: string, tool: string, extra: object, at: string) {
  const rest = await post(path, body);
  assertProblem(rest, 400, 'invalid_argument');
  assert.ok(
    rest.body.errors.some((e: { path: string }) => e.path === at),
    `errors name ${at}: ${JSON.stringify(rest.body.errors)}`,
  );
  const result = await client.callTool({ name: tool, arguments: { ...extra, ...JSON.parse(body) } });
  assert.equal(result.isError, true, JSON.stringify(result.structuredContent));
  const problem = JSON.parse(defined((result.content as { text: string }[])[0], 'content').text);
  assert.equal(problem.code, 'invalid_argument');
  assert.ok(
    problem.errors.some((e: { path: string }) => e.path === at),
    JSON.stringify(problem.errors),
  );
}

test('a definition attribute named "__proto__" is invalid_argument, not silently left out', async () => {
  const body =
    '{"name":"protos","dim":4,"metric":"cosine","attributes":{"__proto__":"str","topic":"str"},"wait":"none"}';
  await refusedOnBoth('/v1/collections', body, 'arkivector_create_collection', {}, 'attributes.__proto__');
});

test('an upserted attribute named "__proto__" is invalid_argument, not silently left out', async () => {
  const created = await post(
    '/v1/collections',
    '{"name":"protos2","dim":4,"metric":"cosine","attributes":{"topic":"str"},"wait":"indexed"}',
  );
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const body = '{"entities":[{"id":"a","vector":[1,0,0,0],"attributes":{"__proto__":{"topic":"x"}}}],"wait":"none"}';
  await refusedOnBoth(
    '/v1/collections/protos2/entities',
    body,
    'arkivector_upsert',
    { collection: 'protos2' },
    'entities.0.attributes.__proto__',
  );
});
