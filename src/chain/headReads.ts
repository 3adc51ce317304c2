// The head reads both generations' ChainSources share (plain eth_* calls, nothing protocol-specific): the
// chain id, the head, block headers in one batch, and the head with one header in one round trip.
import { hexToNumber, numberToHex, type Hex } from 'viem';
import type { BlockHeader, ChainSource } from './source.ts';
import { RpcResponseError, type RpcTransport } from './transport.ts';

export interface RawHeader {
  number: Hex;
  hash: Hex;
  parentHash: Hex;
  timestamp: Hex;
}

export const toHeader = (raw: RawHeader): BlockHeader => ({
  number: hexToNumber(raw.number),
  hash: raw.hash.toLowerCase() as Hex,
  parentHash: raw.parentHash.toLowerCase() as Hex,
  timestamp: hexToNumber(raw.timestamp),
});

export async function getBlockNumber(transport: RpcTransport): Promise<number> {
  return hexToNumber(await transport.request<Hex>('eth_blockNumber'));
}

/** Headers of the given blocks in one batch; a missing block is undefined. */
export async function getHeaders(
  transport: RpcTransport,
  numbers: readonly number[],
): Promise<(BlockHeader | undefined)[]> {
  const answers = await transport.batch(
    numbers.map((n) => ({ method: 'eth_getBlockByNumber', params: [numberToHex(n), false] })),
  );
  return answers.map((answer) => {
    if (answer instanceof RpcResponseError) throw answer;
    return answer ? toHeader(answer as RawHeader) : undefined;
  });
}

/** The chain head and one block's header in a single batch (the follower's per-step check). */
export async function getHeadAndHeader(
  transport: RpcTransport,
  block: number,
): Promise<{ head: number; header: BlockHeader | undefined }> {
  const [head, header] = await transport.batch([
    { method: 'eth_blockNumber', params: [] },
    { method: 'eth_getBlockByNumber', params: [numberToHex(block), false] },
  ]);
  if (head instanceof RpcResponseError) throw head;
  if (header instanceof RpcResponseError) throw header;
  return { head: hexToNumber(head as Hex), header: header ? toHeader(header as RawHeader) : undefined };
}

/** The ChainSource's head half over plain eth_* calls, for a driver to spread into its source. */
export function headReads(
  transport: RpcTransport,
): Pick<ChainSource, 'chainId' | 'head' | 'headers' | 'headAndHeader'> {
  return {
    chainId: async () => hexToNumber(await transport.request<Hex>('eth_chainId')),
    head: () => getBlockNumber(transport),
    headers: (numbers) => getHeaders(transport, numbers),
    headAndHeader: (block) => getHeadAndHeader(transport, block),
  };
}
