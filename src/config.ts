// Configuration of `arkivector serve`: every flag of docs/configuration.md with its
// ARKIVECTOR_<FLAG> environment twin, parsed and validated once; and those of `arkivector devnet` and
// `arkivector model pull`. Flags win over the environment.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
// Not the indexer's index: every command parses its configuration, and the client commands must not
// load the indexer (and the engine's native addon) to learn three defaults.
import { INDEXER_DEFAULTS, RPC_BUDGET } from '../indexer/defaults.ts';
import { CHAINS, PROTOCOLS, type Protocol } from './chainPresets.ts';
import { DEVNET_DEFAULTS, DEVNET_PROTOCOLS, type DevnetProtocolName } from './devnet/defaults.ts';
import { HTTP_DEFAULT } from './httpDefault.ts';
import { KURADB_ENDPOINT_DEFAULT } from './kuradbEndpoint.ts';
import { type LocalModelRef, MODEL_HUB_DEFAULT, parseLocalModel } from './embedder/local/catalog.ts';
import { withNegativeValues } from './negativeValues.ts';
import { MIN_BLOCK_TIMEOUT_MS_DEFAULT } from './service/limits.ts';

export { CHAINS, type ChainPreset, PROTOCOLS, type Protocol } from './chainPresets.ts';
export { HTTP_DEFAULT };
export { clientEnv, type ClientEnv, DEFAULT_GATEWAY_URL } from './clientConfig.ts';
/** The embedded devnet's state file inside --data-dir. */
export const DEVNET_STATE_FILE = 'devnet.json';
/** One chain file per generation: a kept v1 chain (from before the DB-chain default) is not refused. */
export const DEVNET_STATE_FILES: Record<Protocol, string> = { v1: DEVNET_STATE_FILE, dbchain: 'devnet-dbchain.json' };
/** The generation of the embedded devnet when --protocol is not given. */
export const DEVNET_DEFAULTS_PROTOCOL: Protocol = 'dbchain';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const OPTIONS = {
  rpc: { type: 'string' },
  ws: { type: 'string' },
  chain: { type: 'string' },
  protocol: { type: 'string' },
  'rpc-key': { type: 'string' },
  'rpc-budget': { type: 'string' },
  http: { type: 'string' },
  stdio: { type: 'boolean' },
  'data-dir': { type: 'string' },
  'no-data-dir': { type: 'boolean' },
  collections: { type: 'string' },
  'collection-owner': { type: 'string', multiple: true },
  confirmations: { type: 'string' },
  'live-lag': { type: 'string' },
  'start-block': { type: 'string' },
  embedder: { type: 'string' },
  'embedder-model': { type: 'string' },
  'model-hub': { type: 'string' },
  tokens: { type: 'string' },
  'public-read': { type: 'boolean' },
  compat: { type: 'string' },
  'kuradb-endpoint-file': { type: 'string' },
  'log-level': { type: 'string' },
  'min-block-timeout': { type: 'string' },
  'private-key-file': { type: 'string' },
  'block-time': { type: 'string' },
  'no-demo': { type: 'boolean' },
  'devnet-state': { type: 'string' },
  'devnet-port': { type: 'string' },
  'rate-limit': { type: 'string' },
  'log-format': { type: 'string' },
  'verify-rpc': { type: 'string' },
} as const;

export type FlagName = keyof typeof OPTIONS;
export const FLAG_NAMES = Object.keys(OPTIONS) as FlagName[];
// ARKIVECTOR_TOKENS is the documented list of `scope:secret` pairs (docs/access.md), so the file flag's
// twin takes another name: reading the secrets as a path would print them in the "file not found" error.
const ENV_NAMES: Partial<Record<FlagName, string>> = { tokens: 'ARKIVECTOR_TOKENS_FILE' };
export const envName = (flag: FlagName) => ENV_NAMES[flag] ?? `ARKIVECTOR_${flag.toUpperCase().replace(/-/g, '_')}`;

