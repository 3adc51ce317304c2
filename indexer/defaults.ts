// The indexer's tunables with their defaults, declared once: ChainIndexer falls back to them and
// `arkivector serve` (src/config.ts) shows and parses its flags against them. A module of its own so
// the configuration does not load the indexer to know them.

import { BLOCK_TIME_SECONDS } from '../src/collections/index.ts';

export const INDEXER_DEFAULTS = {
  /** Follow head − N. */
  confirmations: 0,
  /** More than this many blocks behind the followed head counts as catching_up. */
  liveLag: 5,
  /** Expected seconds per block (stalled after 3 block times of failures; poll cadence). */
  blockTimeSeconds: BLOCK_TIME_SECONDS,
  /** Blocks per JSON-RPC batch while catching up. */
  batchSize: 50,
  /** Write a snapshot after this many applied blocks (when live) and on stop. */
  snapshotEveryBlocks: 500,
} as const;

/**
 * `--rpc-budget N`: JSON-RPC calls per hour the node stays within (0: no budget, poll 4 times a block).
 * The default follows the RPC: a public preset without `--rpc-key` gets `anonymous` (Tiramisu allows 50
 * anonymous calls an hour per IP; the rest is left for writes and status), with a key `keyed`; `--rpc URL`
 * (your own node) none. At most `max`.
 */
export const RPC_BUDGET = { anonymous: 40, keyed: 3_600, max: 1_000_000 } as const;
