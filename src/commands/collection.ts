// `arkivector collection list|show|create`: collections of a running gateway.
import type { RestClient } from '../client/restClient.ts';
import { COLLECTIONS_LIMIT_MAX } from '../service/limits.ts';
import {
  type CommandSpec,
  commandHelp,
  EXIT,
  type Io,
  parseInteger,
  parseTtl,
  parseWait,
  runCommand,
  UsageError,
  WAIT_FLAG,
} from './command.ts';

const MIN_BLOCK_FLAG = {
  type: 'string',
  arg: 'N',
  description: 'answer only once the gateway has indexed block N (read your own write from another node)',
} as const;

export const listSpec: CommandSpec = {
  name: 'collection list',
  operands: '',
  summary: 'List the collections the gateway indexes, with their dimension, metric and live entities.',
  flags: { 'min-block': MIN_BLOCK_FLAG },
};

export const showSpec: CommandSpec = {
  name: 'collection show',
  operands: 'NAME',
  summary: 'Show one collection: its definition, owner, writers and statistics.',
  flags: { 'min-block': MIN_BLOCK_FLAG },
};

export const createSpec: CommandSpec = {
  name: 'collection create',
  operands: 'NAME',
  summary: 'Create a collection (the gateway signs it: it needs a signer and, with tokens, the write scope).',
  details:
    'Example: arkivector collection create memories --dim 768 --attr topic:str --attr stars:i32 --embedder-model nomic-embed-text',
  flags: {
    dim: {
      type: 'string',
      arg: 'N',
      description: "vector dimension (the embedding model's, e.g. 768 for nomic-embed-text)",
    },
    metric: { type: 'string', arg: 'M', description: 'cosine (default), l2 or ip' },
    attr: {
      type: 'string',
      arg: 'NAME:TYPE',
      multiple: true,
      description: 'declare an attribute; TYPE is str, i32, uint, f32 or bool (repeatable)',
    },
    open: { type: 'boolean', description: "anyone may write vectors (default: only the owner and --writer's)" },
    writer: { type: 'string', arg: '0xADDR', multiple: true, description: 'an address allowed to write (repeatable)' },
    description: { type: 'string', arg: 'TEXT', description: 'what the collection holds' },
    'default-ttl': {
      type: 'string',
      arg: 'DURATION',
      description:
        'lifetime of vectors written without a ttl: 30d, 12h, 90m, 45s or 1000b (blocks); default: kept until deleted',
    },
    ttl: {
      type: 'string',
      arg: 'DURATION',
      description: 'lifetime of the definition itself (default: kept until deleted)',
    },
    'embedder-model': {
      type: 'string',
      arg: 'NAME',
      description: 'record the embedding model, so text from another model is refused',
    },
    wait: WAIT_FLAG,
  },
};

const one = (positionals: string[], what: string, spec: CommandSpec): string => {
  const [only, ...extra] = positionals;
  if (only === undefined || extra.length)
    throw new UsageError(`${spec.name} takes one ${what}, not ${positionals.length ? positionals.join(' ') : 'none'}`);
  return only;
};

interface CollectionView {
  name: string;
  dim: number;
  metric: string;
  column: string;
  index: { opclass: string; m: number; ef_construction: number; ef_search: number };
  attributes: Record<string, string>;
  open: boolean;
  owner: string;
  writers: string[];
  description?: string;
  embedder?: { model: string };
  definition_key?: string;
  stats: { live_entities: number; rejected: number; shadowed: number };
  sync_state: string;
  as_of_block: number;
}

const summary = (c: CollectionView) =>
  `${c.name}: ${c.column ?? `dim ${c.dim}`}, ${c.metric}, ${c.stats.live_entities} live entities${c.embedder ? `, embedder ${c.embedder.model}` : ''}`;

/** Pages `collection list` reads at most: 500,000 collections, far above what a node tracks by default. */
export const LIST_PAGES_MAX = 1_000;

/**
 * Every page of the listing, as one answer: the later pages are asked for at least the first page's block,
 * and the answer reports the last page's block and state (the newest the list reflects).
 */
async function listAll(client: RestClient, minBlock: number | undefined) {
  const collections: CollectionView[] = [];
  let page = await client.listCollections(minBlock, { limit: COLLECTIONS_LIMIT_MAX });
  for (let pages = 1; ; pages++) {
    collections.push(...(page.collections as CollectionView[]));
    if (!page.next_cursor) break;
    if (pages >= LIST_PAGES_MAX) throw new Error(`collection list: more than ${LIST_PAGES_MAX} pages; stopped`);
    page = await client.listCollections(Math.max(minBlock ?? 0, page.as_of_block as number), {
      limit: COLLECTIONS_LIMIT_MAX,
      cursor: page.next_cursor as string,
    });
  }
  return { ...page, collections, next_cursor: null } as {
    collections: CollectionView[];
    as_of_block: number;
    sync_state: string;
  };
}

