// `arkivector put`: upsert one entity from arguments, or many from JSON lines on stdin, in batches that
// fit the gateway's limits (entities per upsert, request bytes). Text without a vector is sent as is: the
// gateway embeds it once it accepts text writes, and its refusal is shown until then.
import { createInterface } from 'node:readline';
import { MAX_REQUEST_BYTES, UPSERT_MAX_ENTITIES } from '../service/limits.ts';
import {
  type CommandSpec,
  type Io,
  type Parsed,
  parseInteger,
  parseTtl,
  parseVector,
  parseWait,
  runCommand,
  UsageError,
  WAIT_FLAG,
} from './command.ts';

/** Most bytes of one stdin line (one entity); a longer line could never fit a request. */
export const PUT_MAX_LINE_BYTES = MAX_REQUEST_BYTES;

export const putSpec: CommandSpec = {
  name: 'put',
  operands: 'COLLECTION [ID]',
  summary:
    'Upsert an entity (ID with --vector and/or --document), or, without ID, JSON lines from stdin: one ' +
    '{"id", "vector"?, "document"?, "attributes"?, "ttl"?} per line.',
  details: [
    `Stdin lines go out in batches of --batch entities (at most ${UPSERT_MAX_ENTITIES}, one transaction each) and`,
    `under ${MAX_REQUEST_BYTES / 1024 / 1024} MiB per request. A malformed line stops the command (exit 2) before its`,
    'batch is sent; the batches before it stay written. A document without a vector asks the gateway to embed',
    'it (a gateway with an embedder that accepts text writes).',
    'Examples:',
    '  arkivector put notes cat --vector 1,0,0,0 --document "Cats purr." --attr topic=pets --attr stars=5',
    '  arkivector put memories tea --document "The user likes green tea."',
    '  printf \'%s\\n\' \'{"id":"a","vector":[1,0,0,0]}\' \'{"id":"b","vector":[0,1,0,0]}\' | arkivector put notes',
  ].join('\n'),
  flags: {
    vector: { type: 'string', arg: 'V', description: 'the vector: numbers separated by commas, e.g. 1,0,0.5' },
    document: {
      type: 'string',
      arg: 'TEXT',
      description: 'the text stored with it (embedded when there is no --vector)',
    },
    attr: {
      type: 'string',
      arg: 'NAME=VALUE',
      multiple: true,
      description: "an attribute value, typed by the collection's declaration (repeatable)",
    },
    ttl: {
      type: 'string',
      arg: 'DURATION',
      description: "lifetime: 30d, 12h, 90m, 45s or 1000b (default: the collection's, else kept until deleted)",
    },
    batch: {
      type: 'string',
      arg: 'N',
      description: `entities per upsert from stdin, 1–${UPSERT_MAX_ENTITIES} (default ${UPSERT_MAX_ENTITIES})`,
    },
    wait: WAIT_FLAG,
  },
};

interface UpsertAnswer {
  results: { id: string; key: string; op: 'create' | 'update' }[];
  tx_hashes: string[];
  block_number: number | null;
}

export function runPut(args: string[], io: Io): Promise<number> {
  return runCommand(putSpec, args, io, async (parsed) => {
    const { positionals, values } = parsed;
    const [collection, id, ...extra] = positionals;
    if (collection === undefined || extra.length) throw new UsageError('put takes COLLECTION and optionally ID');
    const wait = parseWait(values.wait);
    const total: UpsertAnswer = { results: [], tx_hashes: [], block_number: null };
    const send = async (entities: unknown[]) => {
      const answer = (await parsed.client.upsert(collection, { entities, ...(wait ? { wait } : {}) })) as UpsertAnswer;
      total.results.push(...answer.results);
      total.tx_hashes.push(...answer.tx_hashes);
      total.block_number = answer.block_number ?? total.block_number;
    };
    try {
      if (id !== undefined) await send([await entityFromFlags(parsed, collection, id)]);
      else await sendStdin(parsed, io, send);
    } catch (error) {
      if (total.results.length)
        io.stderr.write(
          `arkivector put: ${total.results.length} entities were written before this failure (last block ${total.block_number})\n`,
        );
      throw error;
    }
    if (parsed.json) return void io.stdout.write(`${JSON.stringify(total)}\n`);
    const created = total.results.filter((r) => r.op === 'create').length;
    io.stdout.write(
      `${collection}: ${total.results.length} entities written (${created} created, ${total.results.length - created} updated) in ${total.tx_hashes.length} transaction(s)` +
        `${total.block_number != null ? `, block ${total.block_number} (read it from any node with --min-block ${total.block_number})` : ''}\n`,
    );
  });
}

