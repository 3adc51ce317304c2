// What a started node hands back: where it listens, what it follows, and how to stop it.
import type { ChainProtocol } from '../chain/index.ts';
import type { Devnet } from '../devnet/index.ts';
import type { CollectionStore } from '../engine/index.ts';
import type { ServiceContext } from '../service/index.ts';
import type { StdioFacts } from '../stdioSnippet.ts';
import type { ChainIndexer } from '../../indexer/index.ts';

export interface Gateway {
  readonly rpc: string;
  /** The generation followed, and how it was chosen. */
  readonly protocol: ChainProtocol;
  readonly protocolSource: 'flag' | 'preset' | 'detected' | 'remembered' | 'devnet';
  readonly chainId: number;
  readonly httpUrl?: string;
  readonly devnet?: Devnet;
  /** The embedded devnet's state file, when its chain is kept across restarts. */
  readonly devnetState?: string;
  /** Whether the demo collections were written at this start (only into a new chain). */
  readonly seededDemo: boolean;
  /** The embedded devnet holds the demo collections (seeded into it when its chain was new). */
  readonly demo: boolean;
  /** HTTP callers need bearer tokens (--tokens / ARKIVECTOR_TOKENS). */
  readonly tokens: boolean;
  readonly indexer: ChainIndexer<CollectionStore>;
  readonly ctx: ServiceContext;
  /** What a stdio node against the same chain needs (the banner's and the console's snippets). */
  readonly stdio: StdioFacts;
  close(): Promise<void>;
}
