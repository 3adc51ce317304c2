// The Arkiv v1 ChainWriter: a batch becomes one storage transaction (brotli(RLP(ops))) to the Arkiv
// processor, and each create's key is derived from the transaction hash, so `wait: none` knows its keys
// before the receipt. viem signs; the SDK's mutateEntities is not used because it only returns after
// the receipt.
import { bytesToHex } from 'viem';
import type { EntityBatch } from '../operations.ts';
import { createWriterSender, type WriterOptions } from '../signer.ts';
import type { ChainWriter } from '../writer.ts';
import { ARKIV_ADDRESS, entityKey } from './protocol.ts';
import { encodeStorageTransactionOffThread } from './storageTransaction.ts';

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
        const ops: EntityBatch = typeof batch === 'function' ? batch() : batch;
        const data = bytesToHex(await encodeStorageTransactionOffThread(ops));
        return { data, extra: ops.creates.map((c) => c.payload) };
      });
      return { hash, keys: payloads.map((payload, i) => entityKey(hash, payload, i)) };
    },
    waitForReceipt: (hash, timeoutMs) => sender.waitForReceipt(hash, timeoutMs),
  };
}
