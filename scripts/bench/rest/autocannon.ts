// autocannon is the load generator of `npm run bench -- rest`, not a product dependency: it is installed on
// demand into a folder of its own (git ignores it), so the product's install stays lean. The version is
// pinned here, once.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

export const AUTOCANNON_VERSION = '9.0.0';
/** Where the bench's own tools live (relative to the checkout); another bench keeps its own folder. */
export const BENCH_TOOLS_DIR = '.bench-e2e';

/** What the bench reads of an autocannon result (its latency histogram is in milliseconds). */
export interface AutocannonResult {
  requests: { average: number; total: number; sent: number };
  latency: { p50: number; p90: number; p99: number; average: number; max: number };
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
}

export interface AutocannonRequest {
  method: 'POST' | 'GET';
  path: string;
  headers?: Record<string, string>;
  setupRequest?: (request: { body?: string }) => { body?: string };
}

export type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  requests: AutocannonRequest[];
}) => Promise<AutocannonResult>;

/**
 * Loads the pinned autocannon from `root/.bench-e2e`, installing it there first when missing.
 * @param root the checkout
 * @param log where the install's progress goes
 */
export function loadAutocannon(root: string, log: (line: string) => void): Autocannon {
  const dir = join(root, BENCH_TOOLS_DIR);
  const manifest = join(dir, 'node_modules', 'autocannon', 'package.json');
  const installed = existsSync(manifest)
    ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string }).version
    : undefined;
  if (installed !== AUTOCANNON_VERSION) {
    log(`installing autocannon@${AUTOCANNON_VERSION} into ${BENCH_TOOLS_DIR}/ (once)`);
    execFileSync(
      'npm',
      ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', `autocannon@${AUTOCANNON_VERSION}`],
      { stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 },
    );
  }
  const require = createRequire(join(dir, 'package.json'));
  return require('autocannon') as Autocannon;
}
