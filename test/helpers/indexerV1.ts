// The indexer as the tests build it: `transport` is shorthand for `source: createArkivV1Source(transport)`,
// the v1 driver over a JSON-RPC transport. The indexer itself knows no driver: it takes a ChainSource.
import { createArkivV1Source, type ChainSource, type RpcTransport } from '../../src/chain/index.ts';
import type { IndexedStore } from '../../src/engine/index.ts';
import { ChainIndexer as Indexer, type IndexerOptions as Options } from '../../indexer/index.ts';

export * from '../../indexer/index.ts';

export type IndexerOptions<S extends IndexedStore = IndexedStore> = Omit<Options<S>, 'source'> & {
  /** Where blocks and entities come from (one of `source` and `transport` is required). */
  source?: ChainSource;
  /** Shorthand for `source: createArkivV1Source(transport)`. */
  transport?: RpcTransport;
};

export class ChainIndexer<S extends IndexedStore = IndexedStore> extends Indexer<S> {
  constructor({ source, transport, ...options }: IndexerOptions<S>) {
    super({ ...options, source: source ?? (transport && createArkivV1Source(transport)) } as Options<S>);
  }
}
