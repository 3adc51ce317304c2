// arkivector_list_entities: browse a collection page by page, newest first, each page from one block.
import { listEntities, type ListEntitiesResult } from '../src/service/index.ts';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from '../src/service/limits.ts';
import { listEntitiesArgs, listEntitiesResultShape } from '../src/service/schemas.ts';
import { defineTool } from './defineTool.ts';

/** Characters of a document shown per entity in the text block (structuredContent has them whole). */
const SHOWN_DOCUMENT_CHARS = 200;

export function renderListEntities(answer: ListEntitiesResult): string {
  const lines = [
    `${answer.entities.length} of ${answer.total} entities (${answer.order} first) as of block ${answer.as_of_block}, sync ${answer.sync_state}`,
  ];
  for (const e of answer.entities) {
    const attributes = Object.entries(e.attributes)
      .map(([name, a]) => `${name}=${a.type === 'str' ? JSON.stringify(a.value) : String(a.value)}`)
      .join(' ');
    lines.push(`- ${e.id} (block ${e.last_modified_block}, key ${e.key})${attributes ? ` ${attributes}` : ''}`);
    if (e.document !== undefined) {
      const doc = e.document.replace(/\s+/g, ' ');
      lines.push(`  ${doc.length > SHOWN_DOCUMENT_CHARS ? `${doc.slice(0, SHOWN_DOCUMENT_CHARS)}…` : doc}`);
    }
  }
  lines.push(
    answer.next_cursor === null
      ? 'no more pages'
      : `more: call again with cursor ${JSON.stringify(answer.next_cursor)}`,
  );
  return lines.join('\n');
}

export const listEntitiesTool = defineTool({
  name: 'arkivector_list_entities',
  title: 'List entities',
  description: `Lists the live entities of a collection (e.g. every memory about a topic), newest first by default, ${LIST_LIMIT_DEFAULT} per page (limit up to ${LIST_LIMIT_MAX}), optionally only those passing where (Arkiv syntax) and/or filter (JSON). To read the next page pass next_cursor as cursor with the same where, filter and order: every page of one listing answers from the first page's as_of_block.`,
  input: listEntitiesArgs,
  output: listEntitiesResultShape,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  needs: 'read',
  call: (ctx, args) => listEntities(ctx, args),
  render: renderListEntities,
});
