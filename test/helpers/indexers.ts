// The indexers of one devnet suite: built with the engine's stores and a short block time, stopped together
// by `stopAll`, and `synced` starts one and waits (bounded) until it reflects a block.
import assert from 'node:assert/strict';
import { ChainIndexer, type IndexerOptions } from './indexerV1.ts';
import type { RpcTransport } from '../../src/chain/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';

export function suiteIndexers(devnet: () => Devnet, syncTimeoutMs: number) {
  const indexers: ChainIndexer[] = [];
  return {
    create(transport: RpcTransport, options: Partial<IndexerOptions> = {}): ChainIndexer {
      const indexer = new ChainIndexer({
        transport,
        stores: engineStores,
        chainId: devnet().chainId,
        blockTimeSeconds: 0.2,
        ...options,
      });
      indexers.push(indexer);
      return indexer;
    },
    async synced(indexer: ChainIndexer, block = devnet().headNumber): Promise<void> {
      indexer.start();
      indexer.poke();
      assert.ok(
        await indexer.waitForBlock(block, syncTimeoutMs),
        `indexer stuck at ${indexer.asOfBlock}: ${indexer.lastError}`,
      );
    },
    async stopAll(): Promise<void> {
      for (const indexer of indexers) await indexer.stop();
    },
  };
}
