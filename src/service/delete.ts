// delete: removes entities this signer owns; a dry run (the default) only reports what would go.
import type { Hex } from 'viem';
import { emptyStorageOps } from '../chain/storageTransaction.ts';
import type { ServiceContext } from './context.ts';
import { ConflictError, EntityNotFoundError } from './errors.ts';
import { deleteSchema, type DeleteResult } from './schemas.ts';
import { requireWriter, submit, type ProgressReporter } from './submit.ts';
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
  const view = (await readView(ctx))();
  const c = collectionIn(view, args.collection);
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
  const unique = [...new Map(results.map((r) => [r.key, r])).values()];
  if (args.dry_run) return { dry_run: true, results: unique, tx_hashes: [], block_number: null };
  const { hash, block_number } = await submit(
    ctx,
    { ...emptyStorageOps(), deletes: unique.map((r) => r.key as Hex) },
    args.wait,
    onProgress,
  );
  return { dry_run: false, results: unique, tx_hashes: [hash], block_number };
}
