// A reorg: the block the node stands on is no longer canonical. It walks back to the newest block it
// applied that still is and rolls the table back to it (one commit), or rebuilds from the chain when the
// common ancestor is older than the journal. Answers that cannot be a reorg (a lagging backend, hashes
// that flap) fail the step instead, so nothing is rolled back for them.
import type { IndexedStore } from '../src/engine/index.ts';
import { defined } from '../src/defined.ts';
import { bootstrap } from './bootstrap.ts';
import type { IndexerCore } from './core.ts';

/** Block headers asked per call while walking back. */
const HEADERS_PER_CALL = 32;

/** Walks back to the newest block whose hash we applied and that is still canonical, and rolls back to it. */
export async function handleReorg<S extends IndexedStore>(core: IndexerCore<S>): Promise<void> {
  const from = defined(core.asOf, 'asOfBlock at a reorg');
  core.prefetched = undefined;
  const known = [...core.hashes.keys()].filter((n) => n <= from).sort((a, b) => b - a);
  let ancestor: number | undefined;
  let answered = 0;
  for (let i = 0; i < known.length && ancestor === undefined; i += HEADERS_PER_CALL) {
    const numbers = known.slice(i, i + HEADERS_PER_CALL);
    const headers = await core.source.headers(numbers);
    answered += headers.filter((h) => h !== undefined).length;
    const match = numbers.findIndex((n, j) => headers[j]?.hash === core.hashes.get(n));
    if (match >= 0) ancestor = numbers[match];
  }
  // No block we applied is known at all: a backend behind ours, not a chain that replaced them all.
  if (answered === 0)
    throw new Error(`the RPC knows none of the blocks applied here up to ${from} (a lagging backend?); retrying`);
  // The block we stand on is canonical after all: the answer that said otherwise was not.
  if (ancestor === from)
    throw new Error(`block ${from} came with another hash a moment ago: the RPC's block hashes flap; retrying`);
  core.counters.reorgs++;
  if (ancestor === undefined || !core.table.canRollBackTo(ancestor)) {
    core.logger.warn({ from, ancestor }, 'reorg deeper than the journal; rebuilding from the chain');
    const target = Math.max(0, (core.head ?? from) - core.options.confirmations);
    await bootstrap(core, target);
    core.events.emit('reorg', { from, to: target });
    return;
  }
  core.table.rollBackTo(ancestor);
  await core.commitAt(ancestor, core.hashes.get(ancestor));
  for (const n of [...core.hashes.keys()]) if (n > ancestor) core.hashes.delete(n);
  core.asOf = ancestor;
  core.logger.warn({ from, to: ancestor }, 'reorg: rolled back to the common ancestor');
  core.events.emit('reorg', { from, to: ancestor });
}
