// The Arkiv v1 ChainWriter: a batch becomes one storage transaction (brotli(RLP(ops))) to the Arkiv
// processor, and each create's key is derived from the transaction hash, so `wait: none` knows its keys
// before the receipt. viem signs; the SDK's mutateEntities is not used because it only returns after
// the receipt.
import { bytesToHex, type Hex } from 'viem';
import type { EntityBatch } from '../operations.ts';
import { createTransactionSender } from '../signer.ts';
import { createHttpTransport, type RpcTransport } from '../transport.ts';
import type { ChainWriter } from '../writer.ts';
import { ARKIV_ADDRESS, entityKey } from './protocol.ts';
import { encodeStorageTransactionOffThread } from './storageTransaction.ts';

/** Attempts per request of a writer that builds its own transport (no shared one given). */
const OWN_TRANSPORT_ATTEMPTS = 3;

export interface ArkivV1WriterOptions {
  /** The node's RPC; used to build a transport when `transport` is not given (credentials become Basic auth). */
  rpcUrl: string;
  chainId: number;
  /** The signer key (never logged). */
  privateKey: Hex;
  /** The node's one transport, shared with the ChainSource (retries, rate limits, redaction). */
  transport?: RpcTransport;
}

/**
 * @example const writer = createArkivV1Writer({ rpcUrl, chainId: 1337, privateKey, transport })
 */
export function createArkivV1Writer(options: ArkivV1WriterOptions): ChainWriter {
  const transport = options.transport ?? createHttpTransport({ url: options.rpcUrl, attempts: OWN_TRANSPORT_ATTEMPTS });
  const sender = createTransactionSender({
    transport,
    chainId: options.chainId,
    privateKey: options.privateKey,
    to: ARKIV_ADDRESS,
  });
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
