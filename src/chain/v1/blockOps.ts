// Turns one Arkiv v1 block (transactions + receipts) into the entity operations it applied, in chain
// order: expiries first, then per successful storage transaction its creates, deletes, updates, extends
// and owner changes. Calldata gives the content; the receipt's logs give keys and expiries, and are
// cross-checked against the calldata. Failed transactions are skipped: they changed nothing.
import { hexToBigInt, type Address, type Hex } from 'viem';
import type { EntityOp } from '../operations.ts';
import type { BlockWithReceipts, ChainLogData } from './reads.ts';
import { ARKIV_ADDRESS, ARKIV_TOPICS } from './protocol.ts';
import { StorageTxDecodeError, decodeStorageTransaction } from './storageTransaction.ts';

export type { EntityOp } from '../operations.ts';

export interface DecodedBlock {
  ops: EntityOp[];
  /** Successful storage transactions whose calldata or logs could not be understood (never expected on a real node). */
  anomalies: string[];
}

const word = (data: Hex, index: number): bigint =>
  hexToBigInt(`0x${data.slice(2 + 64 * index, 2 + 64 * (index + 1))}` as Hex);
const topicAddress = (topic: Hex): Address => `0x${topic.slice(26)}` as Address;

// Logs come from the chain: a log short of the topic its event declares is an anomaly, not a crash.
function topicAt(log: ChainLogData, index: number, where: string): Hex {
  const topic = log.topics[index];
  if (topic === undefined) throw new StorageTxDecodeError(`${where}: log has no topic ${index}`);
  return topic;
}

/**
 * Calldata hex as bytes through Buffer's native decoder (viem's hexToBytes, a JS loop, cost as much as
 * the rest of a block's decode). Buffer stops silently at the first non-hex pair, so the length proves
 * every digit was hex. Throws StorageTxDecodeError: a transaction the node sent malformed is an anomaly.
 * @example calldataBytes('0x0aff') // Uint8Array [10, 255]
 */
export function calldataBytes(hex: string): Uint8Array {
  if (!hex.startsWith('0x') || hex.length % 2 !== 0) throw new StorageTxDecodeError('calldata is not hex');
  const bytes = Buffer.from(hex.slice(2), 'hex');
  if (bytes.length !== (hex.length - 2) / 2) throw new StorageTxDecodeError('calldata is not hex');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

/**
 * @example decodeBlock((await getBlocksWithReceipts(t, n, n))[0]).ops
 */
export function decodeBlock(block: BlockWithReceipts): DecodedBlock {
  const ops: EntityOp[] = [];
  const anomalies: string[] = [];
  for (const tx of block.transactions) {
    for (const log of tx.logs) {
      if (log.address !== ARKIV_ADDRESS || log.topics[0] !== ARKIV_TOPICS.expired) continue;
      const key = log.topics[1];
      if (key === undefined) anomalies.push(`tx ${tx.hash}: Expired log has no entity key`);
      else ops.push({ type: 'expire', key });
    }
  }
  for (const tx of block.transactions) {
    if (tx.to !== ARKIV_ADDRESS || tx.status !== 1) continue;
    let decoded;
    try {
      decoded = decodeStorageTransaction(calldataBytes(tx.input));
    } catch (error) {
      if (!(error instanceof StorageTxDecodeError)) throw error;
      anomalies.push(`tx ${tx.hash}: successful but calldata does not decode (${error.message})`);
      continue;
    }
    const logs = tx.logs.filter((log) => log.address === ARKIV_ADDRESS && log.topics[0] !== ARKIV_TOPICS.expired);
    const expected =
      decoded.creates.length +
      decoded.deletes.length +
      decoded.updates.length +
      decoded.extends.length +
      decoded.ownerChanges.length;
    if (logs.length !== expected) {
      anomalies.push(`tx ${tx.hash}: ${expected} operations but ${logs.length} logs`);
      continue;
    }
    let cursor = 0;
    const next = (topic: Hex, what: string): ChainLogData => {
      const log = logs[cursor++];
      if (log === undefined) throw new StorageTxDecodeError(`tx ${tx.hash}: fewer logs than operations`);
      if (log.topics[0] !== topic) throw new StorageTxDecodeError(`tx ${tx.hash}: log ${cursor - 1} is not ${what}`);
      return log;
    };
    const position = (opIndex: number) => ({ txIndex: tx.index, opIndex });
    try {
      const txOps: EntityOp[] = [];
      decoded.creates.forEach((content, i) => {
        const log = next(ARKIV_TOPICS.created, 'Created');
        txOps.push({
          type: 'create',
          key: topicAt(log, 1, `tx ${tx.hash}: create ${i}`),
          owner: tx.from,
          expiresAt: word(log.data, 0),
          content,
          ...position(i),
        });
      });
      decoded.deletes.forEach((key, i) => {
        const log = next(ARKIV_TOPICS.deleted, 'Deleted');
        const logKey = topicAt(log, 1, `tx ${tx.hash}: delete ${i}`);
        if (logKey !== key.toLowerCase())
          throw new StorageTxDecodeError(`tx ${tx.hash}: delete ${i} key differs from its log`);
        txOps.push({ type: 'delete', key: logKey, ...position(i) });
      });
      decoded.updates.forEach((content, i) => {
        const log = next(ARKIV_TOPICS.updated, 'Updated');
        const key = topicAt(log, 1, `tx ${tx.hash}: update ${i}`);
        if (key !== content.entityKey.toLowerCase())
          throw new StorageTxDecodeError(`tx ${tx.hash}: update ${i} key differs from its log`);
        txOps.push({
          type: 'update',
          key,
          owner: tx.from,
          expiresAt: word(log.data, 1),
          content,
          ...position(i),
        });
      });
      decoded.extends.forEach((op, i) => {
        const log = next(ARKIV_TOPICS.extended, 'BTLExtended');
        const key = topicAt(log, 1, `tx ${tx.hash}: extend ${i}`);
        if (key !== op.entityKey.toLowerCase())
          throw new StorageTxDecodeError(`tx ${tx.hash}: extend ${i} key differs from its log`);
        txOps.push({ type: 'extend', key, expiresAt: word(log.data, 1), ...position(i) });
      });
      decoded.ownerChanges.forEach((op, i) => {
        const log = next(ARKIV_TOPICS.ownerChanged, 'OwnerChanged');
        const key = topicAt(log, 1, `tx ${tx.hash}: owner change ${i}`);
        if (topicAddress(topicAt(log, 3, `tx ${tx.hash}: owner change ${i}`)) !== op.newOwner.toLowerCase())
          throw new StorageTxDecodeError(`tx ${tx.hash}: owner change ${i} differs from its log`);
        txOps.push({
          type: 'changeOwner',
          key,
          newOwner: op.newOwner.toLowerCase() as Address,
          ...position(i),
        });
      });
      ops.push(...txOps);
    } catch (error) {
      if (!(error instanceof StorageTxDecodeError)) throw error;
      anomalies.push(error.message);
    }
  }
  return { ops, anomalies };
}
