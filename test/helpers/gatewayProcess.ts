// `arkivector serve` as a child process (the real bin), for tests of what a user runs: waits for the
// printed banner (event-driven, bounded) and stops it with SIGTERM as Ctrl-C would.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defined } from './defined.ts';

export interface GatewayProcess {
  child: ChildProcessWithoutNullStreams;
  /** Everything printed on stdout up to the banner's MCP line. */
  banner: string;
  /** `http://127.0.0.1:PORT` of the REST API. */
  url: string;
  /** Resolves once stderr matches (bounded by `timeoutMs`). */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGTERM, then the exit code and stderr. */
  stop(): Promise<{ code: number | null; stderr: string }>;
}

export async function spawnGateway(args: string[], env: NodeJS.ProcessEnv = {}): Promise<GatewayProcess> {
  // Its own per-user data directory (the default --data-dir of the embedded devnet), never the real one.
  const xdg = await mkdtemp(join(tmpdir(), 'arkivector-xdg-'));
  const child = spawn(process.execPath, ['bin/arkivector.js', 'serve', '--log-level', 'warn', ...args], {
    env: { ...process.env, XDG_DATA_HOME: xdg, ...env },
  });
  child.once('exit', () => void rm(xdg, { recursive: true, force: true }));
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 90 s:\n${stdout}\n${stderr}`)), 90_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /MCP:\s+(http:\/\/127\.0\.0\.1:\d+)\/mcp/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(defined(match[1], 'match[1]'));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${stdout}\n${stderr}`));
    });
  });
  return {
    child,
    banner: stdout,
    url,
    waitForStderr(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(stderr);
          if (!match) return;
          clearTimeout(timer);
          child.stderr.off('data', check);
          resolve(match[0]);
        };
        const timer = setTimeout(() => {
          child.stderr.off('data', check);
          reject(new Error(`stderr did not match ${pattern} within ${timeoutMs} ms:\n${stderr}`));
        }, timeoutMs);
        child.stderr.on('data', check);
        check();
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
      return { code: child.exitCode, stderr };
    },
  };
}
