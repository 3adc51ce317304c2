// The devnet's defaults and generations, apart from the node itself so the configuration can read them
// without loading a chain.

export const DEVNET_DEFAULTS = { host: '127.0.0.1', port: 8545, chainId: 1337, blockTime: 2, protocol: 'v1' } as const;

export const DEVNET_PROTOCOLS = ['v1', 'dbchain'] as const;
export type DevnetProtocolName = (typeof DEVNET_PROTOCOLS)[number];
