// The devnet's chain: blocks, transactions, receipts and accounts, with Arkiv storage transactions
// executed as op-geth does. Everything here is synchronous and deterministic: the chain state is a pure
// function of the block list, which is what makes --state files and forced reorgs simple (replay).
import { concat, hexToBytes, keccak256, numberToHex, pad, toRlp, zeroHash, type Address, type Hex } from 'viem';
import { ARKIV_ADDRESS, ARKIV_TOPICS, SYSTEM_TX_FROM, SYSTEM_TX_TO, entityKey } from '../chain/v1/index.ts';
import type { StorageOps } from '../chain/v1/index.ts';
import { EntityState, type EntityFields } from './state.ts';
import {
  BASE_FEE_PER_GAS,
  BLOCK_GAS_LIMIT,
  effectiveGasPrice,
  flatHex,
  intrinsicGas,
  RpcError,
  type BlockSpec,
  type ChainBlock,
  type ChainLog,
  type ChainOptions,
  type ChainReceipt,
  type ChainTx,
} from './transactions.ts';

const UINT64_MOD = 1n << 64n;

interface Account {
  balance: bigint;
  nonce: bigint;
}

class ArkivExecutionError extends Error {}

function logsBloom(logs: readonly { address: Address; topics: readonly Hex[] }[]): Hex {
  const bloom = new Uint8Array(256);
  for (const log of logs) {
    for (const item of [log.address, ...log.topics]) {
      const hash = hexToBytes(keccak256(item));
      const view = new DataView(hash.buffer, hash.byteOffset, hash.byteLength);
      for (let i = 0; i < 6; i += 2) {
        const bit = view.getUint16(i) & 2047;
        const byte = 256 - 1 - (bit >> 3);
        bloom[byte] = (bloom[byte] ?? 0) | (1 << (bit & 7));
      }
    }
  }
  return flatHex(bloom);
}

const word = (value: bigint | number): Hex => numberToHex(BigInt(value) % UINT64_MOD, { size: 32 });
const addressTopic = (address: Address): Hex => pad(address, { size: 32 });

export class DevnetChain {
  readonly chainId: number;
  readonly blocks: ChainBlock[] = [];
  entities = new EntityState();
  #accounts = new Map<Address, Account>();
  #txLocations = new Map<Hex, { block: number; index: number }>();
  readonly #options: ChainOptions;

