// delete: removes entities this signer owns, named by refs or chosen by a filter; a dry run (the
// default) only reports what a real run would remove and how many transactions it would take.
import type { Hex } from 'viem';
import { MAX_BATCH_OPERATIONS, emptyBatch, type ChainWriter } from '../chain/index.ts';
import { ArkivectorError } from '../errors.ts';
import type { ServiceContext } from './context.ts';
import { ConflictError, EntityNotFoundError } from './errors.ts';
import { claim, entityName } from './inFlight.ts';
import { DELETE_BY_FILTER_MAX } from './limits.ts';
import { deleteSchema, type DeleteResult } from './schemas.ts';
import { requireWriter, submit, type ProgressReporter, type Submitted } from './submit.ts';
import { validate } from './validate.ts';
import { collectionIn, readView, type View } from './view.ts';

export type { DeleteResult };

type DeleteArgs = ReturnType<typeof deleteSchema.parse>;
type Doomed = { id: string; key: string; op: 'delete' };

/** Deletes per transaction: the most operations one batch carries. */
export const DELETES_PER_TX = MAX_BATCH_OPERATIONS;

/** Splits `items` into consecutive batches of at most `size` (the last one may be shorter). */
export function batches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export async function deleteEntities(
  ctx: ServiceContext,
  params: unknown,
  onProgress?: ProgressReporter,
): Promise<DeleteResult> {
  const writer = requireWriter(ctx);
  const args = validate(deleteSchema, params);
  const view = await readView(ctx);
  return args.refs
    ? deleteByRefs(ctx, writer, args, args.refs, view, onProgress)
    : deleteByFilter(ctx, writer, args, view, onProgress);
}

async function deleteByRefs(
  ctx: ServiceContext,
  writer: ChainWriter,
  args: DeleteArgs,
  refs: string[],
  view: () => View,
  onProgress?: ProgressReporter,
): Promise<DeleteResult> {
  const resolve = () => {
    const c = collectionIn(view(), args.collection);
    const results = refs.map((ref) => {
      const record = c.store.get(ref);
      if (!record) throw new EntityNotFoundError(c.name, ref);
      if (record.owner !== writer.address)
        throw new ConflictError(`entity ${JSON.stringify(record.id)} belongs to another writer (${record.owner})`, {
          id: record.id,
          owner: record.owner,
          key: record.key,
        });
      return { id: record.id, key: record.key, op: 'delete' as const };
    });
    return [...new Map(results.map((r) => [r.key, r])).values()];
  };
  if (args.dry_run) return { dry_run: true, results: resolve(), tx_hashes: [], block_number: null, transactions: 1 };
  // Waits for this signer's writes of the same refs to be indexed, so a delete right after an upsert
  // finds the entity.
  const release = await claim(
    writer,
    refs.map((ref) => entityName(args.collection, ref)),
  );
  let submitted;
  let unique;
  try {
    unique = resolve();
    submitted = await submit(ctx, { ...emptyBatch(), deletes: unique.map((r) => r.key as Hex) }, args.wait, onProgress);
  } finally {
    release(submitted?.settled);
  }
  return {
    dry_run: false,
    results: unique,
    tx_hashes: [submitted.hash],
    block_number: submitted.block_number,
    transactions: 1,
  };
}

/** What a delete by filter would remove at the view's block. */
function plan(view: View, writer: ChainWriter, args: DeleteArgs) {
  const c = collectionIn(view, args.collection);
  const matching = c.store.select({ where: args.where, filter: args.filter });
  const owned = matching
    .filter((r) => r.owner === writer.address)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const chosen: Doomed[] = owned.slice(0, DELETE_BY_FILTER_MAX).map((r) => ({ id: r.id, key: r.key, op: 'delete' }));
  const notOwner = matching.length - owned.length;
  return {
    as_of_block: view.as_of_block,
    matched: matching.length,
    skipped: notOwner ? [{ reason: 'not_owner' as const, count: notOwner }] : [],
    chosen,
    remaining: owned.length - chosen.length,
  };
}

async function deleteByFilter(
  ctx: ServiceContext,
  writer: ChainWriter,
  args: DeleteArgs,
  view: () => View,
  onProgress?: ProgressReporter,
): Promise<DeleteResult> {
  const first = plan(view(), writer, args);
  const outcome = (p: typeof first) => ({
    as_of_block: p.as_of_block,
    matched: p.matched,
    skipped: p.skipped,
    remaining: p.remaining,
    transactions: batches(p.chosen, DELETES_PER_TX).length,
    results: p.chosen,
  });
  if (args.dry_run) return { dry_run: true, ...outcome(first), tx_hashes: [], block_number: null };
  // Waits for this signer's in-flight writes of the chosen ids, then plans again on the fresh view.
  const release = await claim(
    writer,
    first.chosen.map((r) => entityName(args.collection, r.id)),
  );
  let last: Submitted | undefined;
  const hashes: Hex[] = [];
  let done = 0;
  try {
    const final = plan(view(), writer, args);
    for (const batch of batches(final.chosen, DELETES_PER_TX)) {
      last = await submit(ctx, { ...emptyBatch(), deletes: batch.map((r) => r.key as Hex) }, args.wait, onProgress);
      hashes.push(last.hash);
      done += batch.length;
    }
    return { dry_run: false, ...outcome(final), tx_hashes: hashes, block_number: last?.block_number ?? null };
  } catch (error) {
    // Earlier batches are on chain: say so, so the caller knows a retry starts from what is left.
    if (error instanceof ArkivectorError && hashes.length)
      Object.assign(error.meta, { deleted_before_failure: done, tx_hashes: hashes });
    throw error;
  } finally {
    release(last?.settled);
  }
}
