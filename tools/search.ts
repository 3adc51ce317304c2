// arkivector_search: nearest neighbours with Arkiv filters; the text lists rank, id, score, attributes
// and (when asked) documents.
import { search, type SearchResult } from '../src/service/index.ts';
import { SEARCH_K_MAX } from '../src/service/limits.ts';
import { searchArgs, searchResultShape } from '../src/service/schemas.ts';
import { defineTool } from './defineTool.ts';

const formatValue = (a: { type: string; value: unknown }) =>
  a.type === 'str' ? JSON.stringify(a.value) : String(a.value);

export function renderSearch(answer: SearchResult): string {
  const head = `${answer.results.length} result(s) as of block ${answer.as_of_block} (sync ${answer.sync_state}, ${answer.search_mode} search${answer.open_collection ? ', open collection: any writer' : ''})`;
  const lines = answer.results.map((r, i) => {
    const attributes = Object.entries(r.attributes)
      .map(([name, a]) => `${name}=${formatValue(a)}`)
      .join(' ');
    const distance = r.distance !== undefined ? ` distance ${r.distance.toFixed(4)}` : '';
    const document = r.document !== undefined ? `\n   ${r.document.replace(/\n/g, '\n   ')}` : '';
    return `${i + 1}. ${r.id} score ${r.score.toFixed(4)}${distance}${attributes ? ` ${attributes}` : ''}${document}`;
  });
  const missing = answer.semantic_missing === undefined ? [] : [`Keyword half only: ${answer.semantic_missing}`];
  return [head, ...missing, ...lines].join('\n');
}

export const searchTool = defineTool({
  name: 'arkivector_search',
  title: 'Search a vector collection',
  description: ({ model }) =>
    `Finds the k nearest entities (k 1-${SEARCH_K_MAX}, default 10) of a collection to a query vector (with the collection's dimension), or to text: ${model ? `this node embeds text with ${model} (mode "semantic", the default for text; "hybrid" adds word matches; "keyword" is BM25 over documents)` : 'this node has no embedder, so text needs mode "keyword" (BM25 over documents); "semantic" and "hybrid" answer embedder_not_configured'}. Filter with where (Arkiv syntax, e.g. topic = str('pets') && stars >= 4, $owner = 0x...) and/or filter (JSON). Filtered searches never return fewer than k results when k entities pass the filter. The answer carries as_of_block; pass min_block to wait until a block you wrote in is indexed.`,
  input: searchArgs,
  output: searchResultShape,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  needs: 'read',
  call: (ctx, args) => search(ctx, args),
  render: renderSearch,
});
