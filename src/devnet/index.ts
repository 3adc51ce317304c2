// The devnet's public entry point: start an Arkiv node in-process (tests, `arkivector serve`) or from the CLI
// (`arkivector devnet`), speaking either generation: Arkiv v1 (op-geth) or the DB-chain (reth registry).
import { DEV_ACCOUNT_BALANCE, devAccounts, type DevAccount } from './accounts.ts';
import type { ChainBlock } from './transactions.ts';
import { DbChainProtocol } from './dbchain/rpc.ts';
import { DevnetNode, type ReorgResult } from './node.ts';
import { serveDevnet, type DevnetServer } from './server.ts';

import { DEVNET_DEFAULTS, type DevnetProtocolName } from './defaults.ts';

export { DEVNET_DEFAULTS, DEVNET_PROTOCOLS, type DevnetProtocolName } from './defaults.ts';

export interface DevnetOptions {
  /** The Arkiv generation the node speaks; 'v1' unless given. */
  protocol?: DevnetProtocolName;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  chainId?: number;
  /** Seconds between interval blocks; 0 mines only on transactions and `mine()`. */
  blockTime?: number;
  stateFile?: string;
}

export interface Devnet {
  readonly url: string;
  readonly wsUrl: string;
  readonly port: number;
  readonly chainId: number;
  readonly protocol: DevnetProtocolName;
  readonly accounts: readonly DevAccount[];
  readonly node: DevnetNode;
  readonly headNumber: number;
  /** Mines `count` blocks (the first takes the pending transactions); returns the last. */
  mine(count?: number): ChainBlock;
  /** Forces a reorg of the last `depth` blocks (devnet only). */
  reorg(depth: number, options?: { replay?: boolean }): ReorgResult;
  /** Stops serving but keeps the chain, to simulate an RPC outage; `resume()` serves again on the same port. */
  suspend(): Promise<void>;
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts a devnet and serves it over HTTP and WebSocket.
 * @example const devnet = await startDevnet({ port: 0, blockTime: 0 }); … await devnet.stop();
 */
export async function startDevnet(options: DevnetOptions = {}): Promise<Devnet> {
  const host = options.host ?? DEVNET_DEFAULTS.host;
  const chainId = options.chainId ?? DEVNET_DEFAULTS.chainId;
  const accounts = devAccounts();
  const protocol = options.protocol ?? DEVNET_DEFAULTS.protocol;
  const node = await DevnetNode.create({
    protocol: protocol === 'dbchain' ? new DbChainProtocol(chainId) : undefined,
    chainId,
    blockTime: options.blockTime ?? DEVNET_DEFAULTS.blockTime,
    fundedAccounts: accounts.map((a) => a.address),
    initialBalance: DEV_ACCOUNT_BALANCE,
    stateFile: options.stateFile,
  });
  let server: DevnetServer | undefined = await serveDevnet(node, host, options.port ?? DEVNET_DEFAULTS.port);
  const { url, wsUrl, port } = server;
  node.start();
  return {
    url,
    wsUrl,
    port,
    chainId,
    protocol,
    accounts,
    node,
    get headNumber() {
      return node.chain.head.number;
    },
    mine(count = 1) {
      let block = node.chain.head;
      for (let i = 0; i < count; i++) block = node.mine();
      return block;
    },
    reorg: (depth, reorgOptions) => node.reorg(depth, reorgOptions?.replay),
    async suspend() {
      await server?.close();
      server = undefined;
    },
    async resume() {
      server ??= await serveDevnet(node, host, port);
    },
    async stop() {
      await server?.close();
      server = undefined;
      await node.stop();
    },
  };
}

export type { DevAccount, ReorgResult };
export { DevnetNode };
