// buildServer: the only place an McpServer is assembled; the stdio and HTTP entry points call it.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { InvalidArgumentError, type ServiceContext } from '../src/service/index.ts';
import { registerCount } from './count.ts';
import { registerDelete } from './delete.ts';
import { registerKuraDbTools } from './kuradb.ts';
import { registerUpsert } from './upsert.ts';
import { registerGet } from './get.ts';
import { registerListCollections } from './listCollections.ts';
import { failure, type Logger } from './result.ts';
import { registerSearch } from './search.ts';

export const SERVER_NAME = 'arkivector';
export const SERVER_VERSION = '0.1.0';

export const INSTRUCTIONS = `arkivector serves vector collections stored on the Arkiv chain.
- Start with arkivector_list_collections: it gives each collection's dimension, metric and declared attributes.
- Every answer carries as_of_block (the chain block it reflects) and sync_state (starting, catching_up, live, stalled). Two nodes at the same as_of_block give the same answer.
- After writing (through this node or any other), pass min_block = the write's block number to any read: the node waits until that block is indexed, or answers not_yet_indexed.
- Filters: where uses Arkiv syntax over declared attributes (=, !=, <, <=, >, >=, ~ glob, IN (...), &&, ||, !(...)) with typed literals like str('x'), i32(-5), f32(0.5), bool(true), and $owner / $creator / $key; filter takes JSON ({"gte": {"stars": 4}}). != only matches entities that have the attribute.
- Errors come back as a problem object with a stable code (e.g. dimension_mismatch, invalid_filter, collection_not_found).`;

export interface BuildServerDeps {
  ctx: ServiceContext;
  logger?: Logger;
  /** --compat kuradb: also list KuraDB's list_rag and search_rag. */
  compat?: 'kuradb';
  /** Whether this caller may write (HTTP: the token's write scope; stdio: the local user). Default true. */
  canWrite?: boolean;
  /** Called once per tool call with its outcome and duration (src/http/metrics.ts observeTool). */
  observe?: (tool: string, ok: boolean, seconds: number) => void;
}

export function buildServer({ ctx, logger, observe, canWrite = true, compat }: BuildServerDeps): McpServer {
  const server = new McpServer({ name: SERVER_NAME, version: SERVER_VERSION }, { instructions: INSTRUCTIONS });
  if (observe) observeToolCalls(server, observe);
  // The SDK answers schema violations with plain text; DESIGN.md §8 wants the same problem object the
  // REST API returns, so its error renderer is replaced for this instance.
  (server as unknown as { createToolError(message: string): CallToolResult }).createToolError = (message: string) =>
    failure(
      /Input validation error/.test(message)
        ? new InvalidArgumentError(message.replace(/^MCP error -32602: /, ''))
        : new Error(message),
      logger,
    );
  registerListCollections(server, ctx, logger);
  registerSearch(server, ctx, logger);
  registerGet(server, ctx, logger);
  registerCount(server, ctx, logger);
  if (compat === 'kuradb') registerKuraDbTools(server, ctx, logger);
  // Signer-only tools are listed only when this node can sign and the caller may write.
  if (ctx.writer && canWrite) {
    registerUpsert(server, ctx, logger);
    registerDelete(server, ctx, logger);
  }
  return server;
}

// run() in result.ts cannot tell which tool it runs for without changing every tool file, so the
// handlers are timed where their names are known: at registration, on this instance only.
function observeToolCalls(server: McpServer, observe: NonNullable<BuildServerDeps['observe']>): void {
  type Handler = (...args: unknown[]) => CallToolResult | Promise<CallToolResult>;
  const register = server.registerTool.bind(server) as (name: string, config: unknown, handler: Handler) => unknown;
  (server as unknown as { registerTool: typeof register }).registerTool = (name, config, handler) =>
    register(name, config, async (...args: unknown[]) => {
      const started = process.hrtime.bigint();
      let ok = false;
      try {
        const result = await handler(...args);
        ok = result.isError !== true;
        return result;
      } finally {
        observe(name, ok, Number(process.hrtime.bigint() - started) / 1e9);
      }
    });
}
