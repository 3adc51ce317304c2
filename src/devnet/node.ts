// The devnet node: the chain plus everything JSON-RPC needs around it (pending pool, interval mining,
// log filters, subscriptions, devnet-only control methods, --state persistence). Transport-free: the
// HTTP/WebSocket server in server.ts calls `request()`.
import { EventEmitter } from 'node:events';
import { hexToBytes, numberToHex, type Address, type Hex } from 'viem';
import {
  ARKIV_ADDRESS,
  StorageTxDecodeError,
  decodeStorageTransaction,
  validateStorageOps,
} from '../chain/v1/index.ts';
import { DevnetChain } from './chain.ts';
import {
  BASE_FEE_PER_GAS,
  PRIORITY_FEE_PER_GAS,
  RpcError,
  decodeRawTransaction,
  intrinsicGas,
  type ChainBlock,
  type ChainTx,
  type RegistryExecutor,
} from './transactions.ts';
import { compileQueryText, queryPage, readQueryOptions } from './entityQuery.ts';
import { StateFileError, StateJournal, readStateFile, type SavedState } from './stateFile.ts';
import { formatBlock, formatLog, formatReceipt, formatTransaction } from './format.ts';
import { LogFilters, MAX_LOG_RANGE, logsInRange, readBlockTag, readHexArg, readLogCriteria } from './logs.ts';

/** arkiv_query waits this long for a future atBlock before failing, like the node's store. */
const AT_BLOCK_WAIT_MS = 3000;

/** Answers that depend on the failed write fail too (see `durable`); the operator is told here. */
const stateWriteFailed = (error: Error) =>
  process.stderr.write(`devnet: cannot write the state file: ${error.message}\n`);

export interface DevnetNodeOptions {
  chainId: number;
  /** Seconds between interval blocks; 0 mines only on transactions and devnet_mine. */
  blockTime: number;
  fundedAccounts: readonly Address[];
  initialBalance: bigint;
  stateFile?: string;
  /** Another Arkiv generation (the DB-chain's); without it the node speaks Arkiv v1. */
  protocol?: DevnetProtocol;
}

/** What a generation adds to the shared node: its registry's execution and its own JSON-RPC methods. */
export interface DevnetProtocol {
  /** Recorded in --state files, so a chain is never replayed under another generation's rules. */
  readonly name: string;
  readonly registry: RegistryExecutor;
  /** Answers `method` when the generation defines it (arkiv_*, calls to its registry), else UNHANDLED. */
  request(method: string, params: unknown[], chain: DevnetChain): unknown;
}
export const UNHANDLED: unique symbol = Symbol('unhandled');

export interface ReorgResult {
  commonAncestor: number;
  oldHead: number;
  newHead: number;
  replayed: number;
}

export interface DevnetEvents {
  block: [ChainBlock];
  reorg: [{ removed: ChainBlock[]; commonAncestor: number }];
}

type Params = unknown[];

export class DevnetNode extends EventEmitter<DevnetEvents> {
  readonly chain: DevnetChain;
  automine = true;
  readonly #options: DevnetNodeOptions;
  #pending: ChainTx[] = [];
  readonly #filters: LogFilters;
  #nextSalt = 1;
  #timer?: NodeJS.Timeout;
  /** The --state journal; every block is appended (fsynced) before an answer that depends on it. */
  #journal?: StateJournal;

  private constructor(options: DevnetNodeOptions, chain: DevnetChain) {
    super();
    this.#options = options;
    this.chain = chain;
    this.#filters = new LogFilters(chain);
  }

  /**
   * Creates a node, reloading `stateFile` when it exists.
   * @throws StateFileError when the file cannot be used (damaged, another chain): it is never overwritten
   */
  static async create(options: DevnetNodeOptions): Promise<DevnetNode> {
    let saved: SavedState | undefined;
    if (options.stateFile) {
      saved = await readStateFile(options.stateFile);
      if (saved && saved.chainId !== options.chainId)
        throw new StateFileError(
          `state file ${options.stateFile} is for chain ${saved.chainId}, not chain ${options.chainId}`,
        );
      const protocol = options.protocol?.name ?? 'v1';
      if (saved && (saved.protocol ?? 'v1') !== protocol) {
        throw new StateFileError(
          `state file ${options.stateFile} holds a ${saved.protocol ?? 'v1'} chain, not a ${protocol} one: start it with --protocol ${saved.protocol ?? 'v1'}, or use another state file`,
        );
      }
    }
    const chain = new DevnetChain({
      chainId: options.chainId,
      genesisTimestamp: saved?.genesisTimestamp ?? Math.floor(Date.now() / 1000) - 1,
      fundedAccounts: options.fundedAccounts,
      initialBalance: options.initialBalance,
      registry: options.protocol?.registry,
    });
    const node = new DevnetNode(options, chain);
    for (const [index, block] of (saved?.blocks ?? []).entries()) {
      let transactions: ChainTx[];
      try {
        transactions = await Promise.all(block.txs.map((raw) => decodeRawTransaction(raw, options.chainId)));
      } catch (error) {
        throw new StateFileError(
          `state file ${options.stateFile}: a transaction of block ${index + 1} cannot be decoded (${(error as Error).message}); refusing to start over it`,
        );
      }
      chain.mine({ timestamp: block.timestamp, salt: block.salt, transactions });
      node.#nextSalt = Math.max(node.#nextSalt, block.salt + 1);
    }
    if (options.stateFile) {
      node.#journal = new StateJournal(options.stateFile);
      // A new file, or a format 1 file, is written whole now: later blocks are appended to it.
      if (saved?.version !== 2) node.#rewriteState();
      await node.#journal.flushed();
    }
    return node;
  }

