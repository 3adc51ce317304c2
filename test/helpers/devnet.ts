// Test fixtures: a devnet on an ephemeral loopback port with interval mining off (blocks come from
// transactions and explicit mine() calls, so tests await blocks instead of sleeping), plus SDK clients.
import { createPublicClient, createWalletClient, http, webSocket, type Hex } from '@arkiv-network/sdk';
import { privateKeyToAccount } from '@arkiv-network/sdk/accounts';
import { localhost } from '@arkiv-network/sdk/chains';
import { startDevnet, type Devnet, type DevnetOptions } from '../../src/devnet/index.ts';
import { defined } from './defined.ts';

export async function startTestDevnet(options: DevnetOptions = {}): Promise<Devnet> {
  return startDevnet({ host: '127.0.0.1', port: 0, blockTime: 0, ...options });
}

export function publicClient(devnet: Devnet) {
  return createPublicClient({ chain: localhost, transport: http(devnet.url) });
}

export function wsPublicClient(devnet: Devnet) {
  return createPublicClient({ chain: localhost, transport: webSocket(devnet.wsUrl) });
}

export function walletClient(devnet: Devnet, accountIndex = 0) {
  const account = privateKeyToAccount(
    defined(devnet.accounts[accountIndex], 'devnet.accounts[accountIndex]').privateKey,
  );
  return createWalletClient({ chain: localhost, transport: http(devnet.url), account });
}

/** A raw JSON-RPC call, for methods and shapes the SDK does not expose. */
export async function rpc<T = unknown>(
  devnet: Devnet,
  method: string,
  params: unknown[] = [],
): Promise<{ result?: T; error?: { code: number; message: string } }> {
  const response = await fetch(devnet.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: T; error?: { code: number; message: string } };
}

export async function rpcResult<T = unknown>(devnet: Devnet, method: string, params: unknown[] = []): Promise<T> {
  const answer = await rpc<T>(devnet, method, params);
  if (answer.error) throw new Error(`${method}: ${answer.error.code} ${answer.error.message}`);
  return answer.result as T;
}

export const text = (value: string) => new TextEncoder().encode(value);
export const lower = (hex: string) => hex.toLowerCase() as Hex;
