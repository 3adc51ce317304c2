// count: exact number of live entities in a collection that pass an optional filter.
import type { ServiceContext } from './context.ts';
import { countSchema, type CountParameters, type CountResult } from './schemas.ts';
import { validate } from './validate.ts';
import { collectionIn, readView } from './view.ts';

export type { CountParameters, CountResult };

export async function count(ctx: ServiceContext, params: unknown): Promise<CountResult> {
  const { collection, where, filter, min_block } = validate(countSchema, params);
  const view = (await readView(ctx, min_block))();
  const store = collectionIn(view, collection).store;
  return {
    as_of_block: view.as_of_block,
    as_of_block_hash: view.as_of_block_hash,
    sync_state: view.sync_state,
    count: store.count({ where, filter }),
  };
}
