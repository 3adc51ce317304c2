// search_rag (KuraDB-compatible, --compat kuradb): keyword (BM25) and/or semantic search over a
// collection's documents, grouped by the `source` attribute (the entity id when absent) with `chunk`
// (attribute, else 0) and `content` (the document). Errors use KuraDB's exact strings.
import { z } from 'zod';
import { ArkivectorError } from '../errors.ts';
import type { RecordSummary, ServiceContext } from './context.ts';
import { textEmbedder } from './textEmbedder.ts';
import { readView } from './view.ts';

export const RAG_LIMIT_DEFAULT = 10;
export const RAG_LIMIT_MAX = 100;

export const searchRagArgs = {
  db: z.string().describe('Database (collection) name, as list_rag reports it'),
  q: z.string().describe('Query text'),
  mode: z
    .enum(['keyword', 'semantic', 'both'])
    .optional()
    .describe('keyword for exact strings, semantic for natural language; omit to run both'),
  limit: z
    .number()
    .int()
    .default(RAG_LIMIT_DEFAULT)
    .describe(`Max chunks per mode (1-${RAG_LIMIT_MAX}); other values fall back to ${RAG_LIMIT_DEFAULT}`),
};

/**
 * What search_rag accepts: the listed shape, except that `limit` takes any value and falls back to the
 * default when it is not an integer from 1 to RAG_LIMIT_MAX (KuraDB's rule: `1.5` and `"5"` give 10).
 */
export const searchRagInput = z.object({ ...searchRagArgs, limit: z.unknown().optional() });

type Group = { source: string; matches: { chunk: number; content: string }[] };
export interface SearchRagResult {
  keyword?: Group[];
  semantic?: Group[];
}

/** KuraDB's argument errors: plain text, no problem object (agents match these strings). */
export class RagArgumentError extends ArkivectorError {
  override name = 'RagArgumentError';
  constructor(message: string) {
    super('invalid_argument', `invalid argument: ${message}`);
  }
}

function group(records: readonly RecordSummary[]): Group[] {
  const groups = new Map<string, Group>();
  for (const record of records) {
    const source = typeof record.attributes.source === 'string' ? record.attributes.source : record.id;
    const chunk = typeof record.attributes.chunk === 'number' ? record.attributes.chunk : 0;
    let g = groups.get(source);
    if (!g) groups.set(source, (g = { source, matches: [] }));
    g.matches.push({ chunk, content: record.document });
  }
  return [...groups.values()];
}

export async function searchRag(
  ctx: ServiceContext,
  params: { db: string; q: string; mode?: 'keyword' | 'semantic' | 'both'; limit?: unknown },
): Promise<SearchRagResult> {
  const db = params.db.trim();
  const q = params.q.trim();
  const limit =
    typeof params.limit === 'number' &&
    Number.isInteger(params.limit) &&
    params.limit >= 1 &&
    params.limit <= RAG_LIMIT_MAX
      ? params.limit
      : RAG_LIMIT_DEFAULT;
  const mode = params.mode ?? 'both';
  // KuraDB checks the database before the query text.
  const known = (await readView(ctx))().collections.get(db);
  if (!known) throw new RagArgumentError(`"${db}" not exist`);
  if (!q) throw new RagArgumentError('q is required');
  // Semantic needs an embedder: asked for explicitly it fails; as half of "both" it simply does not run.
  const runSemantic = mode === 'semantic' || (mode === 'both' && ctx.embedder !== undefined);
  if (runSemantic && !ctx.embedder)
    throw new ArkivectorError('embedder_not_configured', 'semantic search needs an embedder (--embedder URL)');
  // A collection recorded with another model refuses the semantic branch, also as half of "both":
  // vectors of two models are not comparable, and a silent keyword-only answer would hide it.
  const vector = runSemantic ? await textEmbedder(ctx, known).embed(q) : undefined;
  const view = (await readView(ctx))();
  const store = view.collections.get(db)?.store;
  if (!store) throw new RagArgumentError(`"${db}" not exist`);
  const result: SearchRagResult = {};
  if (mode !== 'semantic') {
    const keyword = group(store.keywordSearch({ text: q, k: limit }).results.map((r) => r.record));
    if (keyword.length) result.keyword = keyword;
  }
  if (vector) {
    const semantic = group(store.search({ vector, k: limit }).results.map((r) => r.record));
    if (semantic.length) result.semantic = semantic;
  }
  return result;
}
