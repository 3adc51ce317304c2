// The bench command's one argument parser: `npm run bench -- [SUITE] [options]`. The entry
// (scripts/bench.ts) takes the suite's name off the arguments; each suite declares its options here, and
// a child process a suite forks goes through the same entry with the same suite name.
import { fileURLToPath } from 'node:url';
import { type ParseArgsConfig, parseArgs } from 'node:util';

export const SUITES = [
  'engine',
  'filtered',
  'memory',
  'peers',
  'indexer',
  'rest',
  'soak',
  'rebuild',
  'verify',
] as const;
export type Suite = (typeof SUITES)[number];

/** The bench command's entry, which a suite forks for its child processes. */
export const BENCH_ENTRY = fileURLToPath(new URL('../bench.ts', import.meta.url));

let suite: Suite = 'engine';
let suiteArgs: string[] = process.argv.slice(2);

/** Takes the suite's name (the first argument, unless it is an option; `engine` without one) off `argv`. */
export function selectSuite(argv: string[]): Suite {
  const first = argv[0];
  if (first !== undefined && !first.startsWith('-')) {
    if (!(SUITES as readonly string[]).includes(first))
      throw new Error(`unknown bench suite ${first}: one of ${SUITES.join(', ')}`);
    suite = first as Suite;
    suiteArgs = argv.slice(1);
  } else suiteArgs = argv;
  return suite;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** The suite's options, parsed strictly (a misspelt option stops the run instead of being ignored). */
export function benchArgs<const O extends Options>(options: O) {
  return parseArgs({ args: suiteArgs, options, strict: true, allowPositionals: false }).values;
}

/** The suite this process runs. */
export const currentSuite = (): Suite => suite;

/**
 * The suite's arguments as given, for the one suite whose options parseArgs cannot describe (peers:
 * `--filters` with or without a list).
 */
export const suiteArgv = (): readonly string[] => suiteArgs;

/** Whether `--name` was given on the command line (for defaults that depend on another option). */
export const given = (name: string): boolean => suiteArgs.includes(`--${name}`);

/** The arguments that run this suite again in a child process (with BENCH_ENTRY). */
export const childArgs = (args: string[]): string[] => [suite, ...args];

/** The command line a result file records. */
export const commandLine = (): string => `npm run bench -- ${[suite, ...suiteArgs].join(' ')}`;

/** A numeric option, or `fallback` when it is absent; anything but a finite number stops the run. */
export function numberOption(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new Error(`--${name}: ${value} is not a number`);
  return n;
}
