// KuraDB-compatible tools (--compat kuradb): `list_rag` and `search_rag` with KuraDB's names, arguments,
// answer shapes and error strings, so agents built for KuraDB (Agenvoy) can use arkivector unchanged.
import { z } from 'zod';
import {
  listRag,
  parseSearchRagArgs,
  RAG_LIMIT_MAX,
  searchRag,
  searchRagArgs,
  type SearchRagResult,
} from '../src/service/index.ts';
import { defineTool } from './defineTool.ts';

const group = z.object({ source: z.string(), matches: z.array(z.object({ chunk: z.number(), content: z.string() })) });

/** The tool leaves out branches that found nothing (KuraDB's REST API answers them as empty arrays). */
function withoutEmpty(answer: SearchRagResult): SearchRagResult {
  const out: SearchRagResult = {};
  if (answer.keyword?.length) out.keyword = answer.keyword;
  if (answer.semantic?.length) out.semantic = answer.semantic;
  if (answer.semantic_missing !== undefined) out.semantic_missing = answer.semantic_missing;
  return out;
}

// KuraDB answers are the JSON itself, in the text block too.
const asJson = (answer: object) => JSON.stringify(answer);

export const listRagTool = defineTool({
  name: 'list_rag',
  description:
    "List RAG knowledge base databases (this node's collections). Call when the target database name is unknown.",
  input: {},
  output: {
    loaded: z.array(z.string()),
    registered: z.array(z.object({ db: z.string(), createAt: z.string() })),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  needs: 'read',
  compat: 'kuradb',
  errorStyle: 'message',
  call: (ctx) => listRag(ctx),
  render: asJson,
});

export const searchRagTool = defineTool<SearchRagResult>({
  name: 'search_rag',
  description: `Search a RAG knowledge base (keyword + semantic by default). mode=keyword for exact strings (names, terms, symbols); mode=semantic for natural-language queries. Returns up to limit (1-${RAG_LIMIT_MAX}, default 10) chunks per mode, grouped by source; cite the source of any chunk you use.`,
  input: searchRagArgs,
  output: {
    keyword: z.array(group).optional(),
    semantic: z.array(group).optional(),
    semantic_missing: z
      .string()
      .optional()
      .describe('Without mode: why the semantic branch did not run (the embedder is down, or another dimension)'),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  needs: 'read',
  compat: 'kuradb',
  errorStyle: 'message',
  call: async (ctx, args) => withoutEmpty(await searchRag(ctx, parseSearchRagArgs(args))),
  render: asJson,
});
