// KuraDB-compatible tools (--compat kuradb): `list_rag` and `search_rag` with KuraDB's names, arguments,
// answer shapes and error strings, so agents built for KuraDB (Agenvoy) can use arkivector unchanged.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ArkivectorError } from '../src/errors.ts';
import { listRag, RAG_LIMIT_MAX, searchRag, searchRagArgs, type ServiceContext } from '../src/service/index.ts';
import type { Logger } from './result.ts';

const group = z.object({ source: z.string(), matches: z.array(z.object({ chunk: z.number(), content: z.string() })) });

async function answer(operation: () => Promise<object>, logger?: Logger): Promise<CallToolResult> {
  try {
    const result = await operation();
    return {
      content: [{ type: 'text', text: JSON.stringify(result) }],
      structuredContent: result as Record<string, unknown>,
    };
  } catch (error) {
    if (!(error instanceof ArkivectorError))
      logger?.error({ error: (error as Error)?.stack ?? String(error) }, 'tool failed');
    const message =
      error instanceof ArkivectorError ? error.shortMessage : 'internal error; the server log has the details';
    return { content: [{ type: 'text', text: message }], isError: true };
  }
}

export function registerKuraDbTools(server: McpServer, ctx: ServiceContext, logger?: Logger): void {
  server.registerTool(
    'list_rag',
    {
      description:
        "List RAG knowledge base databases (this node's collections). Call when the target database name is unknown.",
      inputSchema: {},
      outputSchema: {
        loaded: z.array(z.string()),
        registered: z.array(z.object({ db: z.string(), createAt: z.string() })),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async () => answer(() => listRag(ctx), logger),
  );
  server.registerTool(
    'search_rag',
    {
      description: `Search a RAG knowledge base (keyword + semantic by default). mode=keyword for exact strings (names, terms, symbols); mode=semantic for natural-language queries. Returns up to limit (1-${RAG_LIMIT_MAX}, default 10) chunks per mode, grouped by source; cite the source of any chunk you use.`,
      inputSchema: searchRagArgs,
      outputSchema: { keyword: z.array(group).optional(), semantic: z.array(group).optional() },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args) => answer(() => searchRag(ctx, args), logger),
  );
}
