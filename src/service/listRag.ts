// list_rag (KuraDB-compatible, --compat kuradb): the searchable databases, i.e. this node's collections,
// in KuraDB's shape. `createAt` is the time of the block that created the collection's definition.
import type { ServiceContext } from './context.ts';
import { readView } from './view.ts';

export interface ListRagResult {
  loaded: string[];
  registered: { db: string; createAt: string }[];
}

export async function listRag(ctx: ServiceContext): Promise<ListRagResult> {
  const view = (await readView(ctx))();
  const collections = [...view.collections.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  const registered = await Promise.all(
    collections.map(async (c) => {
      const seconds = await ctx.blockTimestamp?.(c.definitionCreatedAtBlock).catch(() => undefined);
      return { db: c.name, createAt: new Date((seconds ?? 0) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') };
    }),
  );
  return { loaded: collections.map((c) => c.name), registered };
}
