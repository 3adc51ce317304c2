// The route table: every route of the node's API, in the order the app registers them. A new route is
// one RouteDefinition in the module of its concern plus, for a new module, one line here. The console
// and the docs are not here: the node mounts them (createHttpApp's `mounts`).
import type { RouteDefinition } from '../types.ts';
import { KURADB_ROUTES } from './kuradb.ts';
import { MCP_OTHER_ROUTES, MCP_POST_ROUTE } from './mcp.ts';
import { PROBE_ROUTES } from './probes.ts';
import { READ_ROUTES } from './reads.ts';
import { WRITE_ROUTES } from './writes.ts';

export const ROUTES: readonly RouteDefinition[] = [
  ...PROBE_ROUTES,
  ...READ_ROUTES,
  ...WRITE_ROUTES,
  MCP_POST_ROUTE,
  ...KURADB_ROUTES,
  ...MCP_OTHER_ROUTES,
];
