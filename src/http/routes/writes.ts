// The REST writes. The write scope is checked first (the app's route guard), then the service refuses
// without a signer.
import { createCollection, deleteEntities, upsert } from '../../service/index.ts';
import { withCollection, writeBody } from '../body.ts';
import { defined, pathParam, queryBoolean, queryJson } from '../params.ts';
import type { Ctx, RouteDefinition } from '../types.ts';

/**
 * A delete's arguments: the collection from the path and what selects the entities, then the query's
 * `dry_run` (a dry run unless dry_run=false, like the tool) and `wait`.
 */
function deleteArgs(c: Ctx, selection: Record<string, unknown>): Record<string, unknown> {
  return defined({
    collection: pathParam(c, 'c'),
    ...selection,
    dry_run: queryBoolean(c.req.query('dry_run')),
    wait: c.req.query('wait'),
  });
}

export const WRITE_ROUTES: readonly RouteDefinition[] = [
  {
    method: 'POST',
    path: '/v1/collections',
    scope: 'write',
    handler: async (c, { ctx }) => c.json(await createCollection(ctx, await writeBody(c))),
  },
  {
    method: 'POST',
    path: '/v1/collections/:c/entities',
    scope: 'write',
    handler: async (c, { ctx }) => c.json(await upsert(ctx, withCollection(await writeBody(c), pathParam(c, 'c')))),
  },
  {
    method: 'DELETE',
    path: '/v1/collections/:c/entities/:ref',
    scope: 'write',
    handler: async (c, { ctx }) => c.json(await deleteEntities(ctx, deleteArgs(c, { refs: [pathParam(c, 'ref')] }))),
  },
  {
    // Delete by filter (or several refs): the arguments of arkivector_delete as query parameters, dry run
    // unless dry_run=false, like the tool.
    method: 'DELETE',
    path: '/v1/collections/:c/entities',
    scope: 'write',
    handler: async (c, { ctx }) =>
      c.json(
        await deleteEntities(
          ctx,
          deleteArgs(c, {
            refs: c.req.queries('ref'),
            where: c.req.query('where'),
            filter: queryJson(c.req.query('filter'), 'filter'),
          }),
        ),
      ),
  },
];
