// The indexer's snapshots: loading one at start (checked against the chain, or served unverified while
// the RPC does not answer) and writing one every `snapshotEveryBlocks` and on stop. The format is
// snapshot.ts's; a snapshot is a cache of the chain, so one that cannot be used is rebuilt, never fatal.
import { join } from 'node:path';
import { InvalidArgumentError } from '../src/collections/index.ts';
import type { IndexedStore } from '../src/engine/index.ts';
import { defined } from '../src/defined.ts';
import type { IndexerCore } from './core.ts';
import {
  SnapshotRefusedError,
  readSnapshotEntities,
  readSnapshotMeta,
  removeStaleStaging,
  snapshotStoreDir,
  verifySnapshotFiles,
  writeSnapshot,
  type DecodedUnder,
} from './snapshot.ts';
import type { TrackedEntity } from './trackedEntities.ts';

/** The chain id of the snapshot in `dataDir`, if it holds a readable one. */
export async function snapshotChainId(dataDir: string): Promise<number | undefined> {
  const meta = await readSnapshotMeta(dataDir).catch(() => undefined);
  return meta?.chainId;
}

/**
 * Loads the snapshot in `dataDir` if it is usable; false (and a clean table) if there is none or it is
 * refused. @param canonical check that the snapshot's block is still canonical (false: the RPC does not
 * answer)
 */
export async function loadSnapshot<S extends IndexedStore>(
  core: IndexerCore<S>,
  dataDir: string,
  canonical: boolean,
): Promise<boolean> {
  try {
    return await loadVerifiedSnapshot(core, dataDir, canonical);
  } catch (error) {
    // An unreadable snapshot is not an outage: the chain has everything, so the node rebuilds rather
    // than retrying a load that cannot succeed. A store written by another version (or that no longer
    // fits its definition) is refused the same way.
    if (!(error instanceof SnapshotRefusedError || error instanceof InvalidArgumentError)) throw error;
    core.logger.warn({ reason: error.message }, 'snapshot refused; rebuilding from the chain');
    core.reset();
    return false;
  }
}

async function loadVerifiedSnapshot<S extends IndexedStore>(
  core: IndexerCore<S>,
  dataDir: string,
  canonical: boolean,
): Promise<boolean> {
  const { logger, options } = core;
  const started = Date.now();
  const removed = await removeStaleStaging(dataDir);
  if (removed.length) logger.info({ removed }, 'removed snapshot staging folders of stopped processes');
  const meta = await readSnapshotMeta(dataDir);
  if (!meta) return false;
  if (meta.chainId !== options.chainId) {
    logger.warn({ snapshot_chain: meta.chainId, chain: options.chainId }, 'snapshot is for another chain; rebuilding');
    return false;
  }
  if (canonical) {
    const [header] = await core.source.headers([meta.block]);
    if (!header || header.hash !== meta.hash) {
      logger.warn({ block: meta.block }, 'snapshot block is no longer canonical; rebuilding');
      return false;
    }
  }
  await verifySnapshotFiles(dataDir, meta);
  core.reset();
  const { entities, verdicts } = await readSnapshotEntities(dataDir);
  for (const entity of entities) core.table.set(entity.key, entity);
  for (const [name, kept] of verdicts)
    core.resolver.restoreVerdicts(name, core.table, kept.decodedUnder, kept.verdicts);
  await core.resolver.adopt(
    core.table,
    async (name, definition) => {
      const dir = snapshotStoreDir(dataDir, meta, name);
      // Only the store's own files are read here: any failure is the snapshot's (chain reads the
      // resolver makes around it stay retryable outages).
      return dir
        ? options.stores.load(dir, name, definition).catch((error: Error) => {
            if (error instanceof InvalidArgumentError) throw error;
            throw new SnapshotRefusedError(`store of ${name}: ${error.message}`);
          })
        : undefined;
    },
    meta.block,
    meta.hash,
  );
  core.table.resetJournal(meta.block);
  core.rememberHash(meta.block, meta.hash);
  core.asOf = meta.block;
  const collections = core.resolver.published;
  // A store converted from another engine's snapshot would convert again at every start until a block
  // moved the node on: with no snapshot of its own the next idle step (or the stop) writes one.
  const converted = [...collections.values()].some((c) => c.store.converted === true);
  core.snapshotAt = converted ? undefined : meta.block;
  core.unverified = !canonical;
  core.counters.snapshotsLoaded++;
  logger.info({ block: meta.block, collections: collections.size, ms: Date.now() - started }, 'snapshot loaded');
  core.applied(meta.block);
  return true;
}

/** Writes a snapshot of asOfBlock to `dataDir` (no-op without either). */
export async function snapshotNow<S extends IndexedStore>(core: IndexerCore<S>): Promise<void> {
  const { dataDir } = core.options;
  const block = core.asOf;
  // Both callers check dataDir and asOfBlock first; the hash of asOfBlock is remembered whenever it is set.
  if (!dataDir || block === undefined) return;
  const hash = defined(core.hashes.get(block), `hash of block ${block}`);
  const started = Date.now();
  const collections = core.resolver.published;
  const stores = new Map([...collections].map(([name, c]) => [name, c.store]));
  const decodedUnder: Record<string, DecodedUnder> = {};
  for (const [name, c] of collections) {
    const definition = core.table.get(c.definitionKey);
    if (definition) decodedUnder[name] = { key: c.definitionKey, lastModifiedAtBlock: definition.lastModifiedAtBlock };
  }
  const verdictOf = (entity: TrackedEntity) => core.resolver.keptVerdict(entity);
  await writeSnapshot(dataDir, { chainId: core.options.chainId, block, hash }, core.table.values(), stores, {
    decodedUnder,
    verdictOf,
  });
  core.snapshotAt = block;
  core.counters.snapshotsWritten++;
  core.logger.info({ block, dir: join(dataDir, 'snapshot'), ms: Date.now() - started }, 'snapshot written');
}
