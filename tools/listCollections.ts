// arkivector_list_collections: the collections this node indexes, in the specification's text format.
import { listCollections, type ListCollectionsResult } from '../src/service/index.ts';
import { listArgs, listResultShape } from '../src/service/schemas.ts';
import { defineTool } from './defineTool.ts';

export function renderCollections(answer: ListCollectionsResult): string {
  const lines = answer.collections.map(
    (c) =>
      `- ${c.name}: ${c.column}, index hnsw ${c.index.opclass}, ${c.stats.live_entities} live entities, sync ${c.sync_state}`,
  );
  const more = answer.next_cursor === null ? [] : [`more: pass cursor ${JSON.stringify(answer.next_cursor)}`];
  return [`${answer.collections.length} collection(s)`, ...lines, ...more].join('\n');
}

export const listCollectionsTool = defineTool({
  name: 'arkivector_list_collections',
  title: 'List vector collections',
  description:
    "Lists the vector collections on this node: name, dimension (halfvec(D)), metric and index, declared attributes (usable in filters), live entity count, and the block the answer reflects (as_of_block) with the node's sync_state. Call this first to learn collection names, dimensions and attribute names. Pages by name: pass next_cursor as cursor for more.",
  input: listArgs,
  output: listResultShape,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  needs: 'read',
  call: (ctx, args) => listCollections(ctx, args),
  render: renderCollections,
});
