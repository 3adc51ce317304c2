// The peers `npm run bench:peers` compares against are installed on demand into a folder of their own
// (gitignored), so the product's own install stays lean. Versions are pinned here, once.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { log } from './common.ts';

/** Exact versions: PGlite 0.3.16 reports PostgreSQL 17.5 with pgvector 0.8.0 (ARCHITECTURE.md §10.6). */
export const PEER_VERSIONS = {
  '@electric-sql/pglite': '0.3.16',
  pg: '8.23.1',
} as const;
export type PeerName = keyof typeof PEER_VERSIONS;

/** The repository's `.bench-peers` folder. */
export const PEERS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '.bench-peers');

/** npm's own bound on one install; a hung registry must not hang the bench. */
const INSTALL_TIMEOUT_MS = 5 * 60_000;

function installedVersion(name: PeerName): string | undefined {
  const file = join(PEERS_DIR, 'node_modules', name, 'package.json');
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version;
}

/**
 * Installs the pinned peers into {@link PEERS_DIR} unless they are all there at their pinned version.
 * All are installed in one `npm install`, so a later one cannot prune an earlier one.
 */
export function ensurePeers(): void {
  const missing = (Object.keys(PEER_VERSIONS) as PeerName[]).filter((p) => installedVersion(p) !== PEER_VERSIONS[p]);
  if (missing.length === 0) return;
  const specs = Object.entries(PEER_VERSIONS).map(([name, version]) => `${name}@${version}`);
  log(`installing peers into ${PEERS_DIR}: ${specs.join(' ')}`);
  mkdirSync(PEERS_DIR, { recursive: true });
  execFileSync(
    'npm',
    ['install', '--prefix', PEERS_DIR, '--no-save', '--no-audit', '--no-fund', '--ignore-scripts', ...specs],
    { stdio: ['ignore', 'inherit', 'inherit'], timeout: INSTALL_TIMEOUT_MS },
  );
  for (const p of missing) {
    if (installedVersion(p) !== PEER_VERSIONS[p])
      throw new Error(`${p}@${PEER_VERSIONS[p]} did not install into ${PEERS_DIR}`);
  }
}

/** Loads a peer (or one of its subpath exports) from {@link PEERS_DIR}, never from the product's node_modules. */
export function requirePeer<T>(specifier: string): T {
  return createRequire(join(PEERS_DIR, 'package.json'))(specifier) as T;
}
