// `arkivector devnet` as a child process, for benches that measure the node and must not share its
// thread with the chain it follows (a real Arkiv node is another process, usually another machine).
// Ready when its banner names the URL (event-driven, bounded); stopped with SIGTERM.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const BANNER_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;
const STDERR_TAIL_CHARS = 16_384;
const BIN = fileURLToPath(new URL('../../bin/arkivector.js', import.meta.url));

export interface DevnetProcess {
  url: string;
  chainId: number;
  /** The first dev account's key (the devnet's test mnemonic, funded; never a real key). */
  privateKey: `0x${string}`;
  pid: number | undefined;
  /** SIGTERM, then waits for the exit (SIGKILL after 30 s). */
  stop(): Promise<void>;
}

/**
 * Starts `node bin/arkivector.js devnet --port 0 --block-time N` and resolves once it listens.
 * @param blockTime seconds per block; 0 mines a block per transaction
 * @param protocol the generation (`dbchain`, `v1`); absent: the devnet's default
 * @example const devnet = await spawnDevnet(0); … await devnet.stop();
 */
export async function spawnDevnet(blockTime = 0, protocol?: string): Promise<DevnetProcess> {
  const args = [BIN, 'devnet', '--port', '0', '--block-time', String(blockTime)];
  if (protocol) args.push('--protocol', protocol);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  // Only stderr is kept for error messages: stdout lists the dev accounts' keys.
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-STDERR_TAIL_CHARS);
  });
  try {
    const banner = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`devnet: no banner within ${BANNER_TIMEOUT_MS / 1000} s`)),
        BANNER_TIMEOUT_MS,
      );
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (/Listening:\s+http:\/\/\S+/.test(stdout)) {
          clearTimeout(timer);
          resolve(stdout);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`devnet exited with ${code}`));
      });
    });
    child.stdout.resume();
    const url = /Listening:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1];
    const chainId = Number(/Chain id:\s+(\d+)/.exec(banner)?.[1]);
    const privateKey = /Private keys\n=+\n\(0\) (0x[0-9a-f]{64})/.exec(banner)?.[1] as `0x${string}` | undefined;
    if (!url || !Number.isInteger(chainId) || !privateKey) throw new Error('devnet: banner not understood');
    return {
      url,
      chainId,
      privateKey,
      pid: child.pid,
      async stop() {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${stderr}`);
  }
}
