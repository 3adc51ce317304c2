// Native PostgreSQL with pgvector for `npm run bench:peers`, only when the machine has both: detection,
// and a throwaway cluster (initdb, pg_ctl) on 127.0.0.1 in a temp dir, removed at the end. initdb
// refuses to run as root, so as root the cluster runs as an unprivileged account through runuser.

import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import type { Dataset, Job, Row } from './common.ts';
import { log } from './common.ts';
import { knnSql, runPgvector } from './pgvector.ts';

export type PgInstall = {
  bindir: string;
  sharedir: string;
  version: string;
  runAs?: { user: string; uid: number; gid: number };
};
export type Detection = { ok: true; install: PgInstall } | { ok: false; reason: string };

/** Every external command is bounded; a wedged server must not hang the bench. */
const COMMAND_TIMEOUT_MS = 120_000;
/** Accounts tried, in order, for the cluster when the bench runs as root. */
const UNPRIVILEGED_USERS = ['postgres', 'nobody'];
const SERVER_BINARIES = ['initdb', 'pg_ctl', 'postgres'];

function run(cmd: string, args: string[]): string | undefined {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const p = join(dir, name);
    if (dir !== '' && existsSync(p)) return realpathSync(p);
  }
  return undefined;
}

/** Where a server's share dir lies relative to its bin dir (pg_config may describe another install). */
function shareDirsFor(bindir: string): string[] {
  const debian = /^\/usr\/lib\/postgresql\/([^/]+)\/bin$/.exec(bindir);
  return [
    ...(debian ? [`/usr/share/postgresql/${debian[1]}`] : []),
    join(bindir, '..', 'share', 'postgresql'),
    join(bindir, '..', 'share'),
  ];
}

/**
 * Looks for a PostgreSQL server (pg_config, else `postgres`/`initdb` on PATH) and for pgvector in its
 * share dir (`extension/vector.control`).
 * @returns the install, or the reason the native pgvector system is skipped (one line)
 */
