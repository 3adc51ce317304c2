// search_rag (KuraDB-compatible, --compat kuradb) and KuraDB's GET /api/search: keyword (BM25) and/or
// semantic search over a collection's documents, grouped by the `source` attribute (the entity id when
// absent) with `chunk` (attribute, else 0) and `content` (the document). Both surfaces call searchRag;
// errors use KuraDB's exact strings.
import { z } from 'zod';
import { ArkivectorError } from '../errors.ts';
import type { ReadableStore, RecordSummary, ServiceContext } from './context.ts';
import {
  RAG_CANDIDATES_MAX,
  RAG_LIMIT_DEFAULT,
  RAG_LIMIT_MAX,
  RAG_SEMANTIC_MIN_SCORE,
  TEXT_MAX_CHARS,
} from './limits.ts';
import { textEmbedder } from './textEmbedder.ts';
import { CONFIGURE_EMBEDDER } from './errors.ts';
import { readView } from './view.ts';

export { RAG_LIMIT_DEFAULT, RAG_LIMIT_MAX };

const RAG_MODES = ['keyword', 'semantic'] as const;

/** search_rag's published arguments (tools/list); parseSearchRagArgs reads the raw arguments. */
export const searchRagArgs = {
  db: z.string().describe('Database (collection) name, as list_rag reports it'),
  q: z.string().describe('Query text'),
  mode: z
    .enum(RAG_MODES)
    .optional()
    .describe('keyword for exact strings, semantic for natural language; omit to run both'),
  limit: z
    .number()
    .int()
    .default(RAG_LIMIT_DEFAULT)
    .describe(`Max chunks per mode (1-${RAG_LIMIT_MAX}); other values fall back to ${RAG_LIMIT_DEFAULT}`),
};

// KuraDB's clients lower-case and trim the mode before sending it (Agenvoy) and KuraDB lower-cases its
// `target`, so `Keyword` or ` SEMANTIC ` mean the same; empty, or the older `both`, means both.
const modeArg = z.preprocess(
  (value) => (typeof value === 'string' ? value.trim().toLowerCase() || undefined : value),
  z.union([z.enum(RAG_MODES), z.literal('both')]).optional(),
);

/** Which branches run: both (the semantic half only with an embedder), one, or none (KuraDB's unknown `target`). */
export type RagMode = 'both' | 'keyword' | 'semantic' | 'none';

export interface RagQuery {
  /** Missing (undefined) is `db is required`; trimmed, then looked up. */
  db?: string;
  /** Missing or empty after trimming is `q is required`. */
  q?: string;
  mode: RagMode;
  /** Any value; not an integer from 1 to RAG_LIMIT_MAX falls back to RAG_LIMIT_DEFAULT (KuraDB's rule). */
  limit?: unknown;
}

type Group = { source: string; matches: { chunk: number; content: string }[] };
/** The branches that ran, each possibly empty (the MCP tool omits empty ones, REST keeps them). */
export interface SearchRagResult {
  keyword?: Group[];
  semantic?: Group[];
  /** Both branches asked, the semantic one could not run (embedder down, another dimension): why. */
  semantic_missing?: string;
}

/** KuraDB's argument errors: plain text, no problem object (agents match these strings). */
export class RagArgumentError extends ArkivectorError {
  override name = 'RagArgumentError';
  /** The message without its `invalid argument: ` prefix, as KuraDB's REST API answers it. */
  readonly reason: string;
  constructor(reason: string) {
    super('invalid_argument', `invalid argument: ${reason}`);
    this.reason = reason;
  }
}

/**
 * search_rag's raw arguments as a RagQuery: `db`/`q` that are not strings count as missing, `mode` is
 * read case-insensitively. Throws RagArgumentError for a mode that is neither keyword nor semantic.
 */
export function parseSearchRagArgs(raw: unknown): RagQuery {
  const args = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const mode = modeArg.safeParse(args.mode);
  if (!mode.success)
    throw new RagArgumentError(`mode must be 'keyword' or 'semantic' (got ${JSON.stringify(args.mode)})`);
  return {
    db: typeof args.db === 'string' ? args.db : undefined,
    q: typeof args.q === 'string' ? args.q : undefined,
    mode: mode.data ?? 'both',
    limit: args.limit,
  };
}

const hasContent = (record: RecordSummary) => record.document.trim() !== '';

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

