// The signer's transport: an RPC URL with credentials (user:password@host, as some providers issue them)
// must work for writes as it does for reads. fetch refuses such URLs, so the credentials travel as Basic
// auth; a loopback proxy in front of the devnet insists on them.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import {
  ChainUnreachableError,
  createArkivV1Writer,
  createHttpTransport,
  emptyBatch as emptyStorageOps,
} from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { defined } from '../helpers/defined.ts';
import { rpcResult, startTestDevnet } from '../helpers/devnet.ts';
import { devnetProxy, methodsOf, type RpcProxy } from '../helpers/rpcProxy.ts';

let devnet: Devnet;
let proxy: RpcProxy;
let proxyUrl: string;
const seen: (string | undefined)[] = [];

before(async () => {
  devnet = await startTestDevnet();
  proxy = await devnetProxy(devnet.url, async (req, res) => {
    seen.push(req.headers.authorization);
    if (req.headers.authorization === `Basic ${Buffer.from('user:s3cret').toString('base64')}`) return false;
    res.writeHead(401).end('unauthorized');
    return true;
  });
  proxyUrl = proxy.url.replace('http://', 'http://user:s3cret@');
});
after(async () => {
  await proxy.close();
  await devnet.stop();
});

test('writer: an RPC URL with credentials signs, sends and follows the receipt through Basic auth', async () => {
  const writer = createArkivV1Writer({
    rpcUrl: proxyUrl,
    chainId: devnet.chainId,
    privateKey: defined(devnet.accounts[0], 'dev account 0').privateKey,
  });
  assert.ok((await writer.balance()) > 0n);
  const ops = emptyStorageOps();
  ops.creates.push({
    btl: 100n,
    contentType: 'text/plain',
    payload: new TextEncoder().encode('hello'),
    stringAttributes: [{ key: 'note', value: 'through a proxy' }],
    numericAttributes: [],
  });
  const sent = await writer.send(ops);
  const outcome = await writer.waitForReceipt(sent.hash, 30_000);
  assert.equal(outcome.status, 'success');
  assert.ok(seen.length > 0 && seen.every((h) => h !== undefined), 'every request carried the credentials');
});

test('writer: a send whose answer is lost after the node took it is one transaction, reported sent', async () => {
  // The node takes the first eth_sendRawTransaction, then its answer is lost (HTTP 502): the transport
  // retries the same bytes, which the node knows. Before the fix that retry was a refusal ("already known").
  let lost = 0;
  const lossy = await devnetProxy(devnet.url, async (_req, res, body, forward) => {
    if (lost > 0 || (JSON.parse(body.toString('utf8')) as { method?: string }).method !== 'eth_sendRawTransaction')
      return false;
    await forward();
    lost++;
    res.writeHead(502).end('bad gateway');
    return true;
  });
  try {
    const account = defined(devnet.accounts[1], 'dev account 1');
    const writer = createArkivV1Writer({
      rpcUrl: lossy.url,
      chainId: devnet.chainId,
      privateKey: account.privateKey,
    });
    const nonceOf = async () =>
      Number(await rpcResult<string>(devnet, 'eth_getTransactionCount', [account.address, 'latest']));
    const before = await nonceOf();
    const ops = emptyStorageOps();
    ops.creates.push({
      btl: 100n,
      contentType: 'text/plain',
      payload: new TextEncoder().encode('once'),
      stringAttributes: [{ key: 'note', value: 'answer lost' }],
      numericAttributes: [],
    });
    const sent = await writer.send(ops);
    assert.equal(lost, 1, 'the first answer was lost');
    const outcome = await writer.waitForReceipt(sent.hash, 30_000);
    assert.equal(outcome.status, 'success');
    assert.equal((await nonceOf()) - before, 1, 'exactly one transaction went out');
  } finally {
    await lossy.close();
  }
});

test('writer: a mined send whose every answer was lost (the transport gave up) is reported sent, not unavailable', async () => {
  // Every eth_sendRawTransaction reaches the node and its answer is lost: the transport retries the same
  // bytes, then gives up. Before, that was chain_unavailable although the node held it, so a client retried
  // and wrote twice.
  let lost = 0;
  const lossy = await devnetProxy(devnet.url, async (_req, res, body, forward) => {
    if ((JSON.parse(body.toString('utf8')) as { method?: string }).method !== 'eth_sendRawTransaction') return false;
    await forward();
    lost++;
    res.writeHead(502).end('bad gateway');
    return true;
  });
  try {
    const account = defined(devnet.accounts[2], 'dev account 2');
    const writer = createArkivV1Writer({ rpcUrl: lossy.url, chainId: devnet.chainId, privateKey: account.privateKey });
    const nonceOf = async () =>
      Number(await rpcResult<string>(devnet, 'eth_getTransactionCount', [account.address, 'latest']));
    const before = await nonceOf();
    const ops = emptyStorageOps();
    ops.creates.push({
      btl: 100n,
      contentType: 'text/plain',
      payload: new TextEncoder().encode('lost'),
      stringAttributes: [{ key: 'note', value: 'every answer lost' }],
      numericAttributes: [],
    });
    const sent = await writer.send(ops);
    assert.ok(lost > 1, 'the transport retried and gave up');
    const outcome = await writer.waitForReceipt(sent.hash, 30_000);
    assert.equal(outcome.status, 'success');
    assert.equal((await nonceOf()) - before, 1, 'exactly one transaction went out');
  } finally {
    await lossy.close();
  }
});

for (const [i, [method, answer]] of (
  [
    ['eth_getTransactionCount', 'hang'],
    ['eth_getTransactionCount', 'timeout error'],
    ['eth_estimateGas', 'hang'],
    ['eth_getBlockByNumber', 'hang'],
  ] as const
).entries())
  test(`writer: an RPC that times out on ${method} (${answer}) before the send is chain_unavailable, never "refused"`, async () => {
    const held: ServerResponse[] = [];
    const stuck = await devnetProxy(devnet.url, async (_req, res, body) => {
      if (!methodsOf(body).includes(method)) return false;
      if (answer === 'hang') held.push(res);
      else {
        const { id } = JSON.parse(body.toString('utf8')) as { id: number };
        // What some providers answer when their backend timed out.
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'request timed out' } }));
      }
      return true;
    });
    try {
      const account = defined(devnet.accounts[3 + i], 'a dev account of its own');
      const writer = createArkivV1Writer({
        rpcUrl: stuck.url,
        chainId: devnet.chainId,
        privateKey: account.privateKey,
        transport: createHttpTransport({ url: stuck.url, timeoutMs: 300, attempts: 2, backoffMs: 10 }),
      });
      const ops = emptyStorageOps();
      ops.extends.push({ entityKey: `0x${'00'.repeat(32)}`, numberOfBlocks: 10n });
      await assert.rejects(writer.send(ops), (error: Error) => {
        assert.ok(error instanceof ChainUnreachableError, `${error.name}: ${error.message}`);
        return true;
      });
    } finally {
      for (const res of held) res.destroy();
      await stuck.close();
    }
  });