export function runCollection(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'list')
    return runCommand(listSpec, rest, io, async ({ client, values, positionals, json }) => {
      if (positionals.length) throw new UsageError('collection list takes no operands');
      const answer = await listAll(client, parseInteger(values['min-block'] as string, 'min-block', 0, 2 ** 53));
      if (json) return void io.stdout.write(`${JSON.stringify(answer)}\n`);
      const lines = answer.collections.map((c) => `- ${summary(c)}`);
      io.stdout.write(
        `${answer.collections.length} collection(s) at block ${answer.as_of_block} (${answer.sync_state})\n${lines.join('\n')}${lines.length ? '\n' : ''}`,
      );
    });
  if (sub === 'show')
    return runCommand(showSpec, rest, io, async ({ client, values, positionals, json }) => {
      const name = one(positionals, 'NAME', showSpec);
      const c = (await client.getCollection(
        name,
        parseInteger(values['min-block'] as string, 'min-block', 0, 2 ** 53),
      )) as CollectionView;
      if (json) return void io.stdout.write(`${JSON.stringify(c)}\n`);
      const attributes = Object.entries(c.attributes ?? {}).map(([k, t]) => `${k}:${t}`);
      const rows: [string, string][] = [
        ['name', c.name],
        [
          'vectors',
          `${c.column} (${c.metric}), index hnsw ${c.index.opclass} m=${c.index.m} ef_search=${c.index.ef_search}`,
        ],
        ['attributes', attributes.join(' ') || '(none)'],
        [
          'access',
          c.open ? 'open: anyone may write' : `closed: owner${c.writers.length ? ` and ${c.writers.join(', ')}` : ''}`,
        ],
        ['owner', c.owner],
        ...(c.description ? [['description', c.description] as [string, string]] : []),
        ...(c.embedder ? [['embedder', c.embedder.model] as [string, string]] : []),
        ['entities', `${c.stats.live_entities} live, ${c.stats.rejected} rejected, ${c.stats.shadowed} shadowed`],
        ['as of', `block ${c.as_of_block} (${c.sync_state})`],
      ];
      io.stdout.write(`${rows.map(([k, v]) => `${k.padEnd(12)} ${v}`).join('\n')}\n`);
    });
  if (sub === 'create')
    return runCommand(createSpec, rest, io, async ({ client, values, positionals, json }) => {
      const name = one(positionals, 'NAME', createSpec);
      const attributes: Record<string, string> = {};
      for (const item of (values.attr as string[] | undefined) ?? []) {
        const [, name, type] = /^([^:=\s]+)[:=](\w+)$/.exec(item) ?? [];
        if (name === undefined || type === undefined)
          throw new UsageError(`--attr must be NAME:TYPE (e.g. topic:str), not ${JSON.stringify(item)}`);
        attributes[name] = type;
      }
      const body: Record<string, unknown> = {
        name,
        metric: (values.metric as string | undefined) ?? 'cosine',
        ...(values.dim !== undefined ? { dim: parseInteger(values.dim as string, 'dim', 1, 1_000_000) } : {}),
        ...(Object.keys(attributes).length ? { attributes } : {}),
        ...(values.open ? { open: true } : {}),
        ...(values.writer ? { writers: values.writer } : {}),
        ...(values.description !== undefined ? { description: values.description } : {}),
        ...(values['default-ttl'] !== undefined
          ? { default_ttl: parseTtl(values['default-ttl'] as string, 'default-ttl') }
          : {}),
        ...(values.ttl !== undefined ? { ttl: parseTtl(values.ttl as string, 'ttl') } : {}),
        ...(values['embedder-model'] !== undefined ? { embedder: { model: values['embedder-model'] } } : {}),
        ...(values.wait !== undefined ? { wait: parseWait(values.wait) } : {}),
      };
      const answer = await client.createCollection(body);
      if (json) return void io.stdout.write(`${JSON.stringify(answer)}\n`);
      io.stdout.write(
        `created collection ${answer.name} (definition ${answer.key})${answer.block_number != null ? ` in block ${answer.block_number}` : ''}\n`,
      );
    });
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    io.stdout.write(`${[listSpec, showSpec, createSpec].map(commandHelp).join('\n\n')}\n`);
    return Promise.resolve(sub === undefined ? EXIT.usage : EXIT.ok);
  }
  io.stderr.write(`arkivector collection: unknown subcommand ${JSON.stringify(sub)}: use list, show or create\n`);
  return Promise.resolve(EXIT.usage);
}
