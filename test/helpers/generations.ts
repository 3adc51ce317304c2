// Both Arkiv generations side by side for suites that must hold on each (issue 20, item 5): a devnet of
// the protocol, its driver's ChainSource and ChainWriter over one transport, a real indexer and the
// service context a node would build around them.
import assert from 'node:assert/strict';
import {
  createArkivV1Source,
  createArkivV1Writer,
  createDbChainSource,
  createDbChainWriter,
  createHttpTransport,
} from '../../src/chain/index.ts';
import type { Hex } from 'viem';
import type { CollectionDefinition } from '../../src/collections/index.ts';
import type { Devnet, DevnetProtocolName } from '../../src/devnet/index.ts';
import type { CollectionStore } from '../../src/engine/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import type { ServiceContext } from '../../src/service/index.ts';
import { ChainIndexer } from '../../indexer/index.ts';
import { defined } from './defined.ts';
import { cell, execute, nextSalt, op, schemaCells } from './dbchainRawWriter.ts';
import { startTestDevnet, walletClient } from './devnet.ts';
import { stateReached } from './writes.ts';

export const PROTOCOLS: readonly DevnetProtocolName[] = ['v1', 'dbchain'];

const DRIVERS = {
  v1: { source: createArkivV1Source, writer: createArkivV1Writer },
  dbchain: { source: createDbChainSource, writer: createDbChainWriter },
} as const;

export interface Generation {
  protocol: DevnetProtocolName;
  devnet: Devnet;
  indexer: ChainIndexer<CollectionStore>;
  /** A writing node's context: the indexer, and dev account `accountIndex` as its signer. */
  ctx: ServiceContext;
  close(): Promise<void>;
}

/** A devnet of `protocol` with a live indexer and a writing service context over that protocol's driver. */
export async function startGeneration(protocol: DevnetProtocolName, accountIndex = 0): Promise<Generation> {
  const devnet = await startTestDevnet({ protocol });
  const transport = createHttpTransport({ url: devnet.url, attempts: 2, backoffMs: 20 });
  const driver = DRIVERS[protocol];
  const indexer = new ChainIndexer({
    source: driver.source(transport),
    stores: engineStores,
    chainId: devnet.chainId,
    blockTimeSeconds: 0.2,
  });
  const writer = driver.writer({
    rpcUrl: devnet.url,
    chainId: devnet.chainId,
    privateKey: defined(devnet.accounts[accountIndex], `dev account ${accountIndex}`).privateKey,
    transport,
  });
  indexer.start();
  await stateReached(indexer, 'live');
  assert.equal(indexer.syncState, 'live');
  return {
    protocol,
    devnet,
    indexer,
    ctx: { indexer, chain: { chainId: devnet.chainId, rpc: devnet.url, protocol }, minBlockTimeoutMs: 30_000, writer },
    async close() {
      await indexer.stop();
      await transport.close();
      await devnet.stop();
    },
  };
}

export type SdkCreate = {
  payload: Uint8Array;
  contentType: string;
  attributes: { key: string; value: string | number }[];
  expiresIn: number;
};

/** The attributes of `args` as DB-chain cells, numbers on the cell type `definition` declares for them. */
export function dbchainCells(args: SdkCreate, definition?: CollectionDefinition) {
  const declared = definition?.attributes ?? {};
  const type = (name: string) => {
    const t = declared[name];
    return t === 'i32' || t === 'bool' ? t : 'u64';
  };
  return schemaCells(args.attributes.map((a) => ({ ...a, type: type(a.key) })));
}

/**
 * Creates an entity from dev account `from` with `createEntity`-style arguments (definitionArgs, vectorArgs),
 * through a writer that is not ours: the unmodified v1 SDK, or on the DB-chain calldata built with viem alone,
 * numbers on the cells `definition` declares for them (ARCHITECTURE.md §8.3). Resolves to the entity key.
 */
export async function createEntityAs(
  devnet: Devnet,
  from: number,
  args: SdkCreate,
  definition?: CollectionDefinition,
): Promise<Hex> {
  if (devnet.protocol === 'v1') return (await walletClient(devnet, from).createEntity(args)).entityKey;
  const [key] = await execute(devnet, from, [
    op.create(
      nextSalt(),
      args.contentType,
      args.payload,
      dbchainCells(args, definition),
      BigInt(Math.ceil(args.expiresIn / 2)),
    ),
  ]);
  return defined(key, 'the created key');
}

/**
 * Replaces entity `key`'s content from dev account `from` (its owner), through the same writers as
 * createEntityAs; on the DB-chain a patch setting the content type, payload and every given attribute
 * (attributes not given are left as they are: tombstone them with a patch of your own).
 */
export async function updateEntityAs(
  devnet: Devnet,
  from: number,
  key: Hex,
  args: SdkCreate,
  definition?: CollectionDefinition,
): Promise<void> {
  if (devnet.protocol === 'v1') {
    await walletClient(devnet, from).updateEntity({ entityKey: key, ...args });
    return;
  }
  await execute(devnet, from, [
    op.patch(key, [cell.contentType(args.contentType), cell.payload(args.payload), ...dbchainCells(args, definition)]),
  ]);
}

/** Deletes entity `key` from dev account `from` (its owner), through the same writers as createEntityAs. */
export async function deleteEntityAs(devnet: Devnet, from: number, key: Hex): Promise<void> {
  if (devnet.protocol === 'v1') await walletClient(devnet, from).deleteEntity({ entityKey: key });
  else await execute(devnet, from, [op.delete(key)]);
}
