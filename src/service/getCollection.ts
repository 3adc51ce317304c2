// get one collection's description (REST GET /v1/collections/{c}).
import { z } from 'zod';
import type { ServiceContext } from './context.ts';
import { collectionArg, minBlockArg, type Collection } from './schemas.ts';
import { validate } from './validate.ts';
import { collectionIn, describeCollection, readView } from './view.ts';

const getCollectionSchema = z.object({ collection: collectionArg, min_block: minBlockArg });

export async function getCollection(ctx: ServiceContext, params: unknown): Promise<Collection> {
  const { collection, min_block } = validate(getCollectionSchema, params);
  const view = (await readView(ctx, min_block))();
  return describeCollection(view, collectionIn(view, collection));
}
