// Where a node starts: the head at the first contact (or its snapshot, served unverified while the RPC
// does not answer), the snapshot in dataDir when it is usable, else a bootstrap that reads every
// definition and vector live at one pinned block and commits them as one step.
import type { ChainEntity, EntitySelector } from '../src/chain/index.ts';
import { ATTR_COLLECTION, ATTR_TYPE } from '../src/collections/index.ts';
import type { IndexedStore } from '../src/engine/index.ts';
import type { IndexerCore } from './core.ts';
import { NAMES_PER_QUERY, toTracked } from './entityReads.ts';
import { loadSnapshot } from './snapshots.ts';
import type { TrackedEntity } from './trackedEntities.ts';
import type { BootstrapProgress } from './types.ts';

/**
 * How long the first contact waits for the head before a node with a snapshot serves it unverified
 * (`stalled`) and keeps trying, in block times (the time `stalled` takes anyway).
 */
const OFFLINE_START_BLOCK_TIMES = 3;

/**
 * The head at the first contact. A node with a snapshot does not wait for an RPC that fails or hangs:
 * after OFFLINE_START_BLOCK_TIMES block times it serves the snapshot unverified (`stalled`, since nothing
 * is current) and returns undefined; the next steps check its chain and block as soon as the RPC answers.
 */
export async function firstHead<S extends IndexedStore>(core: IndexerCore<S>): Promise<number | undefined> {
  const { dataDir, blockTimeSeconds } = core.options;
  const head = core.source.head();
  if (!dataDir) return head;
  head.catch(() => undefined);
  const waitMs = OFFLINE_START_BLOCK_TIMES * blockTimeSeconds * 1000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), waitMs);
  });
  const first = await Promise.race([head.catch((error: Error) => error), timedOut]).finally(() => clearTimeout(timer));
  if (typeof first === 'number') return first;
  if (await loadSnapshot(core, dataDir, false)) {
    core.logger.warn(
      { block: core.asOf, reason: first === 'timeout' ? `no answer within ${waitMs} ms` : first.message },
      'the RPC does not answer: serving the snapshot as stalled until it does',
    );
    core.progress.phase(`snapshot loaded at block ${core.asOf}; waiting for the chain`);
    // Not fresh: whatever the snapshot holds, this node does not know it is current.
    core.freshAt = Math.min(core.freshAt, Date.now() - 3 * blockTimeSeconds * 1000);
    core.setState('stalled');
    return undefined;
  }
  if (first === 'timeout') return head;
  throw first;
}

/** Starts from the snapshot in dataDir if it is usable, else bootstraps at `startBlock` or `target`. */
export async function initialize<S extends IndexedStore>(core: IndexerCore<S>, target: number): Promise<void> {
  const { dataDir, startBlock } = core.options;
  if (dataDir) {
    core.progress.phase('loading the snapshot');
    if (await loadSnapshot(core, dataDir, true)) {
      core.progress.phase(`snapshot loaded at block ${core.asOf}; following the chain from there`);
      return;
    }
  }
  const pinned = startBlock ?? target;
  core.progress.phase(`bootstrap: reading the collections at block ${pinned}`);
  await bootstrap(core, pinned);
  core.progress.phase(`bootstrap done at block ${pinned}; following the chain`);
}

/** Rebuilds everything from the chain at `pinned`. */
export async function bootstrap<S extends IndexedStore>(core: IndexerCore<S>, pinned: number): Promise<void> {
  core.prefetched = undefined;
  const progress: BootstrapProgress = { block: pinned, pages: 0, entities: 0, startedAt: Date.now() };
  core.bootstrapping = progress;
  try {
    await bootstrapAt(core, pinned, progress);
  } finally {
    core.bootstrapping = undefined;
  }
}

/** Reads every definition and vector live at `pinned`, each call paced to the budget. */
async function bootstrapAt<S extends IndexedStore>(
  core: IndexerCore<S>,
  pinned: number,
  progress: BootstrapProgress,
): Promise<void> {
  const { source, paged } = core;
  const started = progress.startedAt;
  await core.pacer.awaitBudget(1);
  const [before] = await source.headers([pinned]);
  if (!before) throw new Error(`block ${pinned} is not available for bootstrap`);
  // Definitions first: only vectors of a name that has one are read, and each page is bounded
  // (oversize payloads dropped) before the next arrives.
  const only: EntitySelector['strings'] = core.options.collections?.length
    ? { [ATTR_COLLECTION]: core.options.collections }
    : {};
  const tracked: TrackedEntity[] = [];
  const keep = (page: ChainEntity[]) => {
    // Pages arriving are the chain answering: a long bootstrap is not an outage.
    core.fresh();
    for (const entity of page) {
      const t = toTracked(entity, core.wanted);
      if (t) tracked.push(t);
    }
    progress.pages++;
    progress.entities = tracked.length;
    core.progress.bootstrap(tracked.length, Date.now() - started, { pages: progress.pages });
  };
  const definitions: EntitySelector = { strings: { [ATTR_TYPE]: 'collection', ...only } };
  await source.forEachEntityPage(definitions, pinned, keep, paged);
  const names = [...new Set(tracked.map((t) => t.collection))].sort();
  for (let i = 0; i < names.length; i += NAMES_PER_QUERY) {
    const chunk = names.slice(i, i + NAMES_PER_QUERY);
    await source.forEachEntityPage(
      { strings: { [ATTR_TYPE]: 'vector', [ATTR_COLLECTION]: chunk } },
      pinned,
      keep,
      paged,
    );
  }
  await core.pacer.awaitBudget(1);
  const [after] = await source.headers([pinned]);
  if (!after || after.hash !== before.hash)
    throw new Error(`block ${pinned} changed during bootstrap (reorg); retrying`);
  core.bootstrapping = undefined;
  core.reset();
  for (const entity of tracked) core.table.set(entity.key, entity);
  await core.commitAt(pinned, before.hash);
  core.table.resetJournal(pinned);
  core.rememberHash(pinned, before.hash);
  core.asOf = pinned;
  core.counters.bootstraps++;
  core.progress.done();
  const seconds = (Date.now() - started) / 1000;
  core.logger.info(
    {
      block: pinned,
      entities: tracked.length,
      collections: core.resolver.published.size,
      seconds,
      entities_per_second: Math.round(tracked.length / Math.max(seconds, 0.001)),
    },
    'bootstrap done',
  );
  core.applied(pinned);
}
