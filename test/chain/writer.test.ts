// The signer's transport: an RPC URL with credentials (user:password@host, as some providers issue them)
// must work for writes as it does for reads. fetch refuses such URLs, so the credentials travel as Basic
// auth; a loopback proxy in front of the devnet insists on them.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createChainWriter, emptyBatch as emptyStorageOps } from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { defined } from '../helpers/defined.ts';
import { rpcResult, startTestDevnet } from '../helpers/devnet.ts';

let devnet: Devnet;
let proxy: Server;
let proxyUrl: string;
const seen: (string | undefined)[] = [];

/**
 * A loopback proxy in front of the devnet: `intercept` sees each request (headers and JSON-RPC body) and the
 * devnet's answer once forwarded, and may answer instead (`true`: it has).
 */
async function devnetProxy(
  intercept: (
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    forward: () => Promise<{ status: number; text: string }>,
  ) => Promise<boolean>,
): Promise<Server> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let answer: { status: number; text: string } | undefined;
    const forward = async () => {
      const response = await fetch(devnet.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      answer = { status: response.status, text: await response.text() };
      return answer;
    };
    if (await intercept(req, res, body, forward)) return;
    const { status, text } = answer ?? (await forward());
    res.writeHead(status, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

before(async () => {
  devnet = await startTestDevnet();
  proxy = await devnetProxy(async (req, res) => {
    seen.push(req.headers.authorization);
    if (req.headers.authorization === `Basic ${Buffer.from('user:s3cret').toString('base64')}`) return false;
    res.writeHead(401).end('unauthorized');
    return true;
  });
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
  const lossy = await devnetProxy(async (_req, res, body, forward) => {
    if (lost > 0 || (JSON.parse(body.toString('utf8')) as { method?: string }).method !== 'eth_sendRawTransaction')
      return false;
    await forward();
    lost++;
    res.writeHead(502).end('bad gateway');
    return true;
  });
  try {
    const account = defined(devnet.accounts[1], 'dev account 1');
    const writer = createChainWriter({
      rpcUrl: `http://127.0.0.1:${(lossy.address() as AddressInfo).port}/`,
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
    lossy.close();
  }
});
