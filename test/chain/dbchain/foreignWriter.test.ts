// A writer that is not ours: vector entities encoded with viem alone from the reference (arkiv-gen-d.md
// §1.2–§1.6, test/helpers/dbchainRawWriter.ts; DESIGN.md §4 for the schema and its DB-chain types), not
// with the driver's encoder, sent to the DB-chain devnet, and indexed through the DB-chain driver with every declared type decoded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPublicClient, createWalletClient, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createDbChainSource, createHttpTransport } from '../../../src/chain/index.ts';
import { engineStores } from '../../../src/engine/storeFactory.ts';
import { ChainIndexer } from '../../../indexer/index.ts';
import { cell, executeData, op, REGISTRY } from '../../helpers/dbchainRawWriter.ts';
import { defined } from '../../helpers/defined.ts';
import { startTestDevnet } from '../../helpers/devnet.ts';

test('a writer that is not ours: viem-encoded DB-chain vector entities are indexed with their typed attributes', async () => {
  const devnet = await startTestDevnet({ protocol: 'dbchain' });
  const transport = createHttpTransport({ url: devnet.url });
  const indexer = new ChainIndexer({
    source: createDbChainSource(transport),
    stores: engineStores,
    chainId: devnet.chainId,
    blockTimeSeconds: 0.2,
  });
  try {
    indexer.start();
    const chain = {
      id: devnet.chainId,
      name: 'devnet',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [devnet.url] } },
    };
    const account = privateKeyToAccount(defined(devnet.accounts[2], 'dev account 2').privateKey);
    const wallet = createWalletClient({ chain, account, transport: http(devnet.url) });
    const reader = createPublicClient({ chain, transport: http(devnet.url) });
    const definition = new TextEncoder().encode(
      JSON.stringify({
        dim: 2,
        metric: 'cosine',
        open: true,
        attributes: { stars: 'i32', tag: 'str', ok: 'bool', n: 'uint', w: 'f32' },
      }),
    );
    // Payload: format 1, binary16, dim 2 (u16 LE), 1.0 and 0.0 as binary16 LE, then the document.
    const payload = new Uint8Array([1, 1, 2, 0, 0x00, 0x3c, 0x00, 0x00, ...new TextEncoder().encode('hello')]);
    const data = executeData([
      op.create(
        1n,
        'application/vnd.arkivector.collection.v1+json',
        definition,
        [cell.str('arkivector_type', 'collection'), cell.str('arkivector_collection', 'foreign')],
        1000n,
      ),
      op.create(
        2n,
        'application/vnd.arkivector.vector.v1',
        payload,
        [
          cell.str('arkivector_type', 'vector'),
          cell.str('arkivector_collection', 'foreign'),
          cell.str('arkivector_id', 'v1'),
          cell.str('tag', 'x'),
          cell.i32('stars', -3),
          cell.bool('ok', true),
          cell.u64('n', 7),
          // f32 0.5 = 0x3f000000; positive, so the order-preserving bits set the sign bit: 0xbf000000.
          cell.u64('w', 0xbf000000n),
        ],
        1000n,
      ),
    ]);
    const hash = await wallet.sendTransaction({ to: REGISTRY, data, chain });
    const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    assert.equal(receipt.status, 'success');
    assert.ok(await indexer.waitForBlock(Number(receipt.blockNumber), 30_000), 'indexed');
    const collection = defined(indexer.collections.get('foreign'), 'collection foreign');
    const record = defined(collection.store.get('v1'), 'vector v1');
    assert.equal(record.key, receipt.logs[1]?.topics[1]);
    assert.deepEqual({ ...record.attributes }, { stars: -3, tag: 'x', ok: true, n: 7, w: 0.5 });
    assert.equal(record.document, 'hello');
  } finally {
    await indexer.stop();
    await transport.close();
    await devnet.stop();
  }
});
