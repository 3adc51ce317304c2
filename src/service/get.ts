// get: one live entity of a collection by id or by entity key.
import type { ServiceContext } from './context.ts';
import { EntityNotFoundError } from './errors.ts';
import { entityOf } from './render.ts';
import { getSchema, type GetParameters, type GetResult } from './schemas.ts';
import { validate } from './validate.ts';
import { collectionIn, readView } from './view.ts';

export type { GetParameters, GetResult };

export async function get(ctx: ServiceContext, params: unknown): Promise<GetResult> {
  const { collection, ref, include_document, min_block } = validate(getSchema, params);
  const view = (await readView(ctx, min_block))();
  const c = collectionIn(view, collection);
  const record = c.store.get(ref);
  if (!record) throw new EntityNotFoundError(collection, ref);
  return {
    as_of_block: view.as_of_block,
    as_of_block_hash: view.as_of_block_hash,
    sync_state: view.sync_state,
    entity: entityOf(record, c.definition, include_document),
  };
}
