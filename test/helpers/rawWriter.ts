// A raw writer: signs storage transactions with viem and sends them with eth_sendRawTransaction, for
// entities the SDK or the codecs would never produce (oversize documents, bombs, key-form ids, bad payloads).
import { Agent, fetch } from 'undici';
import { bytesToHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ARKIV_ADDRESS, emptyStorageOps, encodeStorageTransaction, type StorageOps } from '../../src/chain/v1/index.ts';
import type { Devnet } from '../../src/devnet/index.ts';
import { defined } from './defined.ts';

// One connection per call: after a long synchronous step (compressing a bomb) a pooled keep-alive socket
// may be closed by the server just as it is reused.
async function call<T>(devnet: Devnet, method: string, params: unknown[]) {
  const dispatcher = new Agent({ pipelining: 0 });
  try {
    const response = await fetch(devnet.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      dispatcher,
    });
    return (await response.json()) as { result?: T; error?: { code: number; message: string } };
  } finally {
    await dispatcher.close();
  }
}

/** Sends one storage transaction from dev account `from`; resolves to the JSON-RPC answer (result or error). */
export async function sendStorageTx(devnet: Devnet, from: number, ops: Partial<StorageOps>) {
  const account = privateKeyToAccount(defined(devnet.accounts[from], 'devnet.accounts[from]').privateKey);
  const data = bytesToHex(encodeStorageTransaction({ ...emptyStorageOps(), ...ops }));
  const count = await call<Hex>(devnet, 'eth_getTransactionCount', [account.address, 'pending']);
  if (!count.result) throw new Error(`eth_getTransactionCount: ${count.error?.message}`);
  const nonce = Number(BigInt(count.result));
  const raw = await account.signTransaction({
    type: 'eip1559',
    chainId: devnet.chainId,
    nonce,
    to: ARKIV_ADDRESS,
    data,
    gas: 30_000_000n,
    maxFeePerGas: 3_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });
  return call<Hex>(devnet, 'eth_sendRawTransaction', [raw]);
}

/** String and numeric attributes in the storage-op shape. */
export function attributes(list: { key: string; value: string | number | bigint }[]) {
  return {
    stringAttributes: list
      .filter((a) => typeof a.value === 'string')
      .map((a) => ({ key: a.key, value: a.value as string })),
    numericAttributes: list
      .filter((a) => typeof a.value !== 'string')
      .map((a) => ({ key: a.key, value: BigInt(a.value) })),
  };
}
