// A devnet with indexers following it, for the indexer suites that start several (tailing, bootstrapped later):
// registers its own before/after hooks in the calling suite and stops everything it started.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { createDbChainSource, createHttpTransport, type RpcTransport } from '../../src/chain/index.ts';
import type { Devnet, DevnetProtocolName } from '../../src/devnet/index.ts';
import type { CollectionStore } from '../../src/engine/index.ts';
import { engineStores } from '../../src/engine/storeFactory.ts';
import { ChainIndexer, type IndexerOptions } from './indexerV1.ts';
import { startTestDevnet } from './devnet.ts';

export interface IndexerHarness {
  /** Set once the suite's `before` hook ran. */
  readonly devnet: Devnet;
  /** A new indexer on the devnet (with `extra` options), started (stopped after the suite). */
  newIndexer(extra?: Partial<IndexerOptions<CollectionStore>>): ChainIndexer<CollectionStore>;
  /** Resolves once `indexer` has applied the devnet's head, failing after `syncTimeoutMs`. */
  synced(indexer: ChainIndexer): Promise<void>;
}

/** On `protocol`'s devnet (v1 by default), each indexer following it through that generation's driver. */
export function indexerHarness(syncTimeoutMs: number, protocol: DevnetProtocolName = 'v1'): IndexerHarness {
  let devnet: Devnet | undefined;
  let transport: RpcTransport | undefined;
  const indexers: ChainIndexer<CollectionStore>[] = [];
  const started = () => {
    assert.ok(devnet && transport, 'the harness is used inside its suite, after before()');
    return { devnet, transport };
  };
  before(async () => {
    devnet = await startTestDevnet({ protocol });
    transport = createHttpTransport({ url: devnet.url });
  });
  after(async () => {
    for (const indexer of indexers) await indexer.stop();
    await transport?.close();
    await devnet?.stop();
  });
  return {
    get devnet() {
      return started().devnet;
    },
    newIndexer(extra = {}) {
      const { devnet, transport } = started();
      const indexer = new ChainIndexer({
        ...(protocol === 'dbchain' ? { source: createDbChainSource(transport) } : { transport }),
        stores: engineStores,
        chainId: devnet.chainId,
        blockTimeSeconds: 0.2,
        ...extra,
      });
      indexers.push(indexer);
      indexer.start();
      return indexer;
    },
    async synced(indexer) {
      const { devnet } = started();
      indexer.poke();
      assert.ok(await indexer.waitForBlock(devnet.headNumber, syncTimeoutMs), `indexer at ${indexer.asOfBlock}`);
    },
  };
}
