// What every client command shares: its declaration (one table drives both `parseArgs` and `--help`, so
// help cannot miss a flag), the global flags (--url, --json, --help), the exit codes scripts rely on, and
// the mapping of failures to them.
import { parseArgs } from 'node:util';
import { GatewayProblemError, GatewayUnreachableError, RestClient } from '../client/restClient.ts';
import { clientEnv, DEFAULT_GATEWAY_URL } from '../clientConfig.ts';
import { withNegativeValues } from '../negativeValues.ts';

/** Exit codes of the client commands (docs/cli.md). */
export const EXIT = {
  ok: 0,
  /** The gateway answered with a problem (a refusal: not found, invalid argument, forbidden…). */
  problem: 1,
  /** The command line (or stdin input) is wrong; nothing was sent for the faulty part. */
  usage: 2,
  /** No arkivector gateway answered: connection refused, timeout, or not an arkivector answer. */
  unreachable: 3,
} as const;

export { DEFAULT_GATEWAY_URL };

export interface FlagSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** Placeholder of the value in help, e.g. `N`. */
  arg?: string;
  description: string;
}

export interface CommandSpec {
  /** `put`, `collection create`. */
  name: string;
  /** Positionals, as shown in usage: `COLLECTION [ID]`. */
  operands: string;
  summary: string;
  /** Extra paragraphs of help. */
  details?: string;
  flags: Record<string, FlagSpec>;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

const GLOBAL_FLAGS: Record<string, FlagSpec> = {
  url: {
    type: 'string',
    arg: 'URL',
    description: `gateway base URL (env ARKIVECTOR_URL; default ${DEFAULT_GATEWAY_URL}). Token: env ARKIVECTOR_TOKEN`,
  },
  json: { type: 'boolean', description: 'print the JSON answer (problems too, on stdout) instead of text' },
  help: { type: 'boolean', short: 'h', description: 'show this help' },
};

export function commandHelp(spec: CommandSpec): string {
  const flags = { ...spec.flags, ...GLOBAL_FLAGS };
  const rows = Object.entries(flags).map(([name, flag]) => {
    const left = `${flag.short ? `-${flag.short}, ` : ''}--${name}${flag.arg ? ` ${flag.arg}` : ''}${flag.multiple ? ' …' : ''}`;
    return `  ${left.padEnd(28)} ${flag.description}`;
  });
  return [
    `usage: arkivector ${spec.name} ${spec.operands} [options]`.replace(/ +/g, ' '),
    '',
    spec.summary,
    ...(spec.details ? ['', spec.details] : []),
    '',
    'options:',
    ...rows,
    '',
    'exit codes: 0 ok, 1 the gateway refused (problem), 2 usage error, 3 no gateway answered',
  ].join('\n');
}

export interface Parsed {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  json: boolean;
  client: RestClient;
}

export function parseCommand(spec: CommandSpec, args: string[], env: NodeJS.ProcessEnv): Parsed | 'help' {
  const flags = { ...spec.flags, ...GLOBAL_FLAGS };
  const options = Object.fromEntries(
    Object.entries(flags).map(([name, f]) => [
      name,
      { type: f.type, ...(f.short ? { short: f.short } : {}), ...(f.multiple ? { multiple: true } : {}) },
    ]),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: withNegativeValues(args, options), options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const values = parsed.values as Parsed['values'];
  if (values.help) return 'help';
  let client: RestClient;
  try {
    client = new RestClient({
      url: (values.url as string | undefined) ?? clientEnv(env).url,
      token: clientEnv(env).token,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return { values, positionals: parsed.positionals, json: values.json === true, client };
}

export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** Runs a command body and turns its failure into a message and an exit code. */
export async function runCommand(
  spec: CommandSpec,
  args: string[],
  io: Io,
  body: (parsed: Parsed) => Promise<void>,
): Promise<number> {
  let json = args.includes('--json');
  try {
    const parsed = parseCommand(spec, args, io.env);
    if (parsed === 'help') {
      io.stdout.write(`${commandHelp(spec)}\n`);
      return EXIT.ok;
    }
    json = parsed.json;
    await body(parsed);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof GatewayProblemError) {
      if (json) io.stdout.write(`${JSON.stringify(error.problem)}\n`);
      else io.stderr.write(`arkivector ${spec.name}: ${describeProblem(error.problem)}\n`);
      return EXIT.problem;
    }
    if (error instanceof GatewayUnreachableError) {
      io.stderr.write(`arkivector ${spec.name}: ${error.message}\n`);
      return EXIT.unreachable;
    }
    if (error instanceof UsageError) {
      io.stderr.write(`arkivector ${spec.name}: ${error.message}\n(see arkivector ${spec.name} --help)\n`);
      return EXIT.usage;
    }
    throw error;
  }
}

function describeProblem(problem: GatewayProblemError['problem']): string {
  const lines = [`the gateway refused: ${problem.code} (${problem.status}): ${problem.detail}`];
  const errors = problem.errors as { path: string; message: string }[] | undefined;
  if (Array.isArray(errors)) for (const e of errors.slice(0, 20)) lines.push(`  ${e.path}: ${e.message}`);
  if (problem.code === 'unauthorized') lines.push('hint: set ARKIVECTOR_TOKEN to a token of this gateway');
  if (problem.code === 'forbidden') lines.push('hint: the token in ARKIVECTOR_TOKEN lacks the scope this needs');
  return lines.join('\n');
}

/** `1,0,0.5` or `[1, 0, 0.5]` → numbers. */
export function parseVector(text: string, flag: string): number[] {
  const parts = text
    .trim()
    .replace(/^\[|\]$/g, '')
    .split(/[\s,]+/)
    .filter(Boolean);
  const numbers = parts.map(Number);
  if (!parts.length || numbers.some((n) => !Number.isFinite(n)))
    throw new UsageError(`--${flag} must be numbers separated by commas (e.g. 1,0,0.5), not ${JSON.stringify(text)}`);
  return numbers;
}

/** `30d`, `12h`, `90m`, `45s`, `1000b` → a TTL object of the REST API. */
export function parseTtl(text: string, flag: string): Record<string, number> {
  const match = /^(\d{1,12})(s|m|h|d|b)$/.exec(text.trim());
  if (!match) throw new UsageError(`--${flag} must be a number and a unit s, m, h, d or b (blocks), like 30d`);
  const unit = { s: 'seconds', m: 'minutes', h: 'hours', d: 'days', b: 'blocks' }[match[2] as 's'];
  return { [unit]: Number(match[1]) };
}

export function parseInteger(text: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`--${flag} must be an integer from ${min} to ${max}, not ${JSON.stringify(text)}`);
  return n;
}

export const WAIT_FLAG: FlagSpec = {
  type: 'string',
  arg: 'WHEN',
  description: 'indexed (default): return once the gateway can search the write; receipt: once mined; none',
};

export function parseWait(value: string | boolean | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value !== 'indexed' && value !== 'receipt' && value !== 'none')
    throw new UsageError(`--wait must be indexed, receipt or none, not ${JSON.stringify(value)}`);
  return value;
}
