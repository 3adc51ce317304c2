// Configuration of `arkivector serve`: every flag of the README's "Configuration" with its
// ARKIVECTOR_<FLAG> environment twin, parsed and validated once. Flags win over the environment.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { braga, kaolin, localhost } from '@arkiv-network/sdk/chains';
import { z } from 'zod';
// Not the indexer's index: every command parses its configuration, and the client commands must not
// load the indexer (and the engine's native addon) to learn three defaults.
import { INDEXER_DEFAULTS } from '../indexer/defaults.ts';
import { DEVNET_DEFAULTS } from './devnet/index.ts';
import { HTTP_DEFAULT } from './httpDefault.ts';
import { type LocalModelRef, MODEL_HUB_DEFAULT, parseLocalModel } from './localEmbedder/catalog.ts';
import { MIN_BLOCK_TIMEOUT_MS_DEFAULT } from './service/limits.ts';

export const CHAINS = { braga, kaolin, localhost } as const;
export { HTTP_DEFAULT };
/** The embedded devnet's state file inside --data-dir. */
export const DEVNET_STATE_FILE = 'devnet.json';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const OPTIONS = {
  rpc: { type: 'string' },
  ws: { type: 'string' },
  chain: { type: 'string' },
  http: { type: 'string' },
  stdio: { type: 'boolean' },
  'data-dir': { type: 'string' },
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
  'log-level': { type: 'string' },
  'min-block-timeout': { type: 'string' },
  'private-key-file': { type: 'string' },
  'block-time': { type: 'string' },
  'no-demo': { type: 'boolean' },
  'devnet-state': { type: 'string' },
  'devnet-port': { type: 'string' },
  'rate-limit': { type: 'string' },
  'log-format': { type: 'string' },
} as const;

export type FlagName = keyof typeof OPTIONS;
export const FLAG_NAMES = Object.keys(OPTIONS) as FlagName[];
// ARKIVECTOR_TOKENS is the documented list of `scope:secret` pairs (README, "Access"), so the file flag's
// twin takes another name: reading the secrets as a path would print them in the "file not found" error.
const ENV_NAMES: Partial<Record<FlagName, string>> = { tokens: 'ARKIVECTOR_TOKENS_FILE' };
export const envName = (flag: FlagName) => ENV_NAMES[flag] ?? `ARKIVECTOR_${flag.toUpperCase().replace(/-/g, '_')}`;

export interface ServeConfig {
  /** undefined: start the embedded devnet with demo data. */
  rpc?: string;
  ws?: string;
  chainName?: keyof typeof CHAINS;
  http?: { host: string; port: number };
  stdio: boolean;
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
  tokensFile?: string;
  /** ARKIVECTOR_TOKENS: `scope:secret,…` (parsed by src/http/auth.ts; never echoed). */
  tokensEnv?: string;
  publicRead: boolean;
  /** Requests per minute per caller; undefined: the default for the bind (off on loopback). */
  rateLimitPerMinute?: number;
  /** JSON lines, or human-readable lines for a terminal. */
  logFormat: 'json' | 'pretty';
  compat?: 'kuradb';
  logLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
  minBlockTimeoutMs: number;
  privateKeyFile?: string;
  /** Block time of the embedded devnet, in seconds. */
  blockTime: number;
  demo: boolean;
  /** Where the embedded devnet keeps its chain (default DATA_DIR/devnet.json); none: forgotten on exit. */
  devnetState?: string;
  /** Port of the embedded devnet; 0 picks a free one. */
  devnetPort: number;
}

const intFlag = (name: string, min: number, max: number) =>
  z.coerce
    .number({ error: `--${name} must be a number` })
    .int({ error: `--${name} must be an integer` })
    .min(min, { error: `--${name} must be at least ${min}` })
    .max(max, { error: `--${name} must be at most ${max}` });

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

/** Parses `serve` arguments and the environment. Throws ConfigError with a message for the user. */
export function parseServeConfig(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  options: { stderrIsTty?: boolean } = { stderrIsTty: process.stderr.isTTY === true },
): ServeConfig {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false }));
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
  if (chainName !== undefined && !(chainName in CHAINS))
    throw new ConfigError(`--chain must be one of ${Object.keys(CHAINS).join(', ')}, not ${JSON.stringify(chainName)}`);
  let rpc = str('rpc');
  if (rpc === undefined && chainName) rpc = CHAINS[chainName as keyof typeof CHAINS].rpcUrls.default.http[0];
  if (rpc !== undefined) {
    try {
      const url = new URL(rpc);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error();
    } catch {
      throw new ConfigError('--rpc must be an http(s) URL');
    }
  }
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
  const logLevel = str('log-level') ?? 'info';
  const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
  if (!(levels as readonly string[]).includes(logLevel))
    throw new ConfigError(`--log-level must be one of ${levels.join(', ')}`);
  const startBlock = str('start-block');
  const dataDir = str('data-dir');
  const devnetState = str('devnet-state');
  const devnetPort = str('devnet-port');
  if (rpc !== undefined && (devnetState !== undefined || devnetPort !== undefined))
    throw new ConfigError(
      '--devnet-state and --devnet-port apply to the embedded devnet only (not with --rpc or --chain)',
    );
  const rateLimit = str('rate-limit');
  const logFormat = str('log-format') ?? (options.stderrIsTty ? 'pretty' : 'json');
  if (logFormat !== 'json' && logFormat !== 'pretty')
    throw new ConfigError(`--log-format must be json or pretty, not ${JSON.stringify(logFormat)}`);
  return {
    rpc,
    ws: str('ws'),
    chainName: chainName as ServeConfig['chainName'],
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
    tokensFile: str('tokens'),
    tokensEnv: env.ARKIVECTOR_TOKENS === '' ? undefined : env.ARKIVECTOR_TOKENS,
    publicRead: get('public-read') === true,
    rateLimitPerMinute: rateLimit === undefined ? undefined : check(intFlag('rate-limit', 0, 1_000_000), rateLimit),
    logFormat,
    compat: compat as ServeConfig['compat'],
    logLevel: logLevel as ServeConfig['logLevel'],
    minBlockTimeoutMs:
      check(z.coerce.number().min(0).max(600), str('min-block-timeout') ?? MIN_BLOCK_TIMEOUT_MS_DEFAULT / 1000) * 1000,
    privateKeyFile: str('private-key-file'),
    blockTime: check(intFlag('block-time', 1, 3600), str('block-time') ?? DEVNET_DEFAULTS.blockTime),
    demo: get('no-demo') !== true,
    devnetState:
      rpc === undefined ? (devnetState ?? (dataDir ? join(dataDir, DEVNET_STATE_FILE) : undefined)) : undefined,
    devnetPort: check(intFlag('devnet-port', 0, 65535), devnetPort ?? DEVNET_DEFAULTS.port),
  };
}
