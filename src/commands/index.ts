// The client commands of `arkivector` (REST clients of a running gateway) and the help of every command.
// src/cli.ts dispatches here.
import type { FlagName } from '../config.ts';
import { createSpec, listSpec, runCollection, showSpec } from './collection.ts';
import { type CommandSpec, commandHelp, DEFAULT_GATEWAY_URL, type Io, UsageError } from './command.ts';
import { entitiesSpec, runEntities } from './entities.ts';
import { forgetSpec, runForget } from './forget.ts';
import { ingestSpec, runIngest } from './ingest.ts';
import { putSpec, runPut } from './put.ts';
import { runSearch, searchSpec } from './search.ts';
import { runVerify, VERIFY_HELP } from './verify.ts';

export { EXIT } from './command.ts';

export const CLIENT_COMMANDS: Record<string, (args: string[], io: Io) => Promise<number>> = {
  collection: runCollection,
  ingest: runIngest,
  put: runPut,
  search: runSearch,
  entities: runEntities,
  list: runEntities,
  forget: runForget,
  verify: runVerify,
};

/** Runs a client command; resolves to its exit code. */
export function runClientCommand(command: string, args: string[], io?: Partial<Io>): Promise<number> {
  const run = CLIENT_COMMANDS[command];
  if (!run) return Promise.reject(new UsageError(`unknown command ${JSON.stringify(command)}`));
  return run(args, {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    ...io,
  });
}

/** The value placeholder and help of each `serve` flag; a Record, so a new flag without help does not compile. */
const SERVE_FLAG_HELP: Record<FlagName, [arg: string, text: string]> = {
  rpc: ['URL', 'Arkiv JSON-RPC endpoint (default: the embedded devnet)'],
  ws: ['URL', 'WebSocket endpoint for new-block notifications'],
  chain: ['NAME', 'tiramisu (the live DB-chain, id 7738577) or localhost; braga and kaolin are retired v1 networks'],
  protocol: ['GEN', 'dbchain, v1 or auto (default: auto with --rpc; the embedded devnet: dbchain)'],
  'rpc-key': ['KEY', 'RPC key for public endpoints, sent as X-API-KEY (never logged)'],
  http: ['HOST:PORT', 'REST + MCP over HTTP (default 127.0.0.1:8787; not with --stdio alone)'],
  stdio: ['', 'MCP over stdin/stdout'],
  'data-dir': [
    'DIR',
    "snapshots and the embedded devnet's chain (embedded devnet default: $XDG_DATA_HOME/arkivector, else ~/.local/share/arkivector; npm start: .arkivector)",
  ],
  'no-data-dir': ['', 'keep nothing: the chain and snapshots are forgotten on exit'],
  collections: ['A,B', 'index only these collections'],
  'collection-owner': ['NAME=0xADDR', "only this owner's definition counts for NAME (repeatable)"],
  confirmations: ['N', 'follow head - N (default 0)'],
  'live-lag': ['N', 'more than N blocks behind is catching_up (default 5)'],
  'rpc-budget': [
    'N',
    'JSON-RPC calls per hour to stay within, 0 for none (default: 40 on a public --chain without --rpc-key, 3600 with one, none with --rpc)',
  ],
  'start-block': ['N', 'bootstrap at block N'],
  embedder: [
    'SPEC',
    'local (default: all-MiniLM-L6-v2 in this process), local:ORG/NAME, local:PATH, none, or an OpenAI-compatible endpoint URL (key: env ARKIVECTOR_EMBEDDER_KEY)',
  ],
  'embedder-model': ['NAME', 'model sent to an --embedder URL (required there); with local: the name recorded'],
  'model-hub': ['URL', 'where local models are fetched from (default https://huggingface.co; off: never fetch)'],
  tokens: ['FILE', 'bearer tokens (JSON list of {name, sha256, scopes})'],
  'public-read': ['', 'reads without a token; writes then always need a write token'],
  compat: ['kuradb', "also list KuraDB's list_rag and search_rag tools and serve KuraDB's REST API (/api/…)"],
  'kuradb-endpoint-file': [
    '[FILE]',
    "write this node's URL where KuraDB clients look (default ~/.config/kuradb/endpoint)",
  ],
  'log-level': ['LEVEL', 'trace, debug, info (default), warn, error, fatal, silent'],
  'log-format': ['FORMAT', 'json or pretty (default: pretty on a terminal, else json)'],
  'rate-limit': ['N', 'requests per minute per caller (default: off on loopback, else 600; 0: off)'],
  'min-block-timeout': ['S', 'seconds a read waits for min_block (default 10)'],
  'private-key-file': ['FILE', 'signer key file (or env ARKIVECTOR_PRIVATE_KEY)'],
  'block-time': ['S', 'block time of the embedded devnet (default 2)'],
  'no-demo': ['', 'do not seed the embedded devnet with the demo collections'],
  'devnet-state': [
    'FILE',
    'where the embedded devnet keeps its chain (default DATA_DIR/devnet-dbchain.json; v1: devnet.json)',
  ],
  'devnet-port': ['N', 'port of the embedded devnet (default 8545; 0: any free port)'],
  'verify-rpc': [
    'URL',
    'offer arkivector_verify: check answers of other nodes against this RPC (a --stdio node: its own chain)',
  ],
};

