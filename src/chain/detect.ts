// Which generation a node speaks (`serve --protocol auto`): the DB-chain answers the registry's
// `entityNonce(address)` view call with one word; a v1 node has nothing at that address and answers
// empty (or refuses the call). One eth_call, once, at start.
import type { Hex } from 'viem';
import { entityNonceCall } from './dbchain/keys.ts';
import { REGISTRY_ADDRESS } from './dbchain/abi.ts';
import { RpcResponseError, type RpcTransport } from './transport.ts';

export type ChainProtocol = 'v1' | 'dbchain';

const PROBE_OWNER = '0x0000000000000000000000000000000000000000';

/** @example await detectProtocol(transport) // 'dbchain' */
export async function detectProtocol(transport: RpcTransport): Promise<ChainProtocol> {
  try {
    const answer = await transport.request<Hex>('eth_call', [
      { to: REGISTRY_ADDRESS, data: entityNonceCall(PROBE_OWNER) },
      'latest',
    ]);
    return /^0x[0-9a-fA-F]{64}$/.test(answer) ? 'dbchain' : 'v1';
  } catch (error) {
    // A node that refuses the call (a revert, an unknown address) is not the DB-chain.
    if (error instanceof RpcResponseError) return 'v1';
    throw error;
  }
}
