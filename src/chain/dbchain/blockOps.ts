// Turns the DB-chain registry's successful transactions of one block into entity operations, in chain
// order: each transaction's `execute` calldata decoded by the node's rules and zipped with its registry
// logs (the n-th op with the n-th log; reference/arkiv-gen-d.md §3). Logs give keys, owners and resolved
// expiries; calldata gives the content. A patch carries only its changes: it comes out as `patched`, and
// the source reads the entity at the block for the full content. No expire ops: the indexer ends an
// entity at its expiry block itself. The node decodes a transaction strictly before it logs anything, so a
// logged transaction that does not decode, or whose logs do not match its operations, is a wrong answer of
// the RPC: the read fails (ChainDataError, retried), it never skips the operations. Only a transaction over
// the decoding bounds (txBounds.ts) is skipped, and counted, the same on every node.
import type { Address, Hex } from 'viem';
import type { EntityOp, OpPosition } from '../operations.ts';
import { REGISTRY_ADDRESS } from './abi.ts';
import { splitCreateCells } from './attributes.ts';
import type { RegistryOperation } from './calldata.ts';
import { ChainDataError } from '../source.ts';
import { DbChainCodecError } from './errors.ts';
import { RegistryEventError, decodeRegistryEvent, type RegistryEvent } from './events.ts';
import type { LoggedTransaction, RegistryLog } from './reads.ts';
import { cellAttributes } from './schema.ts';
import { txVerdict, type TxVerdict } from './txBounds.ts';

/** An op of a block, with patches still to be filled with the entity's content at the block. */
export type DecodedOp = EntityOp | ({ type: 'patched'; key: Hex; owner: Address } & OpPosition);

export interface DecodedTransactions {
  ops: DecodedOp[];
  /** Transactions skipped and counted by the decoding bounds. */
  anomalies: string[];
}

class Mismatch extends Error {}

/** Items by key, each group in the items' order (Map.groupBy is Node 21's). */
export function groupBy<T, K>(items: readonly T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/**
 * @param transactions the block's registry transactions that emitted logs (a reverted one emits none)
 * @param logs those transactions' registry logs, in log order
 * @param verdicts each transaction's verdict by hash, when already decoded (decodeThread.ts); else decoded here
 * @throws ChainDataError when one of them does not decode or does not match its logs
 */
export function decodeRegistryTransactions(
  block: number,
  transactions: readonly LoggedTransaction[],
  logs: readonly RegistryLog[],
  verdicts?: ReadonlyMap<Hex, TxVerdict>,
): DecodedTransactions {
  const ops: DecodedOp[] = [];
  const anomalies: string[] = [];
  const logsOf = groupBy(
    logs.filter((log) => log.address === REGISTRY_ADDRESS),
    (log) => log.transactionHash,
  );
  for (const tx of [...transactions].sort((a, b) => a.index - b.index)) {
    const txLogs = logsOf.get(tx.hash) ?? [];
    const verdict = verdicts?.get(tx.hash) ?? txVerdict(tx);
    if ('skipped' in verdict) {
      anomalies.push(`block ${block}, transaction ${tx.hash} skipped: ${verdict.skipped}`);
      continue;
    }
    try {
      if ('refused' in verdict) throw new Mismatch(verdict.refused);
      ops.push(...decodeTransaction(block, tx, txLogs, verdict.calls));
    } catch (error) {
      if (!(error instanceof DbChainCodecError || error instanceof RegistryEventError || error instanceof Mismatch))
        throw error;
      throw new ChainDataError(
        `block ${block}, transaction ${tx.hash}: ${error.message}; the chain logs only what decodes, so the RPC answered it wrongly; retrying`,
      );
    }
  }
  return { ops, anomalies };
}

function decodeTransaction(
  block: number,
  tx: LoggedTransaction,
  logs: readonly RegistryLog[],
  calls: readonly RegistryOperation[],
): DecodedOp[] {
  if (tx.to !== REGISTRY_ADDRESS) throw new Mismatch('emitted registry logs but was not sent to the registry');
  const events = logs.map((log) => decodeRegistryEvent(log)).filter((e): e is RegistryEvent => e !== undefined);
  if (events.length !== calls.length) throw new Mismatch(`${calls.length} operations but ${events.length} logs`);
  // The node numbers a transaction's new entities by key: that is their creation position.
  const createdKeys = events
    .filter((e) => e.event === 'created')
    .map((e) => e.entityKey)
    .sort();
  const out: DecodedOp[] = [];
  calls.forEach((call, i) => {
    const event = events[i] as RegistryEvent;
    const expect = (kind: RegistryEvent['event']) => {
      if (event.event !== kind) throw new Mismatch(`operation ${i} is a ${call.op} but its log is ${event.event}`);
      if (call.op !== 'create' && call.entityKey.toLowerCase() !== event.entityKey)
        throw new Mismatch(`operation ${i}: the key differs from its log`);
    };
    const position = { txIndex: tx.index, opIndex: i };
    switch (call.op) {
      case 'create': {
        expect('created');
        if (event.event !== 'created') return;
        if (event.owner !== tx.from) throw new Mismatch(`create ${i}: the logged owner is not the sender`);
        const { payload, contentType, attributes } = splitCreateCells(call.attributes);
        out.push({
          type: 'create',
          key: event.entityKey,
          owner: event.owner,
          expiresAt: event.expiresAt,
          content: {
            btl: event.expiresAt > BigInt(block) ? event.expiresAt - BigInt(block) : 0n,
            contentType,
            payload,
            ...cellAttributes(attributes),
          },
          txIndex: tx.index,
          opIndex: createdKeys.indexOf(event.entityKey),
        });
        return;
      }
      case 'patch':
        expect('patched');
        out.push({
          type: 'patched',
          key: event.entityKey,
          owner: (event as Extract<RegistryEvent, { event: 'patched' }>).owner,
          ...position,
        });
        return;
      case 'extend':
        expect('extended');
        if (event.event === 'extended')
          out.push({ type: 'extend', key: event.entityKey, expiresAt: event.expiresAt, touches: true, ...position });
        return;
      case 'transfer':
        expect('transferred');
        if (event.event !== 'transferred') return;
        if (event.newOwner !== call.newOwner) throw new Mismatch(`transfer ${i}: the new owner differs from its log`);
        out.push({
          type: 'changeOwner',
          key: event.entityKey,
          newOwner: event.newOwner as Address,
          touches: true,
          ...position,
        });
        return;
      case 'delete':
        expect('deleted');
        out.push({ type: 'delete', key: event.entityKey, ...position });
        return;
    }
  });
  return out;
}
