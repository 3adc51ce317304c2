// list collections: the collections this node indexes, by name, a page at a time, with their definitions,
// stats and sync state.
import type { ServiceContext } from './context.ts';
import { listSchema, type ListCollectionsResult } from './schemas.ts';
import { validate } from './validate.ts';
import { describeCollection, readView } from './view.ts';

export type { ListCollectionsResult };

export async function listCollections(ctx: ServiceContext, params: unknown = {}): Promise<ListCollectionsResult> {
  const { min_block, limit, cursor } = validate(listSchema, params);
  const view = (await readView(ctx, min_block))();
  const names = [...view.collections.keys()].sort();
  // The page starts after the cursor's name, whether or not that collection still exists.
  const after = cursor === undefined ? [] : names.filter((name) => name <= cursor);
  const page = names.slice(after.length, after.length + limit);
  const more = after.length + page.length < names.length;
  return {
    collections: page.flatMap((name) => {
      const c = view.collections.get(name);
      return c ? [describeCollection(view, c)] : [];
    }),
    as_of_block: view.as_of_block,
    as_of_block_hash: view.as_of_block_hash,
    sync_state: view.sync_state,
    total: names.length,
    next_cursor: more ? (page.at(-1) ?? null) : null,
  };
}
