// `arkivector entities COLLECTION` (also `arkivector list COLLECTION`): browse a collection's entities,
// newest first, a page at a time or every page (--all, bounded), each listing from one block.
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, LIST_LIMIT_MIN } from '../service/limits.ts';
import { type CommandSpec, type Io, parseInteger, runCommand, UsageError } from './command.ts';
import { FILTER_FLAGS, filterArguments } from './filterFlags.ts';

/** Pages `--all` follows at most (LIST_LIMIT_MAX entities each). */
export const ENTITIES_ALL_MAX_PAGES = 1_000;
/** Characters of a document shown per entity in text output (--json has them whole). */
const SHOWN_DOCUMENT_CHARS = 200;

export const entitiesSpec: CommandSpec = {
  name: 'entities',
  operands: 'COLLECTION',
  summary:
    'List the live entities of a collection (newest first), optionally only those passing --where/--filter. ' +
    '`arkivector list COLLECTION` is the same command.',
  details: [
    'A page ends with the cursor of the next one (--cursor); every page of one listing answers from the block',
    `of its first page. --all follows the cursors (at most ${ENTITIES_ALL_MAX_PAGES} pages of ${LIST_LIMIT_MAX}); with --json it`,
    'prints one JSON answer per page, one per line.',
    'Examples:',
    '  arkivector entities memories --where "topic = \'trip\'" --documents',
    "  arkivector list memories --all --json | jq -c '.entities[] | {id, document}'",
  ].join('\n'),
  flags: {
    ...FILTER_FLAGS,
    limit: {
      type: 'string',
      short: 'n',
      arg: 'N',
      description: `entities per page, ${LIST_LIMIT_MIN}–${LIST_LIMIT_MAX} (default ${LIST_LIMIT_DEFAULT}; --all: ${LIST_LIMIT_MAX})`,
    },
    cursor: { type: 'string', arg: 'CURSOR', description: 'continue a listing (the cursor a page printed)' },
    order: { type: 'string', arg: 'ORDER', description: 'newest (default) or oldest first' },
    documents: { type: 'boolean', description: 'show the documents' },
    all: { type: 'boolean', description: 'follow the cursors to the last page' },
    'min-block': { type: 'string', arg: 'N', description: 'answer only once the gateway has indexed block N' },
  },
};

interface Listed {
  id: string;
  key: string;
  last_modified_block: number;
  attributes: Record<string, { type: string; value: unknown }>;
  document?: string;
}

export function runEntities(args: string[], io: Io): Promise<number> {
  return runCommand(entitiesSpec, args, io, async ({ client, values, positionals, json }) => {
    const [collection, ...extra] = positionals;
    if (collection === undefined || extra.length) throw new UsageError('entities takes one COLLECTION');
    const order = values.order as string | undefined;
    if (order !== undefined && order !== 'newest' && order !== 'oldest')
      throw new UsageError(`--order must be newest or oldest, not ${JSON.stringify(order)}`);
    const all = values.all === true;
    const params = {
      ...filterArguments(values),
      limit:
        parseInteger(values.limit as string | undefined, 'limit', LIST_LIMIT_MIN, LIST_LIMIT_MAX) ??
        (all ? LIST_LIMIT_MAX : undefined),
      ...(order !== undefined ? { order } : {}),
      include_document: values.documents === true,
      min_block: parseInteger(values['min-block'] as string | undefined, 'min-block', 0, 2 ** 53),
    };
    let cursor = values.cursor as string | undefined;
    for (let page = 0; page < (all ? ENTITIES_ALL_MAX_PAGES : 1); page++) {
      const answer = await client.listEntities(collection, { ...params, ...(cursor !== undefined ? { cursor } : {}) });
      if (json) io.stdout.write(`${JSON.stringify(answer)}\n`);
      else {
        const entities = answer.entities as Listed[];
        const lines =
          page === 0
            ? [
                `${collection} at block ${answer.as_of_block} (${answer.sync_state}): ${answer.total} entit${answer.total === 1 ? 'y' : 'ies'}, ${answer.order} first`,
              ]
            : [];
        for (const e of entities) {
          const attributes = Object.entries(e.attributes ?? {})
            .map(([name, a]) => `${name}=${String(a.value)}`)
            .join(' ');
          lines.push(`- ${e.id}  block ${e.last_modified_block}${attributes ? `  ${attributes}` : ''}`);
          if (e.document !== undefined) {
            const doc = e.document.replace(/\s+/g, ' ');
            lines.push(`    ${doc.length > SHOWN_DOCUMENT_CHARS ? `${doc.slice(0, SHOWN_DOCUMENT_CHARS)}…` : doc}`);
          }
        }
        if (answer.next_cursor !== null && !all) lines.push(`next page: --cursor ${answer.next_cursor}`);
        io.stdout.write(`${lines.join('\n')}\n`);
      }
      cursor = answer.next_cursor ?? undefined;
      if (cursor === undefined) return;
    }
    if (all)
      io.stderr.write(
        `arkivector entities: stopped after ${ENTITIES_ALL_MAX_PAGES} pages; continue with --cursor ${cursor}\n`,
      );
  });
}
