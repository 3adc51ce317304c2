// Following the chain once the node stands on a block: each step reads the head and checks that the
// block it stands on is still canonical (else a reorg), then reads the blocks up to head − confirmations
// (a span of the source, or batches that grow while catching up, the next fetched while one is applied)
// and applies them through the one apply-and-commit path, so no answer sees half a batch.
import type { Hex } from 'viem';
import type { SourceBlock } from '../src/chain/index.ts';
import type { IndexedStore } from '../src/engine/index.ts';
import { defined } from '../src/defined.ts';
import { applyOps } from './applyOps.ts';
import { firstHead, initialize, bootstrap } from './bootstrap.ts';
import { FIRST_CATCH_UP_BATCH, type IndexerCore } from './core.ts';
import { loadVectors, lookupCreation } from './entityReads.ts';
import { handleReorg } from './reorg.ts';
import { snapshotNow } from './snapshots.ts';

/** What a step did: something changed (go on), caught up (wait), or rolled back (go on unless reorgs keep coming). */
export type StepOutcome = 'applied' | 'idle' | 'reorg';

/** Where a step stands toward the block it follows, for the progress line. */
interface StepTarget {
  target: number;
  behind: number;
  /** ms since the epoch. */
  started: number;
}

/** One unit of work. */
export async function step<S extends IndexedStore>(core: IndexerCore<S>): Promise<StepOutcome> {
  const { source, options } = core;
  if (core.asOf === undefined) {
    core.progress.phase('connecting to the chain');
    const head = await firstHead(core);
    if (head === undefined) return 'applied';
    core.seeHead(head);
    await initialize(core, Math.max(0, head - options.confirmations));
    return 'applied';
  }
  if (core.unverified) {
    const chainId = await source.chainId();
    if (chainId !== options.chainId)
      throw new Error(`the RPC serves chain ${chainId}, this node's snapshot is of chain ${options.chainId}`);
    const [header] = await source.headers([core.asOf]);
    core.unverified = false;
    if (!header || header.hash !== core.hashes.get(core.asOf)) {
      core.logger.warn({ block: core.asOf }, 'snapshot block is no longer canonical; rebuilding');
      const head = await source.head();
      core.seeHead(head);
      await bootstrap(core, Math.max(0, head - options.confirmations));
      return 'applied';
    }
  }
  const asOf = core.asOf;
  // One round trip per step: the head, and whether our last applied block is still canonical.
  const { head, header: tip } = await source.headAndHeader(asOf);
  // A backend behind the one that served our blocks (a load balancer's lagging node) is an outage, not
  // a reorg: it would otherwise roll back or rebuild what the chain still has.
  if (!tip) throw new Error(`the RPC does not know block ${asOf}, already applied here (a lagging backend?); retrying`);
  if (tip.hash === core.hashes.get(asOf) && head < asOf)
    throw new Error(`the RPC's head ${head} is below block ${asOf}, already applied here; retrying`);
  core.seeHead(Math.max(head, asOf));
  const target = Math.max(0, head - options.confirmations);
  if (tip.hash !== core.hashes.get(asOf)) {
    await handleReorg(core);
    return 'reorg';
  }
  if (asOf >= target) {
    if (options.dataDir && asOf - (core.snapshotAt ?? -Infinity) >= options.snapshotEveryBlocks)
      await snapshotNow(core);
    return 'idle';
  }
  const toward: StepTarget = { target, behind: target - asOf, started: Date.now() };
  return source.span ? stepSpan(core, toward) : stepBatch(core, toward);
}

/**
 * One step over consecutive blocks: a single block when live, a batch while catching up (doubling up to
 * `batchSize`, the next one fetched while this one is applied). Blocks are applied while they link.
 */
async function stepBatch<S extends IndexedStore>(core: IndexerCore<S>, toward: StepTarget): Promise<'applied'> {
  const { options } = core;
  const asOf = defined(core.asOf, 'asOfBlock in a step');
  const { target, behind } = toward;
  const catchingUp = behind > options.liveLag;
  if (!catchingUp) core.catchUpBatch = FIRST_CATCH_UP_BATCH;
  const to = Math.min(target, asOf + (catchingUp ? Math.min(core.catchUpBatch, options.batchSize) : 1));
  const blocks = await blocksFrom(core, asOf + 1, to);
  if (catchingUp && to < target) {
    core.catchUpBatch = Math.min(options.batchSize, core.catchUpBatch * 2);
    prefetch(core, to + 1, Math.min(target, to + core.catchUpBatch));
  }
  const linked: SourceBlock[] = [];
  for (const block of blocks) {
    if (block.parentHash !== (linked.at(-1)?.hash ?? core.hashes.get(asOf))) break;
    linked.push(block);
  }
  const last = linked.at(-1);
  if (!last) {
    // The canonical check just passed: the RPC answered a next block that does not link to the one it
    // confirmed. Retried with backoff; a real reorg shows at the next step's check.
    const first = blocks[0];
    throw new Error(
      first
        ? `block ${first.number} does not link to block ${asOf} (parent ${first.parentHash}, applied ${core.hashes.get(asOf)}): the RPC answers inconsistently; retrying`
        : `the RPC answered no block after ${asOf}; retrying`,
    );
  }
  return applyAndCommit(core, linked, last, toward);
}