/** `serve --help`; reads the flag list of the node's configuration (loaded only for this). */
async function serveHelp(): Promise<string> {
  const { envName, FLAG_NAMES } = await import('../config.ts');
  return [
    'usage: arkivector serve [options]',
    '',
    'Run the gateway: MCP (stdio and/or streamable HTTP) and the REST API, following an Arkiv chain or the',
    'embedded devnet. Every flag also reads ARKIVECTOR_<FLAG> (shown in brackets); flags win.',
    '',
    'options:',
    ...FLAG_NAMES.map((flag) => {
      const [arg, text] = SERVE_FLAG_HELP[flag];
      return `  ${`--${flag}${arg ? ` ${arg}` : ''}`.padEnd(30)} ${text} [${envName(flag)}]`;
    }),
  ].join('\n');
}

export const DEVNET_HELP = `usage: arkivector devnet [options]

Run a local Arkiv JSON-RPC node (HTTP and WebSocket on one port) with ten funded dev accounts.

options:
  --protocol P         the generation it speaks: v1 (op-geth storage transactions) or dbchain (the
                       DB-chain registry at 0x44…44, as Tiramisu runs it) (default v1) [ARKIVECTOR_PROTOCOL]
  --host HOST          address to listen on (default 127.0.0.1) [ARKIVECTOR_HOST]
  --port N             port, 0 for any free one (default 8545) [ARKIVECTOR_PORT]
  --chain-id N         chain id (default 1337) [ARKIVECTOR_CHAIN_ID]
  --block-time S       seconds between interval blocks; 0: only on transactions (default 2) [ARKIVECTOR_BLOCK_TIME]
  --state FILE         keep the chain in FILE across restarts [ARKIVECTOR_STATE]`;

export const MODEL_HELP = `usage: arkivector model pull [NAME] [options]

Fetch a local embedding model (--embedder local:NAME) into the cache ahead of time, so the node embeds
from its first text call, offline. NAME: all-MiniLM-L6-v2 (default), multilingual-e5-small or ORG/NAME.
Progress goes to stderr; the model's folder is printed on stdout.

options:
  --model-hub URL      where models are fetched from (default https://huggingface.co) [ARKIVECTOR_MODEL_HUB]`;

export const USAGE = `usage: arkivector COMMAND [options]   (arkivector COMMAND --help for its flags)

run a node:
  serve                 the gateway (MCP + REST) on a chain or the embedded devnet (npm start)
  devnet                a local Arkiv node alone (v1 or DB-chain)
  model pull [NAME]     fetch a local embedding model into the cache (default all-MiniLM-L6-v2)

talk to a running gateway (REST; --url, default ${DEFAULT_GATEWAY_URL}; token from ARKIVECTOR_TOKEN):
  collection list       list collections
  collection show NAME  show one collection
  collection create NAME [--dim N] [--attr NAME:TYPE …]
                        create a collection
  put COLLECTION [ID]   upsert an entity (--vector, --document, --attr), or JSON lines from stdin
  search COLLECTION [TEXT]
                        search by text or --vector, with --where, -k
  entities COLLECTION   list entities, newest first, with --where, a page at a time or --all
                        (also: list COLLECTION)
  forget COLLECTION --where EXPR [--yes]
                        delete the signer's entities passing a filter (dry run unless --yes)
  ingest PATH… --collection NAME [--create] [--dry-run] [--prune] [--watch]
                        keep a folder of text, Markdown, HTML and PDF in sync with a collection

check an answer against the chain (no gateway asked):
  verify --rpc URL --collection NAME --answer FILE [--request FILE]
                        verified, refuted or unverifiable, check by check (exit 0, 1 or 3)

  help [COMMAND]        this help, or a command's

exit codes of the client commands: 0 ok, 1 the gateway refused (problem), 2 usage error, 3 no gateway answered`;

/** `arkivector help [COMMAND [SUBCOMMAND]]`: the text, or undefined for an unknown command. */
export async function helpFor(words: string[]): Promise<string | undefined> {
  const [command, sub] = words;
  if (command === undefined) return USAGE;
  if (command === 'serve') return serveHelp();
  if (command === 'devnet') return DEVNET_HELP;
  if (command === 'model') return MODEL_HELP;
  if (command === 'verify') return VERIFY_HELP;
  if (!(command in CLIENT_COMMANDS)) return undefined;
  const specs: Record<string, CommandSpec> = {
    put: putSpec,
    ingest: ingestSpec,
    search: searchSpec,
    entities: entitiesSpec,
    list: entitiesSpec,
    forget: forgetSpec,
    'collection list': listSpec,
    'collection show': showSpec,
    'collection create': createSpec,
  };
  if (command === 'collection' && sub === undefined)
    return [listSpec, showSpec, createSpec].map((spec) => commandHelp(spec)).join('\n\n');
  const spec = specs[command === 'collection' ? `collection ${sub}` : command];
  return spec ? commandHelp(spec) : undefined;
}
