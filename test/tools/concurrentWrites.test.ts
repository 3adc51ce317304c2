// The write daemon under concurrent writers (issue 8, items 2 and 6): ten real MCP clients upsert in
// parallel through one gateway's signer; every entity must be indexed exactly once on the writer and on a
// separate read-only replica following the same devnet, with no tx_failed. Also: two upserts of one new
// id make one entity; ids of the entity-key form are refused before signing; a key-form ref is a key.
// On both generations (issue 20, item 5): the gateway detects the devnet's protocol (--protocol auto);
// entities written behind its back go through the v1 SDK or, on the DB-chain, viem-encoded calldata.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import { parseServeConfig } from '../../src/config.ts';
import type { Devnet, DevnetProtocolName } from '../../src/devnet/index.ts';
import { createLogger, startGateway, type Gateway } from '../../src/node/index.ts';
import { rpcResult, startTestDevnet } from '../helpers/devnet.ts';
import { createEntityAs, PROTOCOLS } from '../helpers/generations.ts';
import { definitionArgs, vectorArgs } from '../helpers/writes.ts';
import { defined } from '../helpers/defined.ts';

const open: CollectionDefinition = {
  index: { m: 16, ef_construction: 64, ef_search: 40 },
  writers: [],
  dim: 3,
  metric: 'cosine',
  open: true,
  attributes: { client: 'i32' },
};

/** Writers and entities per generation: the DB-chain run is smaller (200 entities, not 500) to keep `npm test` short. */
const LOAD: Record<DevnetProtocolName, { CLIENTS: number; PER_CLIENT: number }> = {
  v1: { CLIENTS: 10, PER_CLIENT: 50 },
  dbchain: { CLIENTS: 10, PER_CLIENT: 20 },
};
const BATCH = 5;

type Problem = { code: string; status: number; detail: string; [k: string]: unknown };
const outcome = (result: unknown) => {
  const r = result as CallToolResult;
  if (r.isError) return { problem: JSON.parse((r.content[0] as { text: string }).text) as Problem };
  return { value: r.structuredContent as Record<string, unknown> };
};

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'arkivector-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

