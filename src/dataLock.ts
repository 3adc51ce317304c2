// One process per data folder (and per devnet state file): two nodes appending to one chain file, or writing
// one snapshot, rewrite each other's history. A lock file taken at start says who holds it; a second process
// is refused with the holder's PID (as a busy port is, src/portCheck.ts), and the lock of a process that is
// no longer running (killed, crashed) is taken over.
import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** The lock file inside a data folder; a file (a devnet state) is locked by `FILE.lock` beside it. */
export const DATA_LOCK_FILE = 'arkivector.lock';

/** Attempts to take a lock whose holder keeps changing under us (each a few file operations). */
const ATTEMPTS = 8;
const BREAK_WAIT_MS = 10;

export class DataInUseError extends Error {
  override name = 'DataInUseError';
  constructor(
    message: string,
    readonly pid: number,
  ) {
    super(message);
  }
}

export interface DataLock {
  /** The lock file. */
  readonly path: string;
  /** The PID of a process no longer running whose lock this start took over. */
  readonly recoveredFrom?: number;
  release(): Promise<void>;
}

interface Holder {
  pid: number;
  /** Tells two locks of one process apart (two nodes started in one process). */
  token: string;
  started: string;
}

/** Locks held by this process, removed at exit should nobody release them (a `process.exit` mid-start). */
const held = new Set<string>();
let exitHook = false;

/** Whether `pid` is a running process (one we may not signal still runs). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock of a data folder or of a file for this process.
 * @param target the folder (created if missing) or the file to lock
 * @param flag how the user picks another one, for the refusal (`--data-dir DIR`)
 * @throws DataInUseError when a running process holds it
 * @example const lock = await lockData({ folder: dataDir }, '--data-dir DIR')
 */
export async function lockData(target: { folder: string } | { file: string }, flag: string): Promise<DataLock> {
  const shown = resolve('folder' in target ? target.folder : target.file);
  const path = 'folder' in target ? join(shown, DATA_LOCK_FILE) : `${shown}.lock`;
  await mkdir(dirname(path), { recursive: true });
  const holder: Holder = { pid: process.pid, token: randomBytes(8).toString('hex'), started: new Date().toISOString() };
  // Written whole under a private name, then linked into place: the lock file is never seen half-written.
  const mine = `${path}.${process.pid}.${holder.token}`;
  await writeFile(mine, `${JSON.stringify(holder)}\n`, { mode: 0o644 });
  let recoveredFrom: number | undefined;
  try {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      if (await linked(mine, path)) {
        held.add(path);
        if (!exitHook) {
          exitHook = true;
          process.once('exit', releaseAllSync);
        }
        return { path, recoveredFrom, release: () => release(path, holder.token) };
      }
      const current = await readHolder(path);
      if (current === 'gone') continue;
      if (current !== undefined && processAlive(current.pid)) {
        const since = current.pid === process.pid ? 'this process' : `PID ${current.pid}`;
        throw new DataInUseError(
          `${shown} is already in use by another arkivector (${since}, since ${current.started}): stop it, or pick another with ${flag}`,
          current.pid,
        );
      }
      // The holder is gone: take its lock over, one taker at a time (a second taker waits on the breaker
      // and then finds the lock taken, not stale).
      if (await breakStale(path, mine, current)) recoveredFrom = current?.pid;
      // Another taker is breaking it: give it the moment it needs.
      else await delay(BREAK_WAIT_MS * (attempt + 1));
    }
    throw new Error(`could not take the lock ${path}: its holder kept changing`);
  } finally {
    await unlink(mine).catch(() => {});
  }
}

/** Hard-links `from` to `to`; false when `to` exists. */
async function linked(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** The lock's holder; `undefined` for a file that does not say (never ours: treated as stale); 'gone' if removed meanwhile. */
async function readHolder(path: string): Promise<Holder | undefined | 'gone'> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
  try {
    const value = JSON.parse(text) as Partial<Holder>;
    if (Number.isSafeInteger(value.pid) && (value.pid as number) > 0 && typeof value.token === 'string')
      return { pid: value.pid as number, token: value.token, started: String(value.started ?? 'an unknown time') };
  } catch {}
  return undefined;
}

/**
 * Removes the stale lock at `path` if it still is the one read (`stale`), under the breaker `path.break`.
 * @returns whether this call removed it
 */
async function breakStale(path: string, mine: string, stale: Holder | undefined): Promise<boolean> {
  const breaker = `${path}.break`;
  if (!(await linked(mine, breaker))) {
    // Another taker is breaking it, or died doing so: its breaker is removed once its process is gone.
    const other = await readHolder(breaker);
    if (other !== 'gone' && (other === undefined || !processAlive(other.pid))) await unlink(breaker).catch(() => {});
    return false;
  }
  try {
    const now = await readHolder(path);
    if (now === 'gone') return false;
    if (now?.token !== stale?.token || now?.pid !== stale?.pid) return false;
    await unlink(path);
    return true;
  } finally {
    await unlink(breaker).catch(() => {});
  }
}

async function release(path: string, token: string): Promise<void> {
  if (!held.delete(path)) return;
  const current = await readHolder(path);
  if (current !== 'gone' && current?.token === token) await unlink(path).catch(() => {});
}

function releaseAllSync(): void {
  for (const path of held) {
    try {
      unlinkSync(path);
    } catch {}
  }
  held.clear();
}

/**
 * The locks of a node: its data folder (snapshots, and the embedded devnet's chain by default), and the
 * embedded devnet's state file when it lives outside that folder.
 */
export async function lockNodeData(
  paths: { dataDir?: string; devnetState?: string },
  onRecovered: (lock: DataLock) => void,
): Promise<DataLock[]> {
  const locks: DataLock[] = [];
  try {
    if (paths.dataDir !== undefined) locks.push(await lockData({ folder: paths.dataDir }, '--data-dir DIR'));
    const { devnetState } = paths;
    if (devnetState !== undefined && (paths.dataDir === undefined || !inside(paths.dataDir, devnetState)))
      locks.push(await lockData({ file: devnetState }, '--devnet-state FILE'));
  } catch (error) {
    for (const lock of locks) await lock.release();
    throw error;
  }
  for (const lock of locks) if (lock.recoveredFrom !== undefined) onRecovered(lock);
  return locks;
}

function inside(folder: string, file: string): boolean {
  const rel = relative(resolve(folder), resolve(file));
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}
