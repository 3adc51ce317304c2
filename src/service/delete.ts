// delete: removes entities this signer owns; a dry run (the default) only reports what would go.
import type { Hex } from 'viem';
import { emptyStorageOps } from '../chain/storageTransaction.ts';
import type { ServiceContext } from './context.ts';
import { ConflictError, EntityNotFoundError } from './errors.ts';
import { deleteSchema, type DeleteResult } from './schemas.ts';
import { requireWriter, submit, type ProgressReporter } from './submit.ts';
import { claim, entityName } from './inFlight.ts';
import { validate } from './validate.ts';
import { collectionIn, readView } from './view.ts';

export type { DeleteResult };

export async function deleteEntities(
  ctx: ServiceContext,
  params: unknown,
  onProgress?: ProgressReporter,
): Promise<DeleteResult> {
  const writer = requireWriter(ctx);
  const args = validate(deleteSchema, params);
  const view = await readView(ctx);
  const resolve = () => {
    const c = collectionIn(view(), args.collection);
    const results = args.refs.map((ref) => {
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
  if (args.dry_run) return { dry_run: true, results: resolve(), tx_hashes: [], block_number: null };
  // Waits for this signer's writes of the same refs to be indexed, so a delete right after an upsert
  // finds the entity.
  const release = await claim(
    writer,
    args.refs.map((ref) => entityName(args.collection, ref)),
  );
  let submitted;
  let unique;
  try {
    unique = resolve();
    submitted = await submit(
      ctx,
      { ...emptyStorageOps(), deletes: unique.map((r) => r.key as Hex) },
      args.wait,
      onProgress,
    );
  } finally {
    release(submitted?.settled);
  }
  return { dry_run: false, results: unique, tx_hashes: [submitted.hash], block_number: submitted.block_number };
}