  start(): void {
    if (this.#options.blockTime > 0 && !this.#timer) {
      this.#timer = setInterval(() => this.mine(), this.#options.blockTime * 1000);
      this.#timer.unref();
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.save();
    await this.#journal?.close();
  }

  /** Mines one block with every pending transaction. */
  mine(): ChainBlock {
    const head = this.chain.head;
    const timestamp = Math.max(Math.floor(Date.now() / 1000), head.timestamp + 1);
    const block = this.chain.mine({ timestamp, salt: 0, transactions: this.#pending });
    this.#pending = [];
    this.#journal?.append(this.#saved(block)).catch(stateWriteFailed);
    this.emit('block', block);
    return block;
  }

  /**
   * Replaces the last `depth` blocks with new ones (a forced reorg; devnet only). With `replay`, the
   * dropped transactions are mined again in one block; otherwise they vanish. The new chain is one
   * block longer than the old one so followers see a new head.
   */
  reorg(depth: number, replay = false): ReorgResult {
    const oldHead = this.chain.head.number;
    if (!Number.isInteger(depth) || depth < 1 || depth > oldHead) {
      throw new RpcError(-32602, `reorg depth must be between 1 and the head block (${oldHead})`);
    }
    const commonAncestor = oldHead - depth;
    const removed = this.chain.blocks.slice(commonAncestor + 1);
    const dropped = this.chain.truncate(commonAncestor);
    this.#pending = [];
    this.#filters.reorged(removed, commonAncestor);
    this.emit('reorg', { removed, commonAncestor });
    let replayed = 0;
    const mineReplacement = (transactions: ChainTx[]) => {
      const head = this.chain.head;
      const block = this.chain.mine({
        timestamp: Math.max(Math.floor(Date.now() / 1000), head.timestamp + 1),
        salt: this.#nextSalt++,
        transactions,
      });
      this.emit('block', block);
    };
    if (replay && dropped.length) {
      const admitted: ChainTx[] = [];
      const nonces = new Map<Address, bigint>();
      for (const tx of dropped) {
        const next = nonces.get(tx.from) ?? this.chain.nonceOf(tx.from);
        try {
          this.chain.checkAdmission(tx, next);
          admitted.push(tx);
          nonces.set(tx.from, next + 1n);
        } catch {
          // A transaction that no longer fits the new chain is dropped, as a real reorg may do.
        }
      }
      replayed = admitted.length;
      mineReplacement(admitted);
    }
    while (this.chain.head.number <= oldHead) mineReplacement([]);
    this.#rewriteState();
    return { commonAncestor, oldHead, newHead: this.chain.head.number, replayed };
  }

  /** Resolves once every block so far is on disk (fsynced) when the node keeps a state file. */
  async save(): Promise<void> {
    await this.#journal?.flushed();
  }

  /** The same as `save`: answers that depend on a block wait for it (src/devnet/server.ts). */
  durable(): Promise<void> {
    return this.#journal?.flushed() ?? Promise.resolve();
  }

  #saved(block: ChainBlock) {
    return {
      timestamp: block.timestamp,
      salt: block.salt,
      txs: block.transactions.flatMap((tx) => (tx.raw === null ? [] : [tx.raw])),
    };
  }

  #rewriteState(): void {
    this.#journal
      ?.rewrite({
        chainId: this.#options.chainId,
        protocol: this.#options.protocol?.name ?? 'v1',
        genesisTimestamp: this.chain.block(0).timestamp,
        blocks: this.chain
          .specs(1)
          .map((s) => ({ timestamp: s.timestamp, salt: s.salt, txs: s.transactions.map((tx) => tx.raw as Hex) })),
      })
      .catch(stateWriteFailed);
  }

  #block(tag: unknown): ChainBlock | undefined {
    const number = readBlockTag(tag, this.chain.head.number);
    return number === undefined ? undefined : this.chain.blocks[number];
  }

