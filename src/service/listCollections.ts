// list collections: every collection this node indexes, with its definition, stats and sync state.
import type { ServiceContext } from './context.ts';
import { listSchema, type ListCollectionsResult } from './schemas.ts';
import { validate } from './validate.ts';
import { describeCollection, readView } from './view.ts';

export type { ListCollectionsResult };

export async function listCollections(ctx: ServiceContext, params: unknown = {}): Promise<ListCollectionsResult> {
  const { min_block } = validate(listSchema, params);
  const view = (await readView(ctx, min_block))();
  const collections = [...view.collections.values()]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((c) => describeCollection(view, c));
  return { collections, as_of_block: view.as_of_block, sync_state: view.sync_state };
}