export interface ServeConfig {
  /** undefined: start the embedded devnet with demo data. */
  rpc?: string;
  ws?: string;
  chainName?: string;
  /** Which generation to follow; `auto` (the default with --rpc) detects it. The embedded devnet's, without. */
  protocol: Protocol | 'auto';
  /** --verify-rpc: the RPC the arkivector_verify tool checks answers against. */
  verifyRpc?: string;
  /** ARKIVECTOR_RPC_KEY / --rpc-key: sent as X-API-KEY (never logged or echoed). */
  rpcKey?: string;
  /** JSON-RPC calls per hour the node stays within (--rpc-budget; 0: none). */
  rpcBudget: number;
  http?: { host: string; port: number };
  stdio: boolean;
  /** Snapshots (and the embedded devnet's chain); none: everything is forgotten on exit. */
  dataDir?: string;
  collections?: string[];
  collectionOwners: Map<string, `0x${string}`>;
  confirmations: number;
  liveLag: number;
  startBlock?: number;
  /** --embedder URL: an OpenAI-compatible embeddings endpoint. */
  embedder?: { url: string; model: string };
  /** --embedder local[:MODEL|:PATH], the default: a model run in this process. Neither: --embedder none. */
  localEmbedder?: LocalModelRef;
  /** Where local models are fetched from (--model-hub); `off`: never fetch. */
  modelHub: string;
  /** The local model cache (`${XDG_CACHE_HOME:-~/.cache}/arkivector/models`). */
  modelCache: string;
  /** ARKIVECTOR_EMBEDDER_KEY: sent to the --embedder endpoint as a bearer key (never logged or echoed). */
  embedderKey?: string;
  tokensFile?: string;
  /** ARKIVECTOR_TOKENS: `scope:secret,…` (parsed by src/http/auth.ts; never echoed). */
  tokensEnv?: string;
  publicRead: boolean;
  /** Requests per minute per caller; undefined: the default for the bind (off on loopback). */
  rateLimitPerMinute?: number;
  /** JSON lines, or human-readable lines for a terminal. */
  logFormat: 'json' | 'pretty';
  compat?: 'kuradb';
  /** --kuradb-endpoint-file: where to write the HTTP listener's base URL for KuraDB's clients. */
  kuradbEndpointFile?: string;
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
  minBlockTimeoutMs: number;
  privateKeyFile?: string;
  /** ARKIVECTOR_ENGINE: the retired engine setting, read only to warn when it asks for something but native. */
  engineSetting?: string;
  /** ARKIVECTOR_PRIVATE_KEY: the signer's key, checked at start (never logged or echoed); wins over the file. */
  privateKey?: string;
  /** Block time of the embedded devnet, in seconds. */
  blockTime: number;
  /** Seconds between the followed chain's blocks: the embedded devnet's, the --chain preset's, or the default. */
  chainBlockTime: number;
  demo: boolean;
  /** Where the embedded devnet keeps its chain (default DATA_DIR/devnet-dbchain.json, or devnet.json for v1); none: forgotten on exit. */
  devnetState?: string;
  /**
   * DATA_DIR/devnet.json when neither --protocol nor --devnet-state is given: a v1 chain kept by a version
   * from before the DB-chain default, which the start follows instead of a new chain beside it.
   */
  keptV1DevnetState?: string;
  /** Port of the embedded devnet; 0 picks a free one. */
  devnetPort: number;
}

const numberFlag = (name: string, min: number, max: number) =>
  z.coerce
    .number({ error: `--${name} must be a number` })
    .min(min, { error: `--${name} must be at least ${min}` })
    .max(max, { error: `--${name} must be at most ${max}` });
const intFlag = (name: string, min: number, max: number) =>
  numberFlag(name, min, max).int({ error: `--${name} must be an integer` });

function parseHostPort(value: string): { host: string; port: number } {
  const [, bracketed, plain, digits] = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value) ?? [];
  const host = bracketed ?? plain;
  if (host === undefined || digits === undefined)
    throw new ConfigError(`--http must be HOST:PORT (for example ${HTTP_DEFAULT}), not ${JSON.stringify(value)}`);
  const port = Number(digits);
  if (port > 65535) throw new ConfigError(`--http port ${port} is out of range`);
  return { host, port };
}

function parseOwners(values: string[]): Map<string, `0x${string}`> {
  const owners = new Map<string, `0x${string}`>();
  for (const item of values.flatMap((v) => v.split(',')).filter(Boolean)) {
    const [, name, owner] = /^([a-z0-9][a-z0-9._-]{0,62})=(0x[0-9a-fA-F]{40})$/.exec(item.trim()) ?? [];
    if (name === undefined || owner === undefined)
      throw new ConfigError(`--collection-owner must be NAME=0xADDRESS, not ${JSON.stringify(item)}`);
    owners.set(name, owner.toLowerCase() as `0x${string}`);
  }
  return owners;
}

function check<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ConfigError(parsed.error.issues[0]?.message ?? 'invalid value');
  return parsed.data;
}

/** Flags whose value may be left out, and the value they then take. */
const OPTIONAL_VALUES: Partial<Record<FlagName, string>> = { 'kuradb-endpoint-file': KURADB_ENDPOINT_DEFAULT };

