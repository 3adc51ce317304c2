// Demo data for `arkivector serve` without --rpc (README, "Quick start"): the `notes` collection (dim 4: cat,
// dog, fern) and `demo.docs` (dim 8, 200 entities), written like any writer would: with the unmodified v1
// SDK on a v1 devnet, through the DB-chain driver's writer on a DB-chain one.
import { createPublicClient, createWalletClient, http, type Hex } from '@arkiv-network/sdk';
import { privateKeyToAccount } from '@arkiv-network/sdk/accounts';
import { localhost } from '@arkiv-network/sdk/chains';
import { createDbChainWriter, emptyBatch, type CreateOp } from '../chain/index.ts';
import { REGISTRY_ADDRESS, entityNonceCall } from '../chain/dbchain/index.ts';
import {
  encodeCollectionEntity,
  encodeVectorEntity,
  ttlToBlocks,
  validateCollectionDefinition,
  type CollectionDefinitionInput,
} from '../collections/index.ts';
import { vectorContent } from '../service/index.ts';
import type { DevnetProtocolName } from '../devnet/index.ts';

const DEMO_TTL_SECONDS = 30 * 24 * 3600;
/** Definitions outlive the keep-alive horizon, so a fresh demo sends no extension at start. */
const DEMO_DEFINITION_TTL_SECONDS = 365 * 24 * 3600;

export const DEMO_NOTES: CollectionDefinitionInput = {
  dim: 4,
  metric: 'cosine',
  attributes: { topic: 'str', stars: 'i32' },
  description: 'Three short notes about animals and plants (demo data)',
};
export const DEMO_DOCS: CollectionDefinitionInput = {
  dim: 8,
  metric: 'cosine',
  attributes: { topic: 'str', rank: 'i32', score: 'f32', featured: 'bool' },
  description: '200 synthetic documents in five topics (demo data)',
};

export const DEMO_NOTE_ENTITIES = [
  { id: 'cat', vector: [1, 0, 0, 0], document: 'Cats purr.', attributes: { topic: 'pets', stars: 5 } },
  { id: 'dog', vector: [0.95, 0.08, 0.05, 0], document: 'Dogs bark.', attributes: { topic: 'pets', stars: 4 } },
  { id: 'fern', vector: [0, 0.1, 1, 0.2], document: 'Ferns like shade.', attributes: { topic: 'plants', stars: 3 } },
];

const TOPICS = ['astronomy', 'cooking', 'music', 'history', 'sports'];

/** The 200 demo documents, deterministic: vectors cluster by topic. */
export function demoDocs(count = 200) {
  let seed = 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  return Array.from({ length: count }, (_, i) => {
    const t = i % TOPICS.length;
    const vector = Array.from({ length: 8 }, (_, d) => (d === t ? 1 : 0) + (random() - 0.5) * 0.4);
    return {
      id: `doc-${String(i).padStart(3, '0')}`,
      vector,
      document: `Document ${i} about ${TOPICS[t]}: ${['an overview', 'a story', 'a how-to', 'a list of facts'][i % 4]}.`,
      attributes: { topic: TOPICS[t], rank: i, score: Math.round(random() * 1000) / 100, featured: i % 10 === 0 },
    };
  });
}

/** A mined write's wait: the demo is written before anything else runs, so a minute is generous. */
const DEMO_RECEIPT_TIMEOUT_MS = 60_000;

/**
 * Writes the demo collections to a devnet with its first dev account; returns the block of the last write.
 * @example await seedDemo(devnet.url, devnet.accounts[0].privateKey, devnet.protocol)
 */
export async function seedDemo(rpcUrl: string, privateKey: Hex, protocol?: DevnetProtocolName): Promise<bigint> {
  if ((protocol ?? (await devnetProtocol(rpcUrl))) === 'dbchain') return seedDbChainDemo(rpcUrl, privateKey);
  const wallet = createWalletClient({
    chain: localhost,
    transport: http(rpcUrl),
    account: privateKeyToAccount(privateKey),
  });
  const reader = createPublicClient({ chain: localhost, transport: http(rpcUrl) });
  await wallet.mutateEntities({
    creates: [
      { ...encodeCollectionEntity('notes', DEMO_NOTES), expiresIn: DEMO_DEFINITION_TTL_SECONDS },
      { ...encodeCollectionEntity('demo.docs', DEMO_DOCS), expiresIn: DEMO_DEFINITION_TTL_SECONDS },
    ],
  });
  const vectors = (
    collection: string,
    input: CollectionDefinitionInput,
    entities: { id: string; vector: number[]; document: string; attributes: Record<string, unknown> }[],
  ) => {
    const definition = validateCollectionDefinition(input);
    return entities.map((entity) => {
      const encoded = encodeVectorEntity({ collection, ...entity }, definition);
      return {
        payload: encoded.payload,
        contentType: encoded.contentType,
        attributes: encoded.attributes,
        expiresIn: DEMO_TTL_SECONDS,
      };
    });
  };
  await wallet.mutateEntities({ creates: vectors('notes', DEMO_NOTES, DEMO_NOTE_ENTITIES) });
  const { txHash } = await wallet.mutateEntities({ creates: vectors('demo.docs', DEMO_DOCS, demoDocs()) });
  return (await reader.getTransactionReceipt({ hash: txHash })).blockNumber;
}

/** Which generation a devnet speaks: only the DB-chain one answers the registry's entityNonce view call. */
async function devnetProtocol(rpcUrl: string): Promise<DevnetProtocolName> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_call',
      params: [{ to: REGISTRY_ADDRESS, data: entityNonceCall(REGISTRY_ADDRESS) }, 'latest'],
    }),
  });
  const { result } = (await response.json()) as { result?: unknown };
  return typeof result === 'string' && result.length === 66 ? 'dbchain' : 'v1';
}

/** The same demo through the DB-chain writer: the contents the service would write, three batches. */
async function seedDbChainDemo(rpcUrl: string, privateKey: Hex): Promise<bigint> {
  const reader = createPublicClient({ chain: localhost, transport: http(rpcUrl) });
  const writer = createDbChainWriter({ rpcUrl, chainId: await reader.getChainId(), privateKey });
  const definition = (name: string, input: CollectionDefinitionInput): CreateOp => {
    const entity = encodeCollectionEntity(name, input);
    return {
      btl: BigInt(ttlToBlocks({ seconds: DEMO_DEFINITION_TTL_SECONDS })),
      contentType: entity.contentType,
      payload: entity.payload,
      stringAttributes: entity.attributes,
      numericAttributes: [],
    };
  };
  const vectors = (
    collection: string,
    input: CollectionDefinitionInput,
    entities: { id: string; vector: number[]; document: string; attributes: Record<string, unknown> }[],
  ) => {
    const validated = validateCollectionDefinition(input);
    return entities.map((e, i) =>
      vectorContent(collection, validated, { ...e, ttl: { seconds: DEMO_TTL_SECONDS } }, i),
    );
  };
  let block = 0;
  for (const creates of [
    [definition('notes', DEMO_NOTES), definition('demo.docs', DEMO_DOCS)],
    vectors('notes', DEMO_NOTES, DEMO_NOTE_ENTITIES),
    vectors('demo.docs', DEMO_DOCS, demoDocs()),
  ]) {
    const { hash } = await writer.send({ ...emptyBatch(), creates });
    const outcome = await writer.waitForReceipt(hash, DEMO_RECEIPT_TIMEOUT_MS);
    if (outcome.status !== 'success')
      throw new Error(`the demo write ${hash} reverted: ${outcome.reason ?? 'no reason'}`);
    block = outcome.blockNumber;
  }
  return BigInt(block);
}
