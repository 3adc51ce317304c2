// The signer's transport: an RPC URL with credentials (user:password@host, as some providers issue them)
// must work for writes as it does for reads. fetch refuses such URLs, so the credentials travel as Basic
// auth; a loopback proxy in front of the devnet insists on them.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createChainWriter, emptyBatch as emptyStorageOps } from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';

let devnet: Devnet;
let proxy: Server;
let proxyUrl: string;
const seen: (string | undefined)[] = [];

before(async () => {
  devnet = await startTestDevnet();
  proxy = createServer(async (req, res) => {
    seen.push(req.headers.authorization);
    if (req.headers.authorization !== `Basic ${Buffer.from('user:s3cret').toString('base64')}`) {
      res.writeHead(401).end('unauthorized');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await fetch(devnet.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat(chunks),
    });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://user:s3cret@127.0.0.1:${(proxy.address() as AddressInfo).port}/`;
});
after(async () => {
  proxy.close();
  await devnet.stop();
});

test('writer: an RPC URL with credentials signs, sends and follows the receipt through Basic auth', async () => {
  const writer = createChainWriter({
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
  const lossy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const answer = await fetch(devnet.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await answer.text();
    if (lost === 0 && (JSON.parse(body.toString('utf8')) as { method?: string }).method === 'eth_sendRawTransaction') {
      lost++;
      res.writeHead(502).end('bad gateway');
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((resolve) => lossy.listen(0, '127.0.0.1', resolve));
  try {
    const account = defined(devnet.accounts[1], 'dev account 1');
    const writer = createChainWriter({
      rpcUrl: `http://127.0.0.1:${(lossy.address() as AddressInfo).port}/`,
      chainId: devnet.chainId,
      privateKey: account.privateKey,
    });
    const nonceOf = async () =>
      Number(
        (
          (await (
            await fetch(devnet.url, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({
                jsonrpc: '2.0',
                id: 1,
                method: 'eth_getTransactionCount',
                params: [account.address, 'latest'],
              }),
            })
          ).json()) as { result: string }
        ).result,
      );
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
    lossy.close();
  }
});
