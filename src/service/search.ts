// search: nearest neighbours by vector, by embedded text, by keyword (BM25) or hybrid (RRF), with
// Arkiv filters; the planner in the engine chooses exact or HNSW and reports it.
import type { CollectionDefinition } from '../collections/index.ts';
import { defined } from '../defined.ts';
import type { RecordSummary, ServiceContext } from './context.ts';
import { EmbedderNotConfiguredError, InvalidArgumentError } from './errors.ts';
import { expiresAtBlock } from './lifetime.ts';
import { typedAttributes } from './render.ts';
import { searchSchema, searchSchemaFast, type SearchParameters, type SearchResult } from './schemas.ts';
import { textEmbedder } from './textEmbedder.ts';
import { semanticFallback } from './searchRag.ts';
import { ArkivectorError } from '../errors.ts';
import { validateFast } from './validate.ts';
import { collectionIn, readView } from './view.ts';

export type { SearchParameters, SearchResult };

export async function search(ctx: ServiceContext, params: unknown): Promise<SearchResult> {
  const args = validateFast(searchSchemaFast, searchSchema, params);
  if (!args.vector && !args.text)
    throw new InvalidArgumentError('vector or text: one of them is required', [
      { path: 'vector', message: 'required when text is absent' },
      { path: 'text', message: 'required when vector is absent' },
    ]);
  let mode = args.mode ?? (args.vector ? 'vector' : 'semantic');
  if (mode === 'vector' && !args.vector)
    throw new InvalidArgumentError(
      'vector: required for mode "vector" (or pass text with mode "keyword", "semantic" or "hybrid")',
      [{ path: 'vector', message: 'required' }],
    );
  const text = args.text;
  if (mode !== 'vector' && !text)
    throw new InvalidArgumentError(`text: required for mode "${mode}"`, [{ path: 'text', message: 'required' }]);
  // The embedding call is the only await after validation: it happens before the answer's view is taken.
  let vector = args.vector;
  let semanticMissing: string | undefined;
  if ((mode === 'semantic' || mode === 'hybrid') && !vector) {
    if (!ctx.embedder) throw new EmbedderNotConfiguredError();
    // The model check waits for min_block too: a collection created on another node may arrive with it.
    const before = collectionIn((await readView(ctx, args.min_block))(), args.collection);
    const embedder = textEmbedder(ctx, before);
    try {
      vector = await embedder.embed(text ?? '');
      if (vector.length !== before.definition.dim)
        throw new ArkivectorError(
          'dimension_mismatch',
          `the embedder ${embedder.model} gives ${vector.length} dimensions, collection ${before.name} holds ${before.definition.dim}`,
          { meta: { expected: before.definition.dim, got: vector.length, model: embedder.model } },
        );
    } catch (error) {
      // Hybrid keeps its keyword half when the semantic half cannot run now, and says why.
      if (mode !== 'hybrid' || !semanticFallback(error)) throw error;
      semanticMissing = (error as Error).message;
      mode = 'keyword';
    }
  }
  let view = (await readView(ctx, args.min_block))();
  let c = collectionIn(view, args.collection);
  const filters = { where: args.where, filter: args.filter };
  // The graph calls run on threads; the answer is the store's at this view, or undefined when a block
  // changed the store meanwhile: then the answer is taken again, synchronously, at a fresh view.
  // (Keyword search has no graph call: it runs here, on the main thread.)
  let pinned: Awaited<ReturnType<NonNullable<typeof c.store.searchPinned>>>;
  let hybridPinned: Awaited<ReturnType<NonNullable<typeof c.store.hybridSearchPinned>>>;
  let again = false;
  if ((mode === 'vector' || mode === 'semantic') && c.store.searchPinned !== undefined) {
    pinned = await c.store.searchPinned({ vector: defined(vector, 'query vector'), k: args.k, ...filters });
    again = pinned === undefined;
  } else if (mode === 'hybrid' && c.store.hybridSearchPinned !== undefined) {
    const params = { vector: defined(vector, 'query vector'), text: text ?? '', k: args.k, ...filters };
    hybridPinned = await c.store.hybridSearchPinned(params);
    again = hybridPinned === undefined;
  }
  if (again) {
    view = (await readView(ctx))();
    c = collectionIn(view, args.collection);
  }
  let search_mode: SearchResult['search_mode'];
  let hits: readonly Hit[];
  if (mode === 'keyword') {
    search_mode = 'exact';
    hits = c.store.keywordSearch({ text: text ?? '', k: args.k, ...filters }).results;
  } else {
    // Every mode but keyword has a vector by now: given, or embedded above.
    const query = defined(vector, 'query vector');
    const found =
      mode === 'hybrid'
        ? (hybridPinned ?? c.store.hybridSearch({ vector: query, text: text ?? '', k: args.k, ...filters }))
        : (pinned ?? c.store.search({ vector: query, k: args.k, ...filters }));
    search_mode = found.search_mode;
    hits = found.results;
  }
  // Built field by field in the answer's order (JSON keeps it), not spread from a shared base: a spread
  // object extended with more fields takes V8's slow path for each of them.
  const answer: SearchResult = {
    as_of_block: view.as_of_block,
    as_of_block_hash: view.as_of_block_hash,
    sync_state: view.sync_state,
    open_collection: c.definition.open,
    mode: semanticMissing === undefined ? mode : 'hybrid',
    search_mode,
    results: renderHits(hits, c.definition, args.include_document === true),
  };
  if (semanticMissing !== undefined) answer.semantic_missing = semanticMissing;
  return answer;
}

type Hit = { record: RecordSummary; score: number; distance?: number };

/**
 * The answer's hits, fields assigned in the answer's order; a module function (not a closure per
 * search) and a packed array (pushed, not mapped: JSON.stringify walks a mapped array's holey elements
 * one lookup at a time).
 */
function renderHits(hits: readonly Hit[], definition: CollectionDefinition, withDocument: boolean) {
  const out: SearchResult['results'] = [];
  for (const hit of hits) {
    const r = hit.record;
    const expires_at_block = expiresAtBlock(r.expiresAt);
    const attributes = typedAttributes(r, definition);
    const rendered: SearchResult['results'][number] =
      hit.distance === undefined
        ? { key: r.key, id: r.id, score: hit.score, expires_at_block, attributes }
        : { key: r.key, id: r.id, distance: hit.distance, score: hit.score, expires_at_block, attributes };
    if (withDocument) rendered.document = r.document;
    out.push(rendered);
  }
  return out;
}
