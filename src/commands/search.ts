// `arkivector search`: nearest neighbours by text or vector, with filters, from a running gateway.
import { clientEnv } from '../clientConfig.ts';
import { SEARCH_K_MAX, SEARCH_K_MIN } from '../service/limits.ts';
import { type CommandSpec, EXIT, type Io, parseInteger, parseVector, runCommand, UsageError } from './command.ts';
import { describeReport, exitOf } from './verify.ts';

/** Characters of a document shown per result in text output (--json has them whole). */
const SHOWN_DOCUMENT_CHARS = 200;

export const searchSpec: CommandSpec = {
  name: 'search',
  operands: 'COLLECTION [TEXT]',
  summary:
    'Search a collection by TEXT (embedded by the gateway, or BM25 with --mode keyword) or by --vector; ' +
    'results come with their documents.',
  details: [
    'Examples:',
    '  arkivector search notes --vector 1,0.05,0,0 -k 2 --where "topic = \'pets\'"',
    '  arkivector search memories "what does the user drink?"',
    '  arkivector search notes purr --mode keyword',
  ].join('\n'),
  flags: {
    vector: { type: 'string', arg: 'V', description: 'query vector: numbers separated by commas' },
    mode: {
      type: 'string',
      arg: 'MODE',
      description: 'vector (default with --vector), semantic (default with TEXT), keyword (BM25) or hybrid',
    },
    k: {
      type: 'string',
      short: 'k',
      arg: 'N',
      description: `number of results, ${SEARCH_K_MIN}–${SEARCH_K_MAX} (default 10)`,
    },
    where: { type: 'string', arg: 'EXPR', description: 'Arkiv query filter, e.g. "topic = \'pets\' && stars >= 4"' },
    filter: { type: 'string', arg: 'JSON', description: 'JSON filter, e.g. \'{"eq": {"topic": "pets"}}\'' },
    'min-block': { type: 'string', arg: 'N', description: 'answer only once the gateway has indexed block N' },
    verify: {
      type: 'boolean',
      description: 'check the answer against the chain through --rpc (exit 1 refuted, 3 unverifiable)',
    },
    rpc: { type: 'string', arg: 'URL', description: 'the Arkiv RPC --verify trusts (env ARKIVECTOR_RPC)' },
  },
};

interface Hit {
  id: string;
  key: string;
  score: number;
  distance?: number;
  attributes: Record<string, { type: string; value: unknown }>;
  document?: string;
}

export function runSearch(args: string[], io: Io): Promise<number> {
  let verdict: number | undefined;
  const ran = runCommand(searchSpec, args, io, async ({ client, values, positionals, json }) => {
    const [collection, text, ...extra] = positionals;
    if (collection === undefined || extra.length) throw new UsageError('search takes COLLECTION and optionally TEXT');
    if (text === undefined && values.vector === undefined) throw new UsageError('search needs TEXT or --vector');
    const rpc = (values.rpc as string | undefined) ?? clientEnv(io.env).rpc;
    if (values.verify && !rpc) throw new UsageError('--verify needs --rpc URL (the chain to check against)');
    if (values.rpc !== undefined && !values.verify) throw new UsageError('--rpc is the RPC of --verify');
    let filter: unknown;
    if (values.filter !== undefined) {
      try {
        filter = JSON.parse(values.filter as string);
      } catch {
        throw new UsageError('--filter must be JSON');
      }
    }
    const body: Record<string, unknown> = {
      ...(text !== undefined ? { text } : {}),
      ...(values.vector !== undefined ? { vector: parseVector(values.vector as string, 'vector') } : {}),
      ...(values.mode !== undefined ? { mode: values.mode } : {}),
      ...(values.k !== undefined ? { k: parseInteger(values.k as string, 'k', SEARCH_K_MIN, SEARCH_K_MAX) } : {}),
      ...(values.where !== undefined ? { where: values.where } : {}),
      ...(filter !== undefined ? { filter } : {}),
      ...(values['min-block'] !== undefined
        ? { min_block: parseInteger(values['min-block'] as string, 'min-block', 0, 2 ** 53) }
        : {}),
      include_document: true,
    };
    const answer = await client.search(collection, body);
    const report = values.verify ? await verifyPrinted(rpc as string, collection, body, answer) : undefined;
    if (report) verdict = exitOf(report);
    if (json) return void io.stdout.write(`${JSON.stringify(report ? { ...answer, verification: report } : answer)}\n`);
    const results = answer.results as Hit[];
    const lines = [
      `${collection} at block ${answer.as_of_block} (${answer.sync_state}), ${answer.mode} search (${answer.search_mode}), ${results.length} result(s)`,
    ];
    results.forEach((hit, i) => {
      const attributes = Object.entries(hit.attributes ?? {})
        .map(([name, a]) => `${name}=${String(a.value)}`)
        .join(' ');
      lines.push(
        `${String(i + 1).padStart(3)}. ${hit.id}  score ${hit.score.toFixed(4)}${attributes ? `  ${attributes}` : ''}`,
      );
      if (hit.document) {
        const doc = hit.document.replace(/\s+/g, ' ');
        lines.push(`     ${doc.length > SHOWN_DOCUMENT_CHARS ? `${doc.slice(0, SHOWN_DOCUMENT_CHARS)}…` : doc}`);
      }
    });
    io.stdout.write(`${lines.join('\n')}\n${report ? describeReport(report) : ''}`);
  });
  return ran.then((code) => (code === EXIT.ok && verdict !== undefined ? verdict : code));
}

/** The search's own answer checked against the chain (loaded only with --verify). */
async function verifyPrinted(rpc: string, collection: string, request: Record<string, unknown>, answer: object) {
  const { verifyAnswer } = await import('../verify/index.ts');
  return verifyAnswer({ rpc, collection, request, answer: answer as Record<string, unknown> });
}