/**
 * The `limit` nearest chunks that have content, best first; on a cosine collection cut at the first
 * scoring below RAG_SEMANTIC_MIN_SCORE (KuraDB's rule over its cosine similarities). Chunks without
 * content are passed over, looking further (at most RAG_CANDIDATES_MAX neighbours) to fill `limit`.
 */
function semanticHits(store: ReadableStore, vector: number[], limit: number, cosine: boolean): RecordSummary[] {
  const reachable = Math.min(store.count(), RAG_CANDIDATES_MAX);
  for (let k = limit; ; k = Math.min(k * 4, reachable)) {
    const { results } = store.search({ vector, k });
    const kept: RecordSummary[] = [];
    for (const hit of results) {
      if (cosine && hit.score < RAG_SEMANTIC_MIN_SCORE) return kept;
      if (hasContent(hit.record)) kept.push(hit.record);
      if (kept.length === limit) return kept;
    }
    if (results.length < k || k >= reachable) return kept;
  }
}

/** A semantic half that cannot run now (the embedder is down, or its width is not the collection's). */
export const semanticFallback = (error: unknown): boolean =>
  error instanceof ArkivectorError && (error.code === 'embedder_unavailable' || error.code === 'dimension_mismatch');

export async function searchRag(ctx: ServiceContext, params: RagQuery): Promise<SearchRagResult> {
  // The bound of arkivector_search's text, before anything else: an anonymous caller's megabytes of query
  // would otherwise be embedded and tokenised on the serving thread.
  if (params.q !== undefined && params.q.length > TEXT_MAX_CHARS)
    throw new RagArgumentError(`q is longer than ${TEXT_MAX_CHARS} characters`);
  const { limit: raw, mode } = params;
  const limit =
    typeof raw === 'number' && Number.isInteger(raw) && raw >= 1 && raw <= RAG_LIMIT_MAX ? raw : RAG_LIMIT_DEFAULT;
  // KuraDB checks the database (missing, then unknown) before the query text.
  if (params.db === undefined) throw new RagArgumentError('db is required');
  const db = params.db.trim();
  const known = (await readView(ctx))().collections.get(db);
  if (!known) throw new RagArgumentError(`"${db}" not exist`);
  const q = params.q?.trim();
  if (!q) throw new RagArgumentError('q is required');
  // Semantic needs an embedder: asked for explicitly it fails; as half of "both" it simply does not run.
  const runSemantic = mode === 'semantic' || (mode === 'both' && ctx.embedder !== undefined);
  if (runSemantic && !ctx.embedder)
    throw new ArkivectorError(
      'embedder_not_configured',
      `semantic search needs an embedder, and this node has none: ${CONFIGURE_EMBEDDER}`,
    );
  // A collection recorded with another model refuses the semantic branch, also as half of "both":
  // vectors of two models are not comparable, and a silent keyword-only answer would hide it. An embedder
  // that is down, or whose vectors have another width, only leaves "both" without its semantic half (it did
  // not run, as without an embedder), and the answer says why; asked for alone, it is the error.
  const embedder = runSemantic ? textEmbedder(ctx, known) : undefined;
  let vector: number[] | undefined;
  let semanticMissing: string | undefined;
  try {
    vector = await embedder?.embed(q);
    if (vector && vector.length !== known.definition.dim)
      throw new ArkivectorError(
        'dimension_mismatch',
        `the embedder ${embedder?.model} gives ${vector.length} dimensions, collection ${db} holds ${known.definition.dim}`,
      );
  } catch (error) {
    if (mode !== 'both' || !semanticFallback(error)) throw error;
    vector = undefined;
    semanticMissing = (error as Error).message;
  }
  const view = (await readView(ctx))();
  const collection = view.collections.get(db);
  if (!collection) throw new RagArgumentError(`"${db}" not exist`);
  const { store } = collection;
  const result: SearchRagResult = {};
  if (semanticMissing !== undefined) result.semantic_missing = semanticMissing;
  if (mode === 'both' || mode === 'keyword')
    result.keyword = group(
      store
        .keywordSearch({ text: q, k: limit })
        .results.map((r) => r.record)
        .filter(hasContent),
    );
  if (vector) result.semantic = group(semanticHits(store, vector, limit, collection.definition.metric === 'cosine'));
  return result;
}
