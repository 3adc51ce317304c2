// The peers `npm run bench:peers` compares against are installed on demand into a folder of their own
// (gitignored), so the product's own install stays lean. Versions are pinned here, once.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { log, type SystemName } from './common.ts';

/** Exact versions: PGlite 0.3.16 reports PostgreSQL 17.5 with pgvector 0.8.0 (ARCHITECTURE.md §10.6). */
export const PEER_VERSIONS = {
  '@electric-sql/pglite': '0.3.16',
  pg: '8.23.1',
} as const;
export type PeerName = keyof typeof PEER_VERSIONS;

/** The repository's `.bench-peers` folder (gitignored), or `BENCH_PEERS_DIR` to share one install between checkouts. */
export const PEERS_DIR =
  process.env.BENCH_PEERS_DIR ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '.bench-peers');

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

/**
 * The embedded peers, each in a folder of its own under {@link PEERS_DIR} with a generated
 * package.json of exact versions, so one peer's dependencies (LanceDB's apache-arrow range) cannot
 * clash with another's and a failed install costs only its own systems. Never in arkivector's package.json.
 */
export const PEER_FOLDERS = {
  usearch: { usearch: '2.26.2' },
  // LanceDB 0.31's apache-arrow peer range is >=15.0.0 <=18.1.0; the platform package is named so npm
  // installs exactly this build of the native core.
  lancedb: { '@lancedb/lancedb': '0.31.0', '@lancedb/lancedb-linux-x64-gnu': '0.31.0', 'apache-arrow': '18.1.0' },
  libsql: { libsql: '0.5.29' },
  orama: { '@orama/orama': '3.1.18' },
  vectra: { vectra: '0.15.0' },
} as const satisfies Record<string, Record<string, string>>;
export type PeerFolder = keyof typeof PEER_FOLDERS;

/** The folder each system's peer lives in. */
export const FOLDER_OF = {
  usearch: 'usearch',
  'usearch-f16': 'usearch',
  lancedb: 'lancedb',
  libsql: 'libsql',
  orama: 'orama',
  vectra: 'vectra',
} as const satisfies Partial<Record<SystemName, PeerFolder>>;

/** The package.json written into a peer's folder: exact versions only, no install scripts of its own. */
export function peerManifest(folder: PeerFolder): Record<string, unknown> {
  const deps = PEER_FOLDERS[folder];
  // Only names this table pins: a spec like `^1` or `latest` here would be a mistake to refuse early.
  for (const [name, v] of Object.entries(deps))
    if (!/^\d+\.\d+\.\d+$/.test(v)) throw new Error(`${name}@${v}: peers are pinned to exact versions`);
  return {
    name: `arkivector-bench-peer-${folder}`,
    private: true,
    description: 'npm run bench:peers only (test/bench/peers/install.ts)',
    dependencies: deps,
    ...(folder === 'usearch'
      ? { scripts: { [USEARCH_BUILD_SCRIPT]: 'cd node_modules/usearch && node-gyp rebuild -j max' } }
      : {}),
  };
}

function folderVersion(folder: PeerFolder, name: string): string | undefined {
  const file = join(PEERS_DIR, folder, 'node_modules', name, 'package.json');
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version;
}

/** The script of the usearch folder's package.json that compiles its addon. */
const USEARCH_BUILD_SCRIPT = 'build-usearch';

/** The compiled USearch addon (node-gyp's output; the package's loader looks there first). */
const USEARCH_ADDON = join('node_modules', 'usearch', 'build', 'Release', 'usearch.node');

function folderReady(folder: PeerFolder): boolean {
  const pinned = Object.entries(PEER_FOLDERS[folder]) as Array<[string, string]>;
  if (pinned.some(([name, v]) => folderVersion(folder, name) !== v)) return false;
  return folder !== 'usearch' || existsSync(join(PEERS_DIR, folder, USEARCH_ADDON));
}

/**
 * Compiles USearch's addon from its source in place (node-gyp's build/Release, which its loader prefers
 * to the prebuilt one in the package): the build the issue measured, made by npm's bundled node-gyp (npm
 * puts it on the PATH of the script it runs, as for hnswlib-node's and arkivector's own addons) against
 * the headers Node ships beside its binary (as native/build.mjs does), so node-gyp downloads nothing.
 */
function buildUsearch(dir: string): void {
  const env: NodeJS.ProcessEnv = { ...process.env };
  const prefix = join(dirname(process.execPath), '..');
  if (!env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node_api.h')))
    env.npm_config_nodedir = prefix;
  log(`building usearch's addon with node-gyp in ${dir} (a few minutes on 2 cores)`);
  execFileSync('npm', ['run', USEARCH_BUILD_SCRIPT, '--prefix', dir], {
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: BUILD_TIMEOUT_MS,
  });
}

/** A node-gyp build of USearch takes minutes. */
const BUILD_TIMEOUT_MS = 20 * 60_000;

/**
 * Installs a peer's folder unless every pinned package (and USearch's addon) is already there.
 * @throws with npm's failure, or when a package did not land at its pinned version
 */
export function ensurePeerFolder(folder: PeerFolder): void {
  if (folderReady(folder)) return;
  const dir = join(PEERS_DIR, folder);
  const deps = PEER_FOLDERS[folder];
  log(
    `installing ${Object.entries(deps)
      .map(([n, v]) => `${n}@${v}`)
      .join(' ')} into ${dir}`,
  );
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(peerManifest(folder), null, 2)}\n`);
  const t0 = performance.now();
  execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--ignore-scripts'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: INSTALL_TIMEOUT_MS,
  });
  if (folder === 'usearch') buildUsearch(dir);
  if (!folderReady(folder)) throw new Error(`${folder}: the pinned packages did not install into ${dir}`);
  log(`${folder}: installed in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

/**
 * Loads an embedded peer from its folder (never from the product's node_modules).
 * @throws when it is not installed at its pinned version (the message says how to install it)
 */
export function requireFromFolder<T>(folder: PeerFolder, name: string): T {
  const pinned = (PEER_FOLDERS[folder] as Record<string, string>)[name];
  const found = folderVersion(folder, name);
  if (found === undefined || found !== pinned)
    throw new Error(
      `${name}@${pinned} is not installed in ${join(PEERS_DIR, folder)} (found ${found ?? 'nothing'}; npm run bench:peers -- --install)`,
    );
  return createRequire(join(PEERS_DIR, folder, 'package.json'))(name) as T;
}