for (const protocol of PROTOCOLS)
  describe(`write daemon: concurrent writers through one signer (${protocol})`, () => {
    const { CLIENTS, PER_CLIENT } = LOAD[protocol];
    let devnet: Devnet;
    let writer: Gateway;
    let replica: Gateway;
    let dir: string;

    before(async () => {
      devnet = await startTestDevnet({ protocol });
      await createEntityAs(devnet, 0, definitionArgs('crowd', open));
      dir = await mkdtemp(join(tmpdir(), 'arkivector-key-'));
      await writeFile(join(dir, 'key'), `${defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey}\n`);
      const common = ['--rpc', devnet.url, '--http', '127.0.0.1:0', '--ws', devnet.wsUrl, '--min-block-timeout', '30'];
      writer = await startGateway(
        parseServeConfig([...common, '--private-key-file', join(dir, 'key')], {}),
        createLogger('silent'),
      );
      replica = await startGateway(parseServeConfig(common, {}), createLogger('silent'));
    });
    after(async () => {
      await writer?.close();
      await replica?.close();
      await devnet?.stop();
      await rm(dir, { recursive: true, force: true });
    });

    test(`${CLIENTS} clients x ${PER_CLIENT} entities in batches of ${BATCH}: each indexed once on writer and replica, no tx_failed`, async () => {
      const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connect(writer.httpUrl!)));
      try {
        const failures: Problem[] = [];
        let highest = 0;
        await Promise.all(
          clients.map(async (client, c) => {
            for (let b = 0; b < PER_CLIENT / BATCH; b++) {
              const entities = Array.from({ length: BATCH }, (_, i) => ({
                id: `c${c}-e${b * BATCH + i}`,
                vector: [1, c + 1, b * BATCH + i + 1],
                attributes: { client: c },
              }));
              // Alternate wait modes so sends overlap with receipts and indexing of earlier batches.
              const wait = (['indexed', 'receipt', 'none'] as const)[b % 3];
              const answer = outcome(
                await client.callTool({
                  name: 'arkivector_upsert',
                  arguments: { collection: 'crowd', entities, wait },
                }),
              );
              if (answer.problem) failures.push(answer.problem);
              else highest = Math.max(highest, Number(answer.value!.block_number ?? 0));
            }
          }),
        );
        assert.deepEqual(failures, [], 'no batch fails');
        // Everything sent is mined once the signer's pending nonce is spent; read both nodes at the head.
        const head = Number(await rpcResult<string>(devnet, 'eth_blockNumber'));
        assert.ok(head >= highest);
        for (const node of [writer, replica]) {
          const reader = node === writer ? clients[0]! : await connect(node.httpUrl!);
          const count = outcome(
            await reader.callTool({ name: 'arkivector_count', arguments: { collection: 'crowd', min_block: head } }),
          );
          assert.equal(count.value?.count, CLIENTS * PER_CLIENT, 'every entity is live, once');
          const described = (await (await fetch(`${node.httpUrl}/v1/collections/crowd?min_block=${head}`)).json()) as {
            stats: { live_entities: number; shadowed: number; rejected: number };
          };
          assert.deepEqual(described.stats, { live_entities: CLIENTS * PER_CLIENT, shadowed: 0, rejected: 0 });
          for (let c = 0; c < CLIENTS; c++) {
            const mine = outcome(
              await reader.callTool({
                name: 'arkivector_count',
                arguments: { collection: 'crowd', where: `client = ${c}`, min_block: head },
              }),
            );
            assert.equal(mine.value?.count, PER_CLIENT);
          }
          if (node !== writer) await reader.close();
        }
      } finally {
        await Promise.all(clients.map((c) => c.close()));
      }
    });

    test('two concurrent upserts of one new id make one entity: the second updates the first', async () => {
      const [a, b] = [await connect(writer.httpUrl!), await connect(writer.httpUrl!)];
      try {
        const upsert = (client: Client, vector: number[]) =>
          client.callTool({
            name: 'arkivector_upsert',
            arguments: { collection: 'crowd', entities: [{ id: 'raced', vector }], wait: 'none' },
          });
        const [first, second] = (await Promise.all([upsert(a, [1, 0, 0]), upsert(b, [0, 1, 0])])).map(outcome);
        assert.ok(first && second, 'both upserts answered');
        const results = [first, second].map((o) => (o.value!.results as { key: string; op: string }[])[0]!);
        assert.deepEqual(
          results.map((r) => r.op),
          ['create', 'update'],
        );
        assert.equal(results[0]!.key, results[1]!.key);
        const head = Number(await rpcResult<string>(devnet, 'eth_blockNumber'));
        const got = outcome(
          await a.callTool({
            name: 'arkivector_get',
            arguments: { collection: 'crowd', ref: 'raced', min_block: head },
          }),
        );
        const entity = got.value!.entity as { key: string };
        assert.equal(entity.key, results[0]!.key);
        const described = (await (await fetch(`${replica.httpUrl}/v1/collections/crowd?min_block=${head}`)).json()) as {
          stats: { shadowed: number };
        };
        assert.equal(described.stats.shadowed, 0, 'no second entity with the same id');
      } finally {
        await a.close();
        await b.close();
      }
    });

    test('an id of the entity-key form is invalid_argument before anything is signed', async () => {
      const client = await connect(writer.httpUrl!);
      try {
        const nonce = await rpcResult<string>(devnet, 'eth_getTransactionCount', [
          defined(devnet.accounts[1], 'devnet.accounts[1]').address,
          'pending',
        ]);
        for (const keyForm of [`0x${'ab'.repeat(32)}`, `0X${'AB'.repeat(32)}`]) {
          const refused = outcome(
            await client.callTool({
              name: 'arkivector_upsert',
              arguments: { collection: 'crowd', entities: [{ id: keyForm, vector: [1, 1, 1] }] },
            }),
          );
          assert.equal(refused.problem?.code, 'invalid_argument', keyForm);
        }
        const after = await rpcResult<string>(devnet, 'eth_getTransactionCount', [
          defined(devnet.accounts[1], 'devnet.accounts[1]').address,
          'pending',
        ]);
        assert.equal(after, nonce, 'nothing was sent');
      } finally {
        await client.close();
      }
    });

    test('a key-form ref is a key on MCP and REST get/delete; an entity whose id spells that key is skipped', async () => {
      const client = await connect(writer.httpUrl!);
      try {
        const made = outcome(
          await client.callTool({
            name: 'arkivector_upsert',
            arguments: { collection: 'crowd', entities: [{ id: 'victim', vector: [0, 0, 1] }] },
          }),
        );
        const key = (made.value!.results as { key: string }[])[0]!.key;
        // A hostile writer (account 2) hand-crafts an entity whose id is the victim's key, past the codec.
        const honest = vectorArgs('crowd', { id: 'impostor', vector: [1, 0, 0] }, open);
        const upper = `0X${key.slice(2).toUpperCase()}`;
        // The key form is case-insensitive in both parts: `0X` and upper-case hex spell the same key (issue 24, 18).
        for (const spelling of [key, upper]) {
          const attributes = honest.attributes.map((a) =>
            a.key === 'arkivector_id' ? { key: a.key, value: spelling } : a,
          );
          await createEntityAs(devnet, 2, { ...honest, attributes }, open);
        }
        const head = Number(await rpcResult<string>(devnet, 'eth_blockNumber'));
        for (const node of [writer, replica])
          for (const ref of [`0x${key.slice(2).toUpperCase()}`, upper]) {
            const rest = (await (
              await fetch(`${node.httpUrl}/v1/collections/crowd/entities/${ref}?min_block=${head}`)
            ).json()) as { entity: { id: string; key: string } };
            assert.deepEqual([rest.entity.id, rest.entity.key], ['victim', key], ref);
          }
        const got = outcome(
          await client.callTool({
            name: 'arkivector_get',
            arguments: { collection: 'crowd', ref: key, min_block: head },
          }),
        );
        assert.equal((got.value!.entity as { id: string }).id, 'victim');
        const dry = outcome(
          await client.callTool({ name: 'arkivector_delete', arguments: { collection: 'crowd', refs: [key] } }),
        );
        assert.deepEqual(dry.value!.results, [{ id: 'victim', key, op: 'delete' }]);
        const rest = (await (
          await fetch(`${writer.httpUrl}/v1/collections/crowd/entities/${key}?dry_run=true`, { method: 'DELETE' })
        ).json()) as { results: unknown };
        assert.deepEqual(rest.results, [{ id: 'victim', key, op: 'delete' }]);
        const described = (await (await fetch(`${replica.httpUrl}/v1/collections/crowd?min_block=${head}`)).json()) as {
          stats: { rejected: number };
        };
        assert.equal(described.stats.rejected, 2, 'both impostors are skipped and counted');
      } finally {
        await client.close();
      }
    });

    test("a nonce spent behind the writer's back (another process with the same key) heals: no tx_failed", async () => {
      const client = await connect(writer.httpUrl!);
      try {
        const write = async (id: string) =>
          outcome(
            await client.callTool({
              name: 'arkivector_upsert',
              arguments: { collection: 'crowd', entities: [{ id, vector: [1, 1, 0] }], wait: 'receipt' },
            }),
          );
        assert.equal((await write('before-gap')).problem, undefined);
        // The node's next nonce is now stale: the chain has moved on without it.
        await createEntityAs(devnet, 1, vectorArgs('crowd', { id: 'outside', vector: [0, 1, 1] }, open), open);
        await createEntityAs(devnet, 1, vectorArgs('crowd', { id: 'outside-2', vector: [0, 1, 1] }, open), open);
        const healed = await write('after-gap');
        assert.equal(healed.problem, undefined, JSON.stringify(healed.problem));
        assert.equal((await write('after-heal')).problem, undefined);
      } finally {
        await client.close();
      }
    });
  });