export function detectPostgres(): Detection {
  const candidates: Array<{ bindir: string; sharedirs: string[] }> = [];
  const cfg = run('pg_config', ['--bindir', '--sharedir']);
  if (cfg !== undefined) {
    const [bindir, sharedir] = cfg.split('\n');
    if (bindir && sharedir) candidates.push({ bindir, sharedirs: [sharedir, ...shareDirsFor(bindir)] });
  }
  for (const name of ['postgres', 'initdb']) {
    const p = onPath(name);
    if (p !== undefined) candidates.push({ bindir: dirname(p), sharedirs: shareDirsFor(dirname(p)) });
  }
  const server = candidates.find((c) => SERVER_BINARIES.every((b) => existsSync(join(c.bindir, b))));
  if (server === undefined)
    return { ok: false, reason: 'no PostgreSQL server found (no pg_config, postgres or initdb on PATH)' };
  const version = run(join(server.bindir, 'postgres'), ['--version']) ?? 'PostgreSQL (unknown version)';
  const sharedir = server.sharedirs.find((d) => existsSync(join(d, 'extension', 'vector.control')));
  if (sharedir === undefined) {
    const where = server.sharedirs.find((d) => existsSync(join(d, 'extension'))) ?? server.sharedirs[0];
    return {
      ok: false,
      reason: `${version} found in ${server.bindir} but not pgvector (no vector.control in ${join(String(where), 'extension')})`,
    };
  }
  const install: PgInstall = { bindir: server.bindir, sharedir, version };
  if (process.getuid?.() === 0) {
    if (onPath('runuser') === undefined)
      return { ok: false, reason: 'running as root (initdb refuses root) and no runuser to drop privileges' };
    for (const user of UNPRIVILEGED_USERS) {
      const uid = Number(run('id', ['-u', user]));
      const gid = Number(run('id', ['-g', user]));
      if (Number.isInteger(uid) && uid > 0 && Number.isInteger(gid))
        return { ok: true, install: { ...install, runAs: { user, uid, gid } } };
    }
    return {
      ok: false,
      reason: `running as root (initdb refuses root) and none of ${UNPRIVILEGED_USERS.join(', ')} exists`,
    };
  }
  return { ok: true, install };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr !== null ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** A PostgreSQL cluster in a temp dir, listening on 127.0.0.1 only, gone after {@link stop}. */
export class ThrowawayCluster {
  readonly #install: PgInstall;
  readonly dir: string;
  readonly port: number;
  #running = false;

  private constructor(install: PgInstall, dir: string, port: number) {
    this.#install = install;
    this.dir = dir;
    this.port = port;
  }

  /** The superuser the bench connects as (trust auth, loopback only). */
  static readonly USER = 'bench';

  #exec(bin: string, args: string[]): void {
    const path = join(this.#install.bindir, bin);
    const as = this.#install.runAs;
    const [cmd, argv] = as === undefined ? [path, args] : ['runuser', ['-u', as.user, '--', path, ...args]];
    const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: COMMAND_TIMEOUT_MS, cwd: this.dir });
    if (r.status !== 0) {
      const logFile = join(this.dir, 'server.log');
      const serverLog = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '';
      throw new Error(
        `${bin} failed (${r.error?.message ?? `exit ${r.status}`}): ${r.stderr.slice(-2000)}${serverLog}`,
      );
    }
  }

  static async start(install: PgInstall): Promise<ThrowawayCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'arkivector-pg-'));
    if (install.runAs !== undefined) chownSync(dir, install.runAs.uid, install.runAs.gid);
    const cluster = new ThrowawayCluster(install, dir, await freePort());
    try {
      const data = join(dir, 'data');
      cluster.#exec('initdb', ['-D', data, '-U', ThrowawayCluster.USER, '--auth=trust', '-E', 'UTF8', '--locale=C']);
      const options = [
        "-c listen_addresses='127.0.0.1'",
        `-c port=${cluster.port}`,
        `-c unix_socket_directories='${dir}'`,
        '-c shared_buffers=1GB',
        '-c fsync=off',
        '-c jit=off',
        '-c max_parallel_workers_per_gather=0',
      ].join(' ');
      cluster.#exec('pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', join(dir, 'server.log'), '-o', options]);
      cluster.#running = true;
      return cluster;
    } catch (err) {
      cluster.stop();
      throw err;
    }
  }

  /** Writes a file the server can read (for a server-side COPY). */
  writeServerFile(name: string, bytes: Uint8Array): string {
    const p = join(this.dir, name);
    writeFileSync(p, bytes, { mode: 0o644 });
    const as = this.#install.runAs;
    if (as !== undefined) chownSync(p, as.uid, as.gid);
    return p;
  }

  /** Stops the server (fast shutdown) and removes the whole temp dir; safe to call twice. */
  stop(): void {
    if (this.#running) {
      this.#running = false;
      try {
        this.#exec('pg_ctl', ['stop', '-D', join(this.dir, 'data'), '-m', 'fast', '-w', '-t', '60']);
      } catch (err) {
        log(`pgvector: pg_ctl stop failed: ${(err as Error).message}`);
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

type PgClient = {
  connect(): Promise<void>;
  query(q: { text: string; values?: unknown[]; rowMode?: 'array'; name?: string }): Promise<{ rows: unknown[][] }>;
  end(): Promise<void>;
};
type PgModule = { Client: new (config: Record<string, unknown>) => PgClient };

/** The backend's resident set (VmRSS), from /proc; the index build runs in that one process. */
function backendRss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (m === null) throw new Error(`no VmRSS for backend ${pid}`);
  return Number(m[1]) * 1024;
}

/** Native pgvector through `pg` (a named prepared statement per query), in a throwaway cluster. */
export async function runNative(
  job: Job,
  data: Dataset,
  install: PgInstall,
  load: <T>(specifier: string) => T,
): Promise<Row[]> {
  const { Client } = load<PgModule>('pg');
  const cluster = await ThrowawayCluster.start(install);
  const stopOnSignal = (): void => {
    cluster.stop();
    process.exit(1);
  };
  process.once('SIGTERM', stopOnSignal);
  process.once('SIGINT', stopOnSignal);
  const client = new Client({
    host: '127.0.0.1',
    port: cluster.port,
    user: ThrowawayCluster.USER,
    database: 'postgres',
  });
  try {
    await client.connect();
    const pid = Number((await client.query({ text: 'SELECT pg_backend_pid()', rowMode: 'array' })).rows[0]?.[0]);
    const sql = knnSql(job.dim);
    return await runPgvector(job, data, {
      system: 'pgvector',
      session: {
        exec: async (s) => void (await client.query({ text: s })),
        rows: async (s) => (await client.query({ text: s, rowMode: 'array' })).rows,
        knn: async (lit) =>
          (await client.query({ name: 'knn', text: sql, values: [lit], rowMode: 'array' })).rows.map((r) =>
            Number(r[0]),
          ),
      },
      copy: async (stream) => {
        const file = cluster.writeServerFile('bench.copy', stream);
        await client.query({ text: `COPY bench (id, v) FROM '${file}' WITH (FORMAT binary)` });
      },
      memory: async () => backendRss(pid),
    });
  } finally {
    await client.end().catch(() => undefined);
    cluster.stop();
    process.off('SIGTERM', stopOnSignal);
    process.off('SIGINT', stopOnSignal);
  }
}