  constructor(options: ChainOptions) {
    this.chainId = options.chainId;
    this.#options = options;
    this.#reset();
    this.blocks.push(this.#buildBlock({ timestamp: options.genesisTimestamp, salt: 0, transactions: [] }, true));
  }

  get head(): ChainBlock {
    const head = this.blocks.at(-1);
    if (!head) throw new Error('devnet chain has no genesis block');
    return head;
  }

  /** Block `number`, which the caller knows exists (at most the head's number). */
  block(number: number): ChainBlock {
    const block = this.blocks[number];
    if (!block) throw new Error(`devnet chain has no block ${number}`);
    return block;
  }

  get options(): ChainOptions {
    return this.#options;
  }

  balanceOf(address: Address): bigint {
    return this.#accounts.get(address.toLowerCase() as Address)?.balance ?? 0n;
  }

  nonceOf(address: Address): bigint {
    return this.#accounts.get(address.toLowerCase() as Address)?.nonce ?? 0n;
  }

  locate(hash: Hex): { block: ChainBlock; index: number } | undefined {
    const at = this.#txLocations.get(hash.toLowerCase() as Hex);
    const block = at && this.blocks[at.block];
    return at && block ? { block, index: at.index } : undefined;
  }

  /**
   * Checks a transaction against the head state as the pool would (nonce, gas, fees, balance).
   * `pendingNonce` lets a caller account for transactions waiting to be mined.
   */
  checkAdmission(tx: ChainTx, pendingNonce = this.nonceOf(tx.from)): void {
    if (tx.nonce < pendingNonce)
      throw new RpcError(-32000, `nonce too low: next nonce ${pendingNonce}, tx nonce ${tx.nonce}`);
    if (tx.nonce > pendingNonce)
      throw new RpcError(
        -32000,
        `nonce too high: next nonce ${pendingNonce}, tx nonce ${tx.nonce} (the devnet keeps no queue)`,
      );
    const intrinsic = intrinsicGas(tx.input);
    if (tx.gas < intrinsic)
      throw new RpcError(-32000, `intrinsic gas too low: gas ${tx.gas}, minimum needed ${intrinsic}`);
    if (tx.gas > BLOCK_GAS_LIMIT) throw new RpcError(-32000, 'exceeds block gas limit');
    const feeCap = tx.maxFeePerGas ?? tx.gasPrice ?? 0n;
    if (feeCap < BASE_FEE_PER_GAS) {
      throw new RpcError(
        -32000,
        `max fee per gas less than block base fee: maxFeePerGas: ${feeCap}, baseFee: ${BASE_FEE_PER_GAS}`,
      );
    }
    if (tx.to === null) throw new RpcError(-32000, 'contract creation is not supported by the devnet');
    const cost = tx.gas * feeCap + tx.value;
    const balance = this.balanceOf(tx.from);
    if (balance < cost) {
      throw new RpcError(
        -32000,
        `insufficient funds for gas * price + value: address ${tx.from} have ${balance} want ${cost}`,
      );
    }
  }

  /** Runs Arkiv operations against the head without committing (eth_call / eth_estimateGas); returns the error text. */
  dryRun(ops: StorageOps, sender: Address): string | undefined {
    try {
      this.#runStorageOps(ops, sender.toLowerCase() as Address, this.head.number + 1, zeroHash, 0, () => undefined);
      return undefined;
    } catch (error) {
      if (error instanceof ArkivExecutionError) return error.message;
      throw error;
    }
  }

  /** Executes and appends a block. */
  mine(spec: BlockSpec): ChainBlock {
    const block = this.#buildBlock(spec, false);
    this.blocks.push(block);
    return block;
  }

  /** The block specs (enough to rebuild the chain), genesis excluded. */
  specs(from = 1): BlockSpec[] {
    return this.blocks.slice(from).map((b) => ({
      timestamp: b.timestamp,
      salt: b.salt,
      transactions: b.transactions.filter((tx) => tx.raw !== null),
    }));
  }

  /** Drops every block after `keep` and rebuilds the state by replaying the rest. */
  truncate(keep: number): ChainTx[] {
    const kept = this.specs(1).slice(0, keep);
    const dropped = this.specs(keep + 1).flatMap((s) => s.transactions);
    const genesis = this.block(0);
    this.blocks.length = 0;
    this.#reset();
    this.blocks.push(genesis);
    for (const spec of kept) this.mine(spec);
    return dropped;
  }

  #reset(): void {
    this.entities = new EntityState();
    this.#options.registry?.reset();
    this.#accounts = new Map();
    this.#txLocations = new Map();
    for (const address of this.#options.fundedAccounts) {
      this.#accounts.set(address.toLowerCase() as Address, { balance: this.#options.initialBalance, nonce: 0n });
    }
  }

