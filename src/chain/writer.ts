// The signer side of the chain (write daemon, agent memory): signs and sends storage transactions with a
// local key, and waits for receipts. It returns the transaction hash as soon as the node accepted it, so
// `wait: none` answers before the receipt; entity keys are computable from that hash (entityKey).
// viem is used directly because the SDK's mutateEntities only returns after the receipt.
//
// Every write of one signer goes through one ordered queue with a nonce this module owns: concurrent
// sends handed out nonces locally (viem's nonce manager) and lost batches to "nonce too high/low" as soon
// as one send failed. Here a nonce is only spent when the node accepted the transaction, and any failure
// re-reads the pending nonce from the chain, so a refused send never poisons the next and a gap left by
// a crash heals.
import { bytesToHex, createPublicClient, createWalletClient, defineChain, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ARKIV_ADDRESS } from './protocol.ts';
import { encodeStorageTransaction, type StorageOps } from './storageTransaction.ts';
import { urlCredentials } from './transport.ts';

export interface SentTransaction {
  hash: Hex;
}

export interface TransactionOutcome {
  blockNumber: number;
  status: 'success' | 'reverted';
  /** Why it reverted, as the node explains it (eth_call replay), when available. */
  reason?: string;
}

/** The RPC could not be reached to send or follow the transaction. */
export class ChainUnreachableError extends Error {
  override name = 'ChainUnreachableError';
}

/** The node refused the transaction before mining it (estimateGas or sendRawTransaction failed). */
export class TransactionRefusedError extends Error {
  override name = 'TransactionRefusedError';
}

/** Sends retried with a freshly read nonce when the node refuses one for its nonce. */
export const NONCE_RETRIES = 3;

export interface ChainWriter {
  readonly address: Address;
  balance(): Promise<bigint>;
  /**
   * Sends in call order, one at a time. `ops` may be a function: it runs at the job's turn, after every
   * earlier send was accepted or refused, so it sees their effects (a throw fails only this job).
   */
  send(ops: StorageOps | (() => StorageOps)): Promise<SentTransaction>;
  waitForReceipt(hash: Hex, timeoutMs: number): Promise<TransactionOutcome>;
}

/** The node's message without viem's multi-line decoration (request bodies, versions). */
function nodeReason(error: unknown): string {
  const e = error as { details?: string; shortMessage?: string; message?: string; cause?: unknown };
  const details = e.details ?? (e.cause as { details?: string } | undefined)?.details;
  const reason = details ?? e.shortMessage ?? e.message ?? String(error);
  return reason.split('\n', 1)[0] ?? reason;
}

/**
 * @param privateKey the signer key (never logged)
 * @example const writer = createChainWriter({ rpcUrl, chainId: 1337, privateKey })
 */
export function createChainWriter(options: { rpcUrl: string; chainId: number; privateKey: Hex }): ChainWriter {
  const chain = defineChain({
    id: options.chainId,
    name: 'arkiv',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [urlCredentials(options.rpcUrl).endpoint] } },
  });
  const account = privateKeyToAccount(options.privateKey);
  // URL credentials travel as Basic auth, as on the read side: fetch would refuse the URL itself.
  const { endpoint, authorization } = urlCredentials(options.rpcUrl);
  const transport = http(endpoint, {
    retryCount: 2,
    fetchOptions: authorization ? { headers: { authorization } } : undefined,
  });
  const wallet = createWalletClient({ chain, transport, account });
  const reader = createPublicClient({ chain, transport, pollingInterval: 250 });
  let queue: Promise<unknown> = Promise.resolve();
  /** The next nonce to use; undefined = read the pending nonce from the chain first. */
  let nonce: number | undefined;
  async function sendInOrder(data: Hex): Promise<Hex> {
    for (let attempt = 0; ; attempt++) {
      try {
        nonce ??= await reader.getTransactionCount({ address: account.address, blockTag: 'pending' });
        const hash = await wallet.sendTransaction({ to: ARKIV_ADDRESS, data, value: 0n, nonce });
        nonce++;
        return hash;
      } catch (error) {
        // Whether the node took the nonce is unknown (a timeout may follow acceptance): ask it next time.
        nonce = undefined;
        // viem names transport failures HttpRequestError / TimeoutError (possibly as the cause).
        const names = [(error as Error).name, (error as { cause?: Error }).cause?.name];
        if (names.some((n) => n === 'HttpRequestError' || n === 'TimeoutError'))
          throw new ChainUnreachableError('the RPC cannot be reached to send the transaction');
        const reason = nodeReason(error);
        if (/nonce/i.test(reason) && attempt < NONCE_RETRIES) continue;
        throw new TransactionRefusedError(reason);
      }
    }
  }
  return {
    address: account.address.toLowerCase() as Address,
    balance: () => reader.getBalance({ address: account.address }),
    send(ops) {
      const job = queue.then(async () => {
        const data = bytesToHex(encodeStorageTransaction(typeof ops === 'function' ? ops() : ops));
        return { hash: await sendInOrder(data) };
      });
      // The queue continues whatever this job's outcome; the caller sees the outcome.
      queue = job.then(
        () => undefined,
        () => undefined,
      );
      return job;
    },
    async waitForReceipt(hash, timeoutMs) {
      const receipt = await reader.waitForTransactionReceipt({ hash, timeout: timeoutMs, pollingInterval: 250 });
      if (receipt.status === 'success') return { blockNumber: Number(receipt.blockNumber), status: 'success' };
      let reason: string | undefined;
      const tx = await reader.getTransaction({ hash });
      await reader
        .call({ account: tx.from, to: ARKIV_ADDRESS, data: tx.input })
        .catch((error) => (reason = nodeReason(error)));
      return { blockNumber: Number(receipt.blockNumber), status: 'reverted', reason };
    },
  };
}
