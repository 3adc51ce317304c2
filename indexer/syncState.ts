// The indexer's sync states, declared once: the service's schemas, the REST readiness probe and the
// metrics gauge all speak them.

/** starting → catching_up ⇄ live; stalled after three block times of failures (docs/consistency.md). */
export const SYNC_STATES = ['starting', 'catching_up', 'live', 'stalled'] as const;

export type SyncState = (typeof SYNC_STATES)[number];
