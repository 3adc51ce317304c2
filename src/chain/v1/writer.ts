// The Arkiv v1 ChainWriter: a batch becomes one storage transaction (brotli(RLP(ops))) to the Arkiv
// processor, and each create's key is derived from the transaction hash, so `wait: none` knows its keys
// before the receipt. viem signs; the SDK's mutateEntities is not used because it only returns after
// the receipt.
import { bytesToHex } from 'viem';
import { type EntityBatch, PERMANENT_BTL } from '../operations.ts';
import { createWriterSender, type WriterOptions } from '../signer.ts';
import type { ChainWriter } from '../writer.ts';
import { ARKIV_ADDRESS, entityKey } from './protocol.ts';
import { encodeStorageTransactionOffThread } from './storageTransaction.ts';

/**
 * What v1 writes for PERMANENT_BTL: v1 has no permanent entity, and `block + btl` is unchecked uint64
 * arithmetic there (2^64−1 would wrap into the past), but it prices no lifetime (arkiv-node.md, "Gas"), so
 * a memory kept until deleted lives 100 years (36,525 days of 43,200 two-second blocks); its expiry stays a safe
 * JavaScript integer.
 */
export const V1_UNTIL_DELETED_BTL = 36_525n * 43_200n;

/** The batch with every PERMANENT_BTL replaced by V1_UNTIL_DELETED_BTL. */
function withV1Lifetimes(batch: EntityBatch): EntityBatch {
  const life = <T extends { btl: bigint }>(op: T): T =>
    op.btl === PERMANENT_BTL ? { ...op, btl: V1_UNTIL_DELETED_BTL } : op;
  return { ...batch, creates: batch.creates.map(life), updates: batch.updates.map(life) };
}

/** The node's RPC, chain, signer key and optionally its shared transport. */
export type ArkivV1WriterOptions = WriterOptions;

/**
 * @example const writer = createArkivV1Writer({ rpcUrl, chainId: 1337, privateKey, transport })
 */
export function createArkivV1Writer(options: ArkivV1WriterOptions): ChainWriter {
  const { sender } = createWriterSender(options, ARKIV_ADDRESS);
  return {
    address: sender.address,
    balance: () => sender.balance(),
    async send(batch) {
      const { hash, extra: payloads } = await sender.send(async () => {
        const ops = withV1Lifetimes(typeof batch === 'function' ? batch() : batch);
        const data = bytesToHex(await encodeStorageTransactionOffThread(ops));
        return { data, extra: ops.creates.map((c) => c.payload) };
      });
      return { hash, keys: payloads.map((payload, i) => entityKey(hash, payload, i)) };
    },
    waitForReceipt: (hash, timeoutMs) => sender.waitForReceipt(hash, timeoutMs),
  };
}