/** `--flag` without a value (last, or followed by another flag) becomes `--flag=DEFAULT`. */
function withOptionalValues(args: string[]): string[] {
  return args.map((arg, i) => {
    const fallback = OPTIONAL_VALUES[arg.slice(2) as FlagName];
    const next = args[i + 1];
    return fallback !== undefined && arg.startsWith('--') && (next === undefined || next.startsWith('-'))
      ? `${arg}=${fallback}`
      : arg;
  });
}

/**
 * Where the embedded devnet's node keeps its chain and snapshots when no --data-dir is given: the per-user
 * data directory of the XDG base directory spec, `${XDG_DATA_HOME:-~/.local/share}/arkivector`.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME?.startsWith('/') ? env.XDG_DATA_HOME : join(env.HOME || homedir(), '.local', 'share');
  return join(base, 'arkivector');
}

/** Where local models are kept: `${XDG_CACHE_HOME:-~/.cache}/arkivector/models`. */
export function modelCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'arkivector', 'models');
}

/** Parses `serve` arguments and the environment. Throws ConfigError with a message for the user. */
export function parseServeConfig(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  options: { stderrIsTty?: boolean } = { stderrIsTty: process.stderr.isTTY === true },
): ServeConfig {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: withOptionalValues(withNegativeValues(args, OPTIONS)),
      options: OPTIONS,
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const get = (flag: FlagName): string | boolean | string[] | undefined => {
    if (values[flag] !== undefined) return values[flag];
    const fromEnv = env[envName(flag)];
    if (fromEnv === undefined || fromEnv === '') return undefined;
    if (OPTIONS[flag].type === 'boolean') return /^(1|true|yes)$/i.test(fromEnv);
    return 'multiple' in OPTIONS[flag] ? [fromEnv] : fromEnv;
  };
  const str = (flag: FlagName) => get(flag) as string | undefined;

  const chainName = str('chain');
  if (chainName !== undefined && !Object.hasOwn(CHAINS, chainName))
    throw new ConfigError(`--chain must be one of ${Object.keys(CHAINS).join(', ')}, not ${JSON.stringify(chainName)}`);
  const preset = chainName === undefined ? undefined : CHAINS[chainName];
  let rpc = str('rpc');
  if (rpc === undefined && preset) rpc = preset.rpc;
  const protocolFlag = str('protocol');
  if (protocolFlag !== undefined && !(PROTOCOLS as readonly string[]).includes(protocolFlag))
    throw new ConfigError(`--protocol must be one of ${PROTOCOLS.join(', ')}, not ${JSON.stringify(protocolFlag)}`);
  // Without --rpc the embedded devnet runs the live generation unless told otherwise.
  const protocol = (protocolFlag ?? preset?.protocol ?? (rpc === undefined ? DEVNET_DEFAULTS_PROTOCOL : 'auto')) as
    | Protocol
    | 'auto';
  if (rpc === undefined && protocol === 'auto')
    throw new ConfigError('--protocol auto needs --rpc or --chain (the embedded devnet is v1 or dbchain)');
  if (rpc !== undefined) {
    try {
      const url = new URL(rpc);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
    } catch {
      throw new ConfigError('--rpc must be an http(s) URL');
    }
  }
  const verifyRpc = str('verify-rpc');
  if (verifyRpc !== undefined && !/^https?:\/\/[^/]/i.test(verifyRpc))
    throw new ConfigError('--verify-rpc must be an http(s) URL');
  const stdio = get('stdio') === true;
  const httpFlag = str('http');
  const http = httpFlag !== undefined ? parseHostPort(httpFlag) : stdio ? undefined : parseHostPort(HTTP_DEFAULT);
  const collections = str('collections')
    ?.split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  const embedderFlag = str('embedder') ?? 'local';
  const embedderModel = str('embedder-model');
  const isLocal = embedderFlag === 'local' || embedderFlag.startsWith('local:');
  const embedderUrl = embedderFlag !== 'none' && !isLocal ? embedderFlag : undefined;
  if (embedderUrl !== undefined && !/^https?:\/\//i.test(embedderUrl))
    throw new ConfigError(
      `--embedder must be local, local:MODEL, local:PATH, none or an http(s) URL, not ${JSON.stringify(embedderUrl)}`,
    );
  if (embedderUrl && !embedderModel)
    throw new ConfigError('--embedder needs --embedder-model (the model name sent to the /embeddings endpoint)');
  if (embedderFlag === 'none' && embedderModel)
    throw new ConfigError('--embedder-model names the model of --embedder URL or local, not of --embedder none');
  let localEmbedder: LocalModelRef | undefined;
  if (isLocal) {
    try {
      localEmbedder = parseLocalModel(embedderFlag.slice('local:'.length), embedderModel);
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
  }
  const modelHub = str('model-hub') ?? MODEL_HUB_DEFAULT;
  if (modelHub !== 'off' && !/^https?:\/\/[^/]/i.test(modelHub))
    throw new ConfigError(`--model-hub must be an http(s) URL or off, not ${JSON.stringify(modelHub)}`);
  const compat = str('compat');
  if (compat !== undefined && compat !== 'kuradb')
    throw new ConfigError(`--compat must be kuradb, not ${JSON.stringify(compat)}`);
  const kuradbEndpointFile = str('kuradb-endpoint-file');
  if (kuradbEndpointFile !== undefined && compat !== 'kuradb')
    throw new ConfigError('--kuradb-endpoint-file needs --compat kuradb (the file points KuraDB clients at /api)');
  const logLevel = str('log-level') ?? 'info';
  const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
  if (!(levels as readonly string[]).includes(logLevel))
    throw new ConfigError(`--log-level must be one of ${levels.join(', ')}`);
  const startBlock = str('start-block');
  // A flag wins over the other one's environment twin (`npm start` passes --data-dir); two of a kind contradict.
  const dataDirFlag = values['data-dir'] !== undefined;
  const noDataDirFlag = values['no-data-dir'] === true;
  const noDataDir = noDataDirFlag || (!dataDirFlag && get('no-data-dir') === true);
  if (noDataDir && (noDataDirFlag ? dataDirFlag : str('data-dir') !== undefined))
    throw new ConfigError('--no-data-dir and --data-dir contradict each other: pass one');
  // The embedded devnet keeps its chain like `npm start` does (a kept memory is what a user expects);
  // a node following --rpc keeps snapshots only where told.
  const dataDir = noDataDir ? undefined : (str('data-dir') ?? (rpc === undefined ? defaultDataDir(env) : undefined));
  const devnetState = str('devnet-state');
  const devnetPort = str('devnet-port');
  if (rpc !== undefined && (devnetState !== undefined || devnetPort !== undefined))
    throw new ConfigError(
      '--devnet-state and --devnet-port apply to the embedded devnet only (not with --rpc or --chain)',
    );
  if (kuradbEndpointFile !== undefined && http === undefined)
    throw new ConfigError('--kuradb-endpoint-file needs the HTTP listener (--http HOST:PORT)');
  const rateLimit = str('rate-limit');
  const logFormat = str('log-format') ?? (options.stderrIsTty ? 'pretty' : 'json');
  if (logFormat !== 'json' && logFormat !== 'pretty')
    throw new ConfigError(`--log-format must be json or pretty, not ${JSON.stringify(logFormat)}`);
  const blockTime = check(intFlag('block-time', 1, 3600), str('block-time') ?? DEVNET_DEFAULTS.blockTime);
  return {
    rpc,
    ws: str('ws') ?? preset?.ws,
    chainName,
    protocol,
    rpcKey: str('rpc-key'),
    rpcBudget: check(
      intFlag('rpc-budget', 0, RPC_BUDGET.max),
      str('rpc-budget') ??
        (preset?.anonymousCallsPerHour !== undefined && rpc === preset.rpc
          ? str('rpc-key')
            ? RPC_BUDGET.keyed
            : RPC_BUDGET.anonymous
          : 0),
    ),
    verifyRpc,
    http,
    stdio,
    dataDir,
    collections,
    collectionOwners: parseOwners((get('collection-owner') as string[] | undefined) ?? []),
    confirmations: check(intFlag('confirmations', 0, 1000), str('confirmations') ?? INDEXER_DEFAULTS.confirmations),
    liveLag: check(intFlag('live-lag', 0, 100_000), str('live-lag') ?? INDEXER_DEFAULTS.liveLag),
    startBlock:
      startBlock === undefined ? undefined : check(intFlag('start-block', 0, Number.MAX_SAFE_INTEGER), startBlock),
    embedder: embedderUrl && embedderModel ? { url: embedderUrl, model: embedderModel } : undefined,
    localEmbedder,
    modelHub,
    modelCache: modelCacheRoot(env),
    embedderKey: env.ARKIVECTOR_EMBEDDER_KEY,
    tokensFile: str('tokens'),
    tokensEnv: env.ARKIVECTOR_TOKENS === '' ? undefined : env.ARKIVECTOR_TOKENS,
    publicRead: get('public-read') === true,
    rateLimitPerMinute: rateLimit === undefined ? undefined : check(intFlag('rate-limit', 0, 1_000_000), rateLimit),
    logFormat,
    compat: compat as ServeConfig['compat'],
    kuradbEndpointFile,
    logLevel: logLevel as ServeConfig['logLevel'],
    minBlockTimeoutMs:
      check(numberFlag('min-block-timeout', 0, 600), str('min-block-timeout') ?? MIN_BLOCK_TIMEOUT_MS_DEFAULT / 1000) *
      1000,
    privateKeyFile: str('private-key-file'),
    privateKey: env.ARKIVECTOR_PRIVATE_KEY,
    engineSetting: env.ARKIVECTOR_ENGINE,
    blockTime,
    chainBlockTime: rpc === undefined ? blockTime : (preset?.blockTimeSeconds ?? INDEXER_DEFAULTS.blockTimeSeconds),
    demo: get('no-demo') !== true,
    devnetState:
      rpc === undefined
        ? (devnetState ?? (dataDir ? join(dataDir, DEVNET_STATE_FILES[protocol as Protocol]) : undefined))
        : undefined,
    keptV1DevnetState:
      rpc === undefined && protocolFlag === undefined && devnetState === undefined && dataDir
        ? join(dataDir, DEVNET_STATE_FILES.v1)
        : undefined,
    devnetPort: check(intFlag('devnet-port', 0, 65535), devnetPort ?? DEVNET_DEFAULTS.port),
  };
}

/** `arkivector devnet`'s flags; each reads its ARKIVECTOR_<FLAG> twin when not given (an empty one too). */
const DEVNET_OPTIONS = {
  protocol: { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'chain-id': { type: 'string' },
  'block-time': { type: 'string' },
  state: { type: 'string' },
} as const;

export type DevnetFlagName = keyof typeof DEVNET_OPTIONS;
export const devnetEnvName = (flag: DevnetFlagName) => `ARKIVECTOR_${flag.toUpperCase().replace(/-/g, '_')}`;

export interface DevnetConfig {
  protocol: DevnetProtocolName;
  host: string;
  /** 0 picks a free port. */
  port: number;
  chainId: number;
  blockTime: number;
  /** --state FILE: the chain kept across restarts. */
  stateFile?: string;
}

function integerFlag(value: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`--${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(value)}`);
  return n;
}

/** Parses `devnet` arguments and the environment. Throws ConfigError with a message for the user. */
export function parseDevnetConfig(args: string[], env: NodeJS.ProcessEnv = process.env): DevnetConfig {
  let values: Partial<Record<DevnetFlagName, string>>;
  try {
    ({ values } = parseArgs({ args: withNegativeValues(args, DEVNET_OPTIONS), options: DEVNET_OPTIONS, strict: true }));
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  const get = (flag: DevnetFlagName): string | undefined => values[flag] ?? env[devnetEnvName(flag)];
  const protocolName = get('protocol') ?? DEVNET_DEFAULTS.protocol;
  const protocol = DEVNET_PROTOCOLS.find((p) => p === protocolName);
  if (!protocol)
    throw new ConfigError(
      `--protocol must be one of ${DEVNET_PROTOCOLS.join(', ')}, not ${JSON.stringify(protocolName)}`,
    );
  return {
    protocol,
    host: get('host') ?? DEVNET_DEFAULTS.host,
    port: integerFlag(get('port'), 'port', DEVNET_DEFAULTS.port, 0, 65535),
    chainId: integerFlag(get('chain-id'), 'chain-id', DEVNET_DEFAULTS.chainId, 1, 2 ** 48),
    blockTime: integerFlag(get('block-time'), 'block-time', DEVNET_DEFAULTS.blockTime, 0, 3600),
    stateFile: get('state'),
  };
}

export interface ModelPullConfig {
  /** The words after `model`: `pull` and the model's name. */
  positionals: string[];
  /** --model-hub (ARKIVECTOR_MODEL_HUB); `off`: fetching is off. */
  modelHub: string;
  modelCache: string;
}

/** Parses `model` arguments and the environment. Throws ConfigError with a message for the user. */
export function parseModelPullConfig(args: string[], env: NodeJS.ProcessEnv = process.env): ModelPullConfig {
  const options = { 'model-hub': { type: 'string' } } as const;
  let parsed: { values: { 'model-hub'?: string }; positionals: string[] };
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
  return {
    positionals: parsed.positionals,
    modelHub: parsed.values['model-hub'] ?? env.ARKIVECTOR_MODEL_HUB ?? MODEL_HUB_DEFAULT,
    modelCache: modelCacheRoot(env),
  };
}