/**
 * One step over a span of the source (blocks up to the target of which only those with operations are
 * read). The whole span becomes visible at once, at its end.
 */
async function stepSpan<S extends IndexedStore>(core: IndexerCore<S>, toward: StepTarget): Promise<'applied'> {
  const span = defined(core.source.span, 'a source with spans').bind(core.source);
  const from = defined(core.asOf, 'asOfBlock in a step');
  const { target } = toward;
  const { blocks, end } = await span({ number: from, hash: defined(core.hashes.get(from), `hash of ${from}`) }, target);
  if (end.number <= from || end.number > target || blocks.some((b) => b.number <= from || b.number > end.number))
    throw new Error(`the source answered blocks outside ${from + 1}..${target}; retrying`);
  // The chain answered every read of the span: what follows is our own work (as a bootstrap's pages).
  core.fresh();
  return applyAndCommit(core, blocks, end, toward);
}

/**
 * The one apply-and-commit path of a step: applies `blocks` (in chain order) on top of asOfBlock up to
 * `end` and commits them as one step at `end`. Each block with operations, and each block at which a
 * tracked entity expires, is applied at its own number, so the table ends where a block-by-block walk
 * would; the blocks in between change nothing and are not journaled. On any failure nothing of the step
 * becomes visible and the table is put back at asOfBlock, so the retry starts clean.
 */
async function applyAndCommit<S extends IndexedStore>(
  core: IndexerCore<S>,
  blocks: readonly SourceBlock[],
  end: { number: number; hash: Hex },
  toward: StepTarget,
): Promise<'applied'> {
  const { table, logger, counters } = core;
  const from = defined(core.asOf, 'asOfBlock in a step');
  const withOps = new Map(blocks.map((block) => [block.number, block]));
  const abort = () => {
    table.abortBlock();
    table.rollBackTo(from);
  };
  let ops = 0;
  try {
    for (let n = from + 1; n <= end.number; n++) {
      const block = withOps.get(n);
      if (!block && table.expiringAt(n).length === 0) continue;
      for (const anomaly of block?.anomalies ?? []) logger.warn({ block: n, anomaly }, 'block anomaly');
      counters.anomalies += block?.anomalies.length ?? 0;
      table.beginBlock(n);
      await applyOps(
        table,
        block?.ops ?? [],
        n,
        (key, at) => lookupCreation(core, key, at),
        core.wanted,
        (names, at) => {
          // Only a create or update gives a name its first definition, and those come in a listed block.
          if (!block)
            throw new Error(`collection ${names[0]} gained a definition at block ${at}, which has no operations`);
          return loadVectors(core, names, at, block.hash);
        },
      );
      table.endBlock();
      ops += block?.ops.length ?? 0;
    }
  } catch (error) {
    abort();
    throw error;
  }
  await core.commitAt(end.number, end.hash, abort);
  for (const block of blocks) core.rememberHash(block.number, block.hash);
  core.rememberHash(end.number, end.hash);
  core.asOf = end.number;
  counters.blocksApplied += end.number - from;
  counters.entityOps += ops;
  core.applied(end.number);
  reportProgress(core, { ...toward, block: end.number, blocks: end.number - from, ops });
  return 'applied';
}

/** Catch-up progress after a step that applied `blocks` blocks. */
function reportProgress<S extends IndexedStore>(
  core: IndexerCore<S>,
  step: StepTarget & { block: number; blocks: number; ops: number },
): void {
  const seconds = Math.max(0.001, (Date.now() - step.started) / 1000);
  if (step.behind > core.options.liveLag)
    core.progress.catchUp({
      block: step.block,
      target: step.target,
      blocksPerSecond: step.blocks / seconds,
      entitiesPerSecond: step.ops / seconds,
    });
  else core.progress.done();
}

function prefetch<S extends IndexedStore>(core: IndexerCore<S>, from: number, to: number): void {
  // A failed prefetch is not an error yet: the step fetches that range again and fails there, if at all.
  core.prefetched = { from, blocks: core.source.blocks(from, to).catch(() => undefined) };
}

/** Blocks `from..to`: the prefetched batch when it still fits, else a fetch now. */
async function blocksFrom<S extends IndexedStore>(
  core: IndexerCore<S>,
  from: number,
  to: number,
): Promise<SourceBlock[]> {
  const prefetched = core.prefetched;
  core.prefetched = undefined;
  if (prefetched?.from === from) {
    const blocks = await prefetched.blocks;
    if (blocks?.[0] && blocks[0].parentHash === core.hashes.get(from - 1))
      return blocks.filter((block) => block.number <= to);
  }
  return core.source.blocks(from, to);
}
