// The networks `--chain NAME` knows, and the generations a node can follow.
import { braga, kaolin, localhost } from '@arkiv-network/sdk/chains';

/** The two generations a node can follow (DESIGN.md §3); `auto` detects it from the node. */
export const PROTOCOLS = ['v1', 'dbchain', 'auto'] as const;
export type Protocol = Exclude<(typeof PROTOCOLS)[number], 'auto'>;

export interface ChainPreset {
  id: number;
  rpc: string;
  ws?: string;
  protocol: Protocol;
  blockTimeSeconds: number;
  /** A public endpoint that limits callers without a key (calls an hour per IP): `--rpc-budget` defaults on. */
  anonymousCallsPerHour?: number;
  /** When the network was retired: it no longer answers. */
  retired?: string;
}

/**
 * `--chain NAME`. Tiramisu is the live DB-chain network (reference/arkiv-node.md §7); the v1 public
 * networks are retired and kept so old configurations fail with a clear cause, not a wrong default.
 */
export const CHAINS: Readonly<Record<string, ChainPreset>> = {
  tiramisu: {
    id: 7738577,
    rpc: 'https://rpc.tiramisu.db-chain.testnet.arkiv.network',
    ws: 'wss://rpc.tiramisu.db-chain.testnet.arkiv.network',
    protocol: 'dbchain',
    blockTimeSeconds: 2,
    anonymousCallsPerHour: 50,
  },
  braga: v1Preset(braga, '2026-08-12'),
  kaolin: v1Preset(kaolin, '2026-05-15'),
  localhost: v1Preset(localhost),
};

function v1Preset(
  chain: { id: number; rpcUrls: { default: { http: readonly string[]; webSocket?: readonly string[] } } },
  retired?: string,
): ChainPreset {
  return {
    id: chain.id,
    rpc: chain.rpcUrls.default.http[0] ?? '',
    ws: chain.rpcUrls.default.webSocket?.[0],
    protocol: 'v1',
    blockTimeSeconds: 2,
    ...(retired ? { retired } : {}),
  };
}