async function entityFromFlags(parsed: Parsed, collection: string, id: string): Promise<Record<string, unknown>> {
  const { values } = parsed;
  if (values.vector === undefined && values.document === undefined)
    throw new UsageError('put COLLECTION ID needs --vector and/or --document');
  const entity: Record<string, unknown> = { id };
  if (values.vector !== undefined) entity.vector = parseVector(values.vector as string, 'vector');
  if (values.document !== undefined) entity.document = values.document;
  if (values.ttl !== undefined) entity.ttl = parseTtl(values.ttl as string, 'ttl');
  const attrs = (values.attr as string[] | undefined) ?? [];
  if (attrs.length) {
    // Values are typed by the collection's declaration, read from the gateway (which validates them again).
    const declared = ((await parsed.client.getCollection(collection)).attributes ?? {}) as Record<string, string>;
    entity.attributes = Object.fromEntries(attrs.map((item) => typedAttribute(item, declared)));
  }
  return entity;
}

function typedAttribute(item: string, declared: Record<string, string>): [string, string | number | boolean] {
  const at = item.indexOf('=');
  if (at <= 0) throw new UsageError(`--attr must be NAME=VALUE, not ${JSON.stringify(item)}`);
  const name = item.slice(0, at);
  const raw = item.slice(at + 1);
  const type = declared[name];
  if (type === undefined) return [name, raw]; // the gateway names the unknown attribute
  if (type === 'str') return [name, raw];
  if (type === 'bool') {
    if (raw !== 'true' && raw !== 'false') throw new UsageError(`--attr ${name} is bool: true or false`);
    return [name, raw === 'true'];
  }
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--attr ${name} is ${type}: a number`);
  return [name, n];
}

async function sendStdin(parsed: Parsed, io: Io, send: (entities: unknown[]) => Promise<void>): Promise<void> {
  const { values } = parsed;
  for (const flag of ['vector', 'document', 'attr', 'ttl'])
    if (values[flag] !== undefined) throw new UsageError(`--${flag} needs an ID; stdin lines carry their own fields`);
  if (io.stdin.isTTY)
    throw new UsageError(
      'put without ID reads JSON lines from stdin (pipe them in), or give an ID and --vector/--document',
    );
  const batchSize =
    parseInteger(values.batch as string | undefined, 'batch', 1, UPSERT_MAX_ENTITIES) ?? UPSERT_MAX_ENTITIES;
  // Room for the envelope (`{"entities":[…],"wait":"indexed"}`) under the gateway's body limit.
  const byteBudget = MAX_REQUEST_BYTES - 1024;
  let batch: string[] = [];
  let bytes = 0;
  const flush = async () => {
    if (!batch.length) return;
    const parsedBatch = batch.map((line) => JSON.parse(line) as unknown);
    batch = [];
    bytes = 0;
    await send(parsedBatch);
  };
  const lines = createInterface({ input: io.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  let number = 0;
  let entities = 0;
  for await (const line of lines) {
    number++;
    if (!line.trim()) continue;
    const size = Buffer.byteLength(line);
    if (size > PUT_MAX_LINE_BYTES) throw new UsageError(`stdin line ${number} is over ${PUT_MAX_LINE_BYTES} bytes`);
    let entity: unknown;
    try {
      entity = JSON.parse(line);
    } catch {
      throw new UsageError(`stdin line ${number} is not JSON`);
    }
    if (
      typeof entity !== 'object' ||
      entity === null ||
      Array.isArray(entity) ||
      typeof (entity as { id?: unknown }).id !== 'string'
    )
      throw new UsageError(`stdin line ${number} is not an object with a string "id"`);
    if (batch.length >= batchSize || bytes + size + 1 > byteBudget) await flush();
    batch.push(line);
    bytes += size + 1;
    entities++;
  }
  await flush();
  if (entities === 0) throw new UsageError('no entities on stdin');
}
