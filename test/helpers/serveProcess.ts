// `arkivector serve` as a child process for the benches (rest, soak): the real bin, started as a user starts
// it, found ready by its printed banner (event-driven, bounded), stopped with SIGTERM as Ctrl-C would
// (so a --cpu-prof profile gets written). Every child is registered so that the bench can kill what is
// left on failure or SIGINT.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

const STDERR_TAIL_CHARS = 16_384;
const BANNER_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;
/** How long a started node may take to report `live` (a loaded machine shows `stalled` for a while). */
const LIVE_TIMEOUT_MS = 120_000;
const LIVE_POLL_MS = 200;

const children = new Set<ChildProcess>();

/** Kills every child still running (SIGKILL: this is the failure path). */
export function killChildren(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
}

/**
 * Resolves once the node at `url` answers /readyz with 200 (`sync_state` live): under load a node's first
 * chain reads can time out, and it reports `stalled` (then refuses reads) until one succeeds.
 * @throws when it is not live within 120 s, naming the last state it reported
 */
export async function waitLive(url: string, timeoutMs = LIVE_TIMEOUT_MS): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = 'no answer';
  for (let round = 0; round < Math.ceil(timeoutMs / LIVE_POLL_MS) + 1; round++) {
    try {
      const response = await fetch(`${url}/readyz`);
      const body = (await response.json()) as { sync_state?: string };
      if (response.status === 200) return;
      last = String(body.sync_state);
    } catch (error) {
      last = (error as Error).message;
    }
    if (performance.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, LIVE_POLL_MS));
  }
  throw new Error(`the node at ${url} was not live within ${timeoutMs / 1000} s (last: ${last})`);
}

export interface ServeProcess {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  pid: number | undefined;
  /** The last 16 KiB of stderr (logs), for error messages. */
  stderrTail(): string;
  /** SIGTERM, then waits for the exit (SIGKILL after 30 s). */
  stop(): Promise<number | null>;
}

/**
 * Starts `node [nodeArgs] bin/arkivector.js serve [args]` in `cwd` and resolves once it printed its banner.
 * @param env added to the environment (the signer key goes here, never in args)
 */
export async function spawnServe(options: {
  cwd: string;
  args: string[];
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), 'bin/arkivector.js', 'serve', ...options.args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-STDERR_TAIL_CHARS);
  });
  let stdout = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no banner within ${BANNER_TIMEOUT_MS / 1000} s`)),
        BANNER_TIMEOUT_MS,
      );
      child.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /MCP:\s+(http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(stdout);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`serve exited with ${code}`));
      });
    });
    child.stdout?.resume();
    return {
      url,
      pid: child.pid,
      stderrTail: () => stderr,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = once(child, 'exit');
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
          await exited;
          clearTimeout(timer);
        }
        children.delete(child);
        return child.exitCode;
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    children.delete(child);
    throw new Error(`${(error as Error).message}\n${stdout}\n${stderr}`);
  }
}