  #blockByHash(hash: unknown): ChainBlock | undefined {
    const wanted = readHexArg(hash, 'block hash');
    return this.chain.blocks.find((b) => b.hash === wanted);
  }

  #pendingNonce(address: Address): bigint {
    return this.#pending.reduce((n, tx) => (tx.from === address ? n + 1n : n), this.chain.nonceOf(address));
  }

  /** eth_call / eth_estimateGas on a call object: dry-runs Arkiv data and reports the failure reason. */
  #simulate(call: unknown): bigint {
    const { from, to, data, input } = (call ?? {}) as { from?: string; to?: string; data?: string; input?: string };
    const payload = readHexArg(data ?? input ?? '0x', 'data');
    if (to && to.toLowerCase() === ARKIV_ADDRESS) {
      let ops;
      try {
        ops = decodeStorageTransaction(hexToBytes(payload));
        validateStorageOps(ops);
      } catch (error) {
        if (error instanceof StorageTxDecodeError)
          throw new RpcError(-32000, `failed to validate arkiv transaction: ${error.message}`);
        throw error;
      }
      const reason = this.chain.dryRun(ops, (from ?? '0x0000000000000000000000000000000000000000') as Address);
      if (reason) throw new RpcError(-32000, reason);
    }
    return intrinsicGas(payload);
  }

  async #sendRawTransaction(raw: unknown): Promise<Hex> {
    const tx = await decodeRawTransaction(readHexArg(raw, 'transaction'), this.#options.chainId);
    if (this.chain.locate(tx.hash) || this.#pending.some((p) => p.hash === tx.hash)) {
      throw new RpcError(-32000, 'already known');
    }
    this.chain.checkAdmission(tx, this.#pendingNonce(tx.from));
    this.#pending.push(tx);
    // Mining inside the call lets viem's first receipt poll succeed instead of waiting 4 s.
    if (this.automine) this.mine();
    return tx.hash;
  }

  async #query(params: Params): Promise<unknown> {
    const matches = compileQueryText(params[0]);
    const options = readQueryOptions(params[1]);
    const block = options.atBlock ?? this.chain.head.number;
    if (block > this.chain.head.number) await this.#waitForBlock(block);
    return queryPage(this.chain.entities, matches, options, block);
  }

  async #waitForBlock(block: number): Promise<void> {
    if (this.chain.head.number >= block) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('block', onBlock);
        reject(
          new RpcError(
            -32000,
            `error executing query: block ${block} is not available yet (head ${this.chain.head.number})`,
          ),
        );
      }, AT_BLOCK_WAIT_MS);
      const onBlock = (b: ChainBlock) => {
        if (b.number < block) return;
        clearTimeout(timer);
        this.off('block', onBlock);
        resolve();
      };
      this.on('block', onBlock);
    });
  }

  /** Answers one JSON-RPC call; throws RpcError for protocol-level failures. */
  async request(method: string, params: Params = []): Promise<unknown> {
    const chain = this.chain;
    const head = chain.head.number;
    const protocol = this.#options.protocol;
    const own = protocol ? protocol.request(method, params, chain) : UNHANDLED;
    if (own !== UNHANDLED) return own;
    switch (method) {
      case 'web3_clientVersion':
        return 'arkivector-devnet/0.1.0';
      case 'net_version':
        return String(this.#options.chainId);
      case 'net_listening':
        return true;
      case 'eth_chainId':
        return numberToHex(this.#options.chainId);
      case 'eth_syncing':
        return false;
      case 'eth_accounts':
        return [];
      case 'eth_blockNumber':
        return numberToHex(head);
      case 'eth_gasPrice':
        return numberToHex(BASE_FEE_PER_GAS + PRIORITY_FEE_PER_GAS);
      case 'eth_maxPriorityFeePerGas':
        return numberToHex(PRIORITY_FEE_PER_GAS);
      case 'eth_feeHistory': {
        const count = Math.min(Number(params[0] ?? 1), 1024, head + 1);
        const newest = readBlockTag(params[1], head) ?? head;
        const oldest = Math.max(0, newest - count + 1);
        const blocks = chain.blocks.slice(oldest, newest + 1);
        return {
          oldestBlock: numberToHex(oldest),
          baseFeePerGas: [...blocks, blocks[0]].map(() => numberToHex(BASE_FEE_PER_GAS)),
          gasUsedRatio: blocks.map((b) => Number(b.gasUsed) / 60_000_000),
          reward: Array.isArray(params[2])
            ? blocks.map(() => (params[2] as unknown[]).map(() => numberToHex(PRIORITY_FEE_PER_GAS)))
            : undefined,
        };
      }
      case 'eth_getBalance':
        return numberToHex(chain.balanceOf(readHexArg(params[0], 'address') as Address));
      case 'eth_getTransactionCount': {
        const address = readHexArg(params[0], 'address') as Address;
        return numberToHex(params[1] === 'pending' ? this.#pendingNonce(address) : chain.nonceOf(address));
      }
      case 'eth_getCode':
        return '0x';
      case 'eth_getStorageAt':
        return `0x${'0'.repeat(64)}`;
      case 'eth_getBlockByNumber': {
        const block = this.#block(params[0]);
        return block ? formatBlock(block, params[1] === true) : null;
      }
      case 'eth_getBlockByHash': {
        const block = this.#blockByHash(params[0]);
        return block ? formatBlock(block, params[1] === true) : null;
      }
      case 'eth_getBlockTransactionCountByNumber': {
        const block = this.#block(params[0]);
        return block ? numberToHex(block.transactions.length) : null;
      }
      case 'eth_getBlockReceipts': {
        const block =
          typeof params[0] === 'string' && params[0].length === 66
            ? this.#blockByHash(params[0])
            : this.#block(params[0]);
        return block ? block.transactions.map((_, i) => formatReceipt(block, i)) : null;
      }
      case 'eth_getTransactionByHash': {
        const at = chain.locate(readHexArg(params[0], 'hash'));
        const tx = at?.block.transactions[at.index];
        return at && tx ? formatTransaction(tx, at.block, at.index) : null;
      }
      case 'eth_getTransactionByBlockNumberAndIndex': {
        const block = this.#block(params[0]);
        const index = Number(params[1]);
        return block?.transactions[index] ? formatTransaction(block.transactions[index], block, index) : null;
      }
      case 'eth_getTransactionReceipt': {
        const at = chain.locate(readHexArg(params[0], 'hash'));
        return at ? formatReceipt(at.block, at.index) : null;
      }
      case 'eth_sendRawTransaction':
        return this.#sendRawTransaction(params[0]);
      case 'eth_estimateGas':
        return numberToHex(this.#simulate(params[0]));
      case 'eth_call':
        this.#simulate(params[0]);
        return '0x';
      case 'eth_getLogs': {
        const raw = (params[0] ?? {}) as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown };
        const criteria = readLogCriteria(params[0]);
        if (raw.blockHash !== undefined) {
          const block = this.#blockByHash(raw.blockHash);
          if (!block) throw new RpcError(-32000, 'unknown block');
          return logsInRange(chain, block.number, block.number, criteria).map((log) => formatLog(log));
        }
        const from = readBlockTag(raw.fromBlock, head) ?? head;
        const to = readBlockTag(raw.toBlock, head) ?? head;
        if (to - from + 1 > MAX_LOG_RANGE) {
          throw new RpcError(
            -32005,
            `block range too large: ${to - from + 1} blocks requested, at most ${MAX_LOG_RANGE} allowed`,
          );
        }
        return logsInRange(chain, from, to, criteria).map((log) => formatLog(log));
      }
      case 'eth_newFilter':
        return this.#filters.newLogFilter(params[0]);
      case 'eth_newBlockFilter':
        return this.#filters.newBlockFilter();
      case 'eth_getFilterChanges':
        return this.#filters.changes(params[0], true);
      case 'eth_getFilterLogs':
        return this.#filters.changes(params[0], false);
      case 'eth_uninstallFilter':
        return this.#filters.uninstall(params[0]);
      case 'arkiv_query':
        return this.#query(params);
      case 'arkiv_getEntityCount':
        return chain.entities.live.size;
      case 'arkiv_getBlockTiming': {
        const current = chain.head;
        const parent = chain.block(Math.max(0, current.number - 1));
        return {
          current_block: current.number,
          current_block_time: current.timestamp,
          duration: current.number === 0 ? this.#options.blockTime || 2 : current.timestamp - parent.timestamp,
        };
      }
      case 'devnet_mine':
      case 'evm_mine':
      case 'anvil_mine': {
        const count = params[0] === undefined ? 1 : Number(params[0]);
        if (!Number.isInteger(count) || count < 1 || count > 10_000)
          throw new RpcError(-32602, 'block count must be 1 to 10000');
        for (let i = 0; i < count; i++) this.mine();
        return numberToHex(chain.head.number);
      }
      case 'devnet_reorg': {
        const options = (params[0] ?? {}) as { depth?: unknown; replay?: unknown };
        return this.reorg(Number(options.depth ?? 1), options.replay === true);
      }
      case 'devnet_setAutomine':
        this.automine = params[0] !== false;
        return this.automine;
      default:
        throw new RpcError(-32601, `the method ${method} does not exist/is not available`);
    }
  }
}
