// The REST reads: the node's status, the collections and their entities, searches and counts.
import { count, get, getCollection, listCollections, listEntities, search, status } from '../../service/index.ts';
import { jsonBody, withCollection } from '../body.ts';
import { defined, pathParam, queryBoolean, queryInteger, queryJson } from '../params.ts';
import type { RouteDefinition } from '../types.ts';

/** The search route's template; the fast path (fastSearch.ts) answers the same route. */
export const SEARCH_ROUTE = '/v1/collections/:c/search';

export const READ_ROUTES: readonly RouteDefinition[] = [
  { method: 'GET', path: '/v1/status', scope: 'read', handler: async (c, { ctx }) => c.json(await status(ctx)) },
  {
    method: 'GET',
    path: '/v1/collections',
    scope: 'read',
    handler: async (c, { ctx }) =>
      c.json(
        await listCollections(
          ctx,
          defined({
            min_block: queryInteger(c.req.query('min_block')),
            limit: queryInteger(c.req.query('limit')),
            cursor: c.req.query('cursor'),
          }),
        ),
      ),
  },
  {
    method: 'GET',
    path: '/v1/collections/:c',
    scope: 'read',
    handler: async (c, { ctx }) =>
      c.json(
        await getCollection(
          ctx,
          defined({ collection: pathParam(c, 'c'), min_block: queryInteger(c.req.query('min_block')) }),
        ),
      ),
  },
  {
    method: 'POST',
    path: SEARCH_ROUTE,
    scope: 'read',
    handler: async (c, { ctx }) => c.json(await search(ctx, withCollection(await jsonBody(c), pathParam(c, 'c')))),
  },
  {
    method: 'POST',
    path: '/v1/collections/:c/count',
    scope: 'read',
    handler: async (c, { ctx }) => c.json(await count(ctx, withCollection(await jsonBody(c), pathParam(c, 'c')))),
  },
  {
    method: 'GET',
    path: '/v1/collections/:c/entities/:ref',
    scope: 'read',
    handler: async (c, { ctx }) =>
      c.json(
        await get(
          ctx,
          defined({
            collection: pathParam(c, 'c'),
            ref: pathParam(c, 'ref'),
            include_document: queryBoolean(c.req.query('include_document')),
            min_block: queryInteger(c.req.query('min_block')),
          }),
        ),
      ),
  },
  {
    method: 'GET',
    path: '/v1/collections/:c/entities',
    scope: 'read',
    handler: async (c, { ctx }) =>
      c.json(
        await listEntities(
          ctx,
          defined({
            collection: pathParam(c, 'c'),
            where: c.req.query('where'),
            filter: queryJson(c.req.query('filter'), 'filter'),
            limit: queryInteger(c.req.query('limit')),
            cursor: c.req.query('cursor'),
            order: c.req.query('order'),
            include_document: queryBoolean(c.req.query('include_document')),
            min_block: queryInteger(c.req.query('min_block')),
          }),
        ),
      ),
  },
];