  #account(address: Address): Account {
    let account = this.#accounts.get(address);
    if (!account) this.#accounts.set(address, (account = { balance: 0n, nonce: 0n }));
    return account;
  }

  #buildBlock(spec: BlockSpec, genesis: boolean): ChainBlock {
    const number = genesis ? 0 : this.head.number + 1;
    const parentHash = genesis ? zeroHash : this.head.hash;
    const registry = this.#options.registry;
    const systemTx = genesis || registry ? [] : [this.#systemTx(number)];
    const transactions = [...systemTx, ...spec.transactions];
    const hash = keccak256(
      toRlp([
        parentHash,
        numberToHex(number),
        numberToHex(spec.timestamp),
        numberToHex(spec.salt),
        ...transactions.map((tx) => tx.hash),
      ]),
    );
    const receipts: ChainReceipt[] = [];
    let cumulativeGasUsed = 0n;
    let logIndex = 0;
    const emit = (txIndex: number, txHash: Hex) => (log: { topics: Hex[]; data: Hex }) => {
      const full: ChainLog = {
        address: registry?.address ?? ARKIV_ADDRESS,
        topics: log.topics,
        data: log.data,
        blockNumber: number,
        blockHash: hash,
        transactionHash: txHash,
        transactionIndex: txIndex,
        logIndex: logIndex++,
      };
      return full;
    };
    transactions.forEach((tx, index) => {
      const logs: ChainLog[] = [];
      const push = emit(index, tx.hash);
      let status: 0 | 1 = 1;
      let gasUsed = 0n;
      let revertReason: string | undefined;
      if (tx.type === 'deposit') {
        for (const key of this.entities.expiringAt(number)) {
          const entity = this.entities.get(key);
          if (!entity) continue;
          this.entities.remove(key, number);
          logs.push(push({ topics: [ARKIV_TOPICS.expired, key, addressTopic(entity.owner)], data: key }));
        }
      } else {
        const sender = this.#account(tx.from);
        gasUsed = intrinsicGas(tx.input);
        sender.nonce += 1n;
        sender.balance -= gasUsed * effectiveGasPrice(tx);
        if (registry && tx.to === registry.address) {
          const result = registry.execute(tx, number);
          ({ status, revertReason } = result);
          sender.balance -= (result.gasUsed - gasUsed) * effectiveGasPrice(tx);
          gasUsed = result.gasUsed;
          logs.push(...result.logs.map(push));
        } else if (!registry && tx.to === ARKIV_ADDRESS) {
          const pending: { topics: Hex[]; data: Hex }[] = [];
          try {
            if (!tx.ops) throw new ArkivExecutionError('invalid arkiv transaction');
            const commit = this.#runStorageOps(tx.ops, tx.from, number, tx.hash, index, (log) => pending.push(log));
            commit();
            logs.push(...pending.map(push));
          } catch (error) {
            if (!(error instanceof ArkivExecutionError)) throw error;
            status = 0;
            revertReason = error.message;
          }
        }
        if (status === 1 && tx.value > 0n && tx.to) {
          sender.balance -= tx.value;
          this.#account(tx.to).balance += tx.value;
        }
        this.#txLocations.set(tx.hash, { block: number, index });
      }
      cumulativeGasUsed += gasUsed;
      receipts.push({
        transactionHash: tx.hash,
        transactionIndex: index,
        status,
        gasUsed,
        cumulativeGasUsed,
        effectiveGasPrice: tx.type === 'deposit' ? 0n : effectiveGasPrice(tx),
        logs,
        logsBloom: logsBloom(logs),
        revertReason,
      });
    });
    const [system] = systemTx;
    if (system) this.#txLocations.set(system.hash, { block: number, index: 0 });
    return {
      number,
      hash,
      parentHash,
      timestamp: spec.timestamp,
      salt: spec.salt,
      transactions,
      receipts,
      gasUsed: cumulativeGasUsed,
      logsBloom: logsBloom(receipts.flatMap((r) => r.logs)),
    };
  }

  #systemTx(number: number): ChainTx {
    const input = numberToHex(number);
    return {
      hash: keccak256(concat(['0x7e', SYSTEM_TX_TO, input])),
      raw: null,
      type: 'deposit',
      from: SYSTEM_TX_FROM,
      to: SYSTEM_TX_TO,
      nonce: 0n,
      value: 0n,
      gas: 1_000_000n,
      input,
    };
  }

  /**
   * Runs one transaction's operations in the node's order (creates, deletes, updates, extends, owner
   * changes) against an overlay, so a failure anywhere leaves the state untouched.
   * Returns the commit step; throws ArkivExecutionError with op-geth's wording on failure.
   */
  #runStorageOps(
    ops: StorageOps,
    sender: Address,
    block: number,
    txHash: Hex,
    txIndex: number,
    emit: (log: { topics: Hex[]; data: Hex }) => void,
  ): () => void {
    const overlay = new Map<Hex, EntityFields | null>();
    const writes: { key: Hex; fields: EntityFields | null }[] = [];
    const current = (key: Hex): EntityFields | undefined => {
      const k = key.toLowerCase() as Hex;
      return overlay.has(k) ? (overlay.get(k) ?? undefined) : this.entities.get(k);
    };
    const set = (key: Hex, fields: EntityFields | null) => {
      overlay.set(key, fields);
      writes.push({ key, fields });
    };
    const owned = (verb: string, key: Hex): EntityFields => {
      const entity = current(key);
      if (!entity) throw new ArkivExecutionError(`failed to ${verb} entity ${key}: entity not found`);
      if (entity.owner !== sender) {
        throw new ArkivExecutionError(
          `failed to ${verb} entity ${key}: the sender ${sender} is not the owner ${entity.owner}`,
        );
      }
      return entity;
    };
    const attributes = (op: StorageOps['creates'][number]) => ({
      stringAttributes: new Map(op.stringAttributes.map((a) => [a.key, a.value])),
      numericAttributes: new Map(op.numericAttributes.map((a) => [a.key, a.value])),
    });
    const expiry = (btl: bigint) => (BigInt(block) + btl) % UINT64_MOD;

    ops.creates.forEach((op, i) => {
      const key = entityKey(txHash, op.payload, i);
      const fields: EntityFields = {
        key,
        owner: sender,
        creator: sender,
        contentType: op.contentType,
        payload: op.payload,
        ...attributes(op),
        expiresAt: expiry(op.btl),
        createdAtBlock: block,
        lastModifiedAtBlock: block,
        transactionIndexInBlock: txIndex,
        operationIndexInTransaction: i,
        sequence: (BigInt(block) << 32n) | (BigInt(txIndex) << 16n) | BigInt(i),
      };
      set(key, fields);
      emit({
        topics: [ARKIV_TOPICS.created, key, addressTopic(sender)],
        data: concat([word(fields.expiresAt), word(0)]),
      });
    });
    for (const rawKey of ops.deletes) {
      const key = rawKey.toLowerCase() as Hex;
      const entity = owned('delete', key);
      set(key, null);
      emit({ topics: [ARKIV_TOPICS.deleted, key, addressTopic(entity.owner)], data: '0x' });
    }
    for (const op of ops.updates) {
      const key = op.entityKey.toLowerCase() as Hex;
      const entity = owned('update', key);
      const fields: EntityFields = {
        ...entity,
        contentType: op.contentType,
        payload: op.payload,
        ...attributes(op),
        expiresAt: expiry(op.btl),
        lastModifiedAtBlock: block,
      };
      set(key, fields);
      emit({
        topics: [ARKIV_TOPICS.updated, key, addressTopic(entity.owner)],
        data: concat([word(entity.expiresAt), word(fields.expiresAt), word(0)]),
      });
    }
    for (const op of ops.extends) {
      const key = op.entityKey.toLowerCase() as Hex;
      const entity = current(key);
      if (!entity) throw new ArkivExecutionError(`failed to extend entity ${key}: entity not found`);
      const fields: EntityFields = { ...entity, expiresAt: (entity.expiresAt + op.numberOfBlocks) % UINT64_MOD };
      set(key, fields);
      emit({
        topics: [ARKIV_TOPICS.extended, key, addressTopic(entity.owner)],
        data: concat([word(entity.expiresAt), word(fields.expiresAt), word(0)]),
      });
    }
    for (const op of ops.ownerChanges) {
      const key = op.entityKey.toLowerCase() as Hex;
      const entity = owned('change owner of', key);
      const newOwner = op.newOwner.toLowerCase() as Address;
      set(key, { ...entity, owner: newOwner });
      emit({
        topics: [ARKIV_TOPICS.ownerChanged, key, addressTopic(entity.owner), addressTopic(newOwner)],
        data: '0x',
      });
    }
    return () => {
      for (const { key, fields } of writes) {
        if (fields) this.entities.write(fields, block);
        else this.entities.remove(key, block);
      }
    };
  }
}
