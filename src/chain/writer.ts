// The signer side of the chain (write daemon, agent memory): signs and sends storage transactions with a
// local key, and waits for receipts. It returns the transaction hash as soon as the node accepted it, so
// `wait: none` answers before the receipt; entity keys are computable from that hash (entityKey).
// viem is used directly because the SDK's mutateEntities only returns after the receipt.
import { bytesToHex, createPublicClient, createWalletClient, defineChain, http, type Address, type Hex } from 'viem';
import { nonceManager, privateKeyToAccount } from 'viem/accounts';
import { ARKIV_ADDRESS } from './protocol.ts';
import { encodeStorageTransaction, type StorageOps } from './storageTransaction.ts';

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

export interface ChainWriter {
  readonly address: Address;
  balance(): Promise<bigint>;
  send(ops: StorageOps): Promise<SentTransaction>;
  waitForReceipt(hash: Hex, timeoutMs: number): Promise<TransactionOutcome>;
}

/** The node's message without viem's multi-line decoration (request bodies, versions). */
function nodeReason(error: unknown): string {
  const e = error as { details?: string; shortMessage?: string; message?: string; cause?: unknown };
  const details = e.details ?? (e.cause as { details?: string } | undefined)?.details;
  return (details ?? e.shortMessage ?? e.message ?? String(error)).split('\n')[0];
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
    rpcUrls: { default: { http: [options.rpcUrl] } },
  });
  // The nonce manager hands out nonces locally, so concurrent upserts from one signer do not collide.
  const account = privateKeyToAccount(options.privateKey, { nonceManager });
  const transport = http(options.rpcUrl, { retryCount: 2 });
  const wallet = createWalletClient({ chain, transport, account });
  const reader = createPublicClient({ chain, transport, pollingInterval: 250 });
  return {
    address: account.address.toLowerCase() as Address,
    balance: () => reader.getBalance({ address: account.address }),
    async send(ops) {
      const data = bytesToHex(encodeStorageTransaction(ops));
      try {
        const hash = await wallet.sendTransaction({ to: ARKIV_ADDRESS, data, value: 0n });
        return { hash };
      } catch (error) {
        // viem names transport failures HttpRequestError / TimeoutError (possibly as the cause).
        const names = [(error as Error).name, (error as { cause?: Error }).cause?.name];
        if (names.some((n) => n === 'HttpRequestError' || n === 'TimeoutError'))
          throw new ChainUnreachableError('the RPC cannot be reached to send the transaction');
        throw new TransactionRefusedError(nodeReason(error));
      }
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
