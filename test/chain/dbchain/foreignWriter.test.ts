// A writer that is not ours: vector entities encoded with viem alone from the reference (arkiv-gen-d.md
// §1.2–§1.6; DESIGN.md §4 for the schema and its DB-chain types), not with the driver's encoder, sent to the
// DB-chain devnet, and indexed through the DB-chain driver with every declared type decoded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  parseAbi,
  parseAbiParameters,
  toHex,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createDbChainSource, createHttpTransport } from '../../../src/chain/index.ts';
import { engineStores } from '../../../src/engine/storeFactory.ts';
import { ChainIndexer } from '../../../indexer/index.ts';
import { defined } from '../../helpers/defined.ts';
import { startTestDevnet } from '../../helpers/devnet.ts';

const REGISTRY = '0x4400000000000000000000000000000000000044';
const abi = parseAbi(['function execute((uint8 operation, bytes operationData)[] ops) returns (bytes32[] keys)']);
const CREATE = parseAbiParameters(
  '(uint128 salt, uint64 expiresAt, uint64 minLifetime, uint8 creationFlags, (bytes32 name, uint8 typeId, bytes value)[] attributes)',
);
type Cell = { name: Hex; typeId: number; value: Hex };
const name = (n: string) => toHex(n, { size: 32 });
const word = (v: bigint) => toHex(BigInt.asUintN(256, v), { size: 32 });
const str = (n: string, v: string): Cell => ({ name: name(n), typeId: 8, value: toHex(v) });
const create = (salt: bigint, contentType: string, payload: Uint8Array, cells: Cell[]) => ({
  operation: 1,
  operationData: encodeAbiParameters(CREATE, [
    {
      salt,
      expiresAt: 0n,
      minLifetime: 1000n,
      creationFlags: 0,
      attributes: [
        { name: name('$contentType'), typeId: 8, value: toHex(contentType) },
        { name: name('$payload'), typeId: 7, value: toHex(payload) },
        ...cells,
      ].sort((a, b) => (a.name < b.name ? -1 : 1)),
    },
  ]),
});

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
    const data = encodeFunctionData({
      abi,
      functionName: 'execute',
      args: [
        [
          create(1n, 'application/vnd.arkivector.collection.v1+json', definition, [
            str('arkivector_type', 'collection'),
            str('arkivector_collection', 'foreign'),
          ]),
          create(2n, 'application/vnd.arkivector.vector.v1', payload, [
            str('arkivector_type', 'vector'),
            str('arkivector_collection', 'foreign'),
            str('arkivector_id', 'v1'),
            str('tag', 'x'),
            { name: name('stars'), typeId: 2, value: word(-3n) },
            { name: name('ok'), typeId: 1, value: word(1n) },
            { name: name('n'), typeId: 3, value: word(7n) },
            // f32 0.5 = 0x3f000000; positive, so the order-preserving bits set the sign bit: 0xbf000000.
            { name: name('w'), typeId: 3, value: word(0xbf000000n) },
          ]),
        ],
      ],
    });
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
