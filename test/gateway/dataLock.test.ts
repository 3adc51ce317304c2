// One node per data folder: a second `arkivector serve` on a folder (or a devnet state file) a running node
// holds is refused at once, naming the holder's PID, before it starts a devnet or writes anything; the lock
// of a node killed with SIGKILL is taken over by the next start.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DATA_LOCK_FILE, DataInUseError, lockData } from '../../src/dataLock.ts';
import { spawnGateway } from '../helpers/gatewayProcess.ts';

/** `arkivector serve ARGS` to its exit (bounded: killed after 60 s, which fails the test). */
async function serveToExit(args: string[]) {
  const xdg = await mkdtemp(join(tmpdir(), 'arkivector-xdg-'));
  const child = spawn(process.execPath, ['bin/arkivector.js', 'serve', '--log-level', 'info', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, XDG_DATA_HOME: xdg },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  await rm(xdg, { recursive: true, force: true });
  return { code: code as number | null, stdout, stderr };
}

const args = (dir: string, ...more: string[]) => [
  '--http',
  '127.0.0.1:0',
  '--devnet-port',
  '0',
  '--no-demo',
  '--embedder',
  'none',
  '--data-dir',
  dir,
  ...more,
];

test('a second node on a held data folder is refused with the holder’s PID; a SIGKILLed holder’s lock is taken over', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-lock-'));
  try {
    const first = await spawnGateway(args(dir));
    let firstPid: number;
    try {
      firstPid = first.child.pid as number;
      const second = await serveToExit(args(dir));
      assert.equal(second.code, 1, second.stderr);
      const line = JSON.parse(second.stderr.trim().split('\n').at(-1) as string) as { level: string; msg: string };
      assert.equal(line.level, 'fatal');
      assert.match(
        line.msg,
        new RegExp(
          `^${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is already in use by another arkivector \\(PID ${firstPid}, since `,
        ),
      );
      assert.match(line.msg, /: stop it, or pick another with --data-dir DIR$/);
      // The README's sentence (Installing the `arkivector` command), with this test's folder and PID.
      const promised = (
        /`arkivector: (DIR is already in use[^`]*)`/.exec(await readFile('README.md', 'utf8'))?.[1] ?? ''
      )
        .replace(/\s+/g, ' ')
        .split(/DIR|N|…/);
      assert.equal(promised.length, 5, 'README sentence with DIR, PID N, … and --data-dir DIR');
      const [, afterDir = '', afterPid = '', afterSince = ''] = promised;
      assert.ok(line.msg.startsWith(`${dir}${afterDir}${firstPid}${afterPid}`), line.msg);
      assert.ok(line.msg.endsWith(`${afterSince}DIR`), line.msg);
      // Nothing was started: no devnet, no banner.
      assert.doesNotMatch(second.stderr, /embedded devnet started/);
      assert.equal(second.stdout, '');
      // The first node is unharmed.
      assert.equal((await fetch(`${first.url}/healthz`)).status, 200);

      const exited = once(first.child, 'exit');
      first.child.kill('SIGKILL');
      await exited;
    } finally {
      await first.stop();
    }
    // The killed node's lock is still there, naming a process that no longer runs.
    const left = JSON.parse(await readFile(join(dir, DATA_LOCK_FILE), 'utf8')) as { pid: number };
    assert.equal(left.pid, firstPid);

    const third = await spawnGateway(args(dir));
    try {
      await third.waitForStderr(
        new RegExp(`"pid":${firstPid},"msg":"took over the lock of a process no longer running"`),
      );
      const now = JSON.parse(await readFile(join(dir, DATA_LOCK_FILE), 'utf8')) as { pid: number };
      assert.equal(now.pid, third.child.pid);
    } finally {
      const { code, stderr } = await third.stop();
      assert.equal(code, 0, stderr);
    }
    assert.ok(!existsSync(join(dir, DATA_LOCK_FILE)), 'a node that stops releases its lock');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a --devnet-state file outside the data folder is locked too', async () => {
  const root = await mkdtemp(join(tmpdir(), 'arkivector-lock-state-'));
  const state = join(root, 'shared-chain.json');
  try {
    const first = await spawnGateway(args(join(root, 'a'), '--devnet-state', state));
    try {
      const second = await serveToExit(args(join(root, 'b'), '--devnet-state', state));
      assert.equal(second.code, 1, second.stderr);
      assert.match(
        second.stderr,
        new RegExp(
          `shared-chain\\.json is already in use by another arkivector \\(PID ${first.child.pid}, .*--devnet-state FILE`,
        ),
      );
      assert.doesNotMatch(second.stderr, /embedded devnet started/);
    } finally {
      const { code, stderr } = await first.stop();
      assert.equal(code, 0, stderr);
    }
    assert.ok(!existsSync(`${state}.lock`));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('lockData: one holder per folder within a process too; released, it can be taken again; a lock naming no process is stale', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-lock-unit-'));
  try {
    const lock = await lockData({ folder: dir }, '--data-dir DIR');
    await assert.rejects(
      lockData({ folder: dir }, '--data-dir DIR'),
      (error: unknown) =>
        error instanceof DataInUseError && error.pid === process.pid && /this process/.test(error.message),
    );
    await lock.release();
    const again = await lockData({ folder: dir }, '--data-dir DIR');
    assert.equal(again.recoveredFrom, undefined);
    await again.release();
    // Many takers at once over a stale lock: exactly one wins.
    await writeFile(join(dir, DATA_LOCK_FILE), JSON.stringify({ pid: 2 ** 22 + 7, token: 'x', started: 'then' }));
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, () => lockData({ folder: dir }, '--data-dir DIR')),
    );
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    assert.equal(won.length, 1, JSON.stringify(outcomes.map((o) => o.status)));
    for (const o of outcomes)
      if (o.status === 'rejected') assert.ok(o.reason instanceof DataInUseError, String(o.reason));
    await (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof lockData>>>).value.release();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('arkivector devnet --state FILE: a second devnet on the same chain file is refused', async () => {
  const root = await mkdtemp(join(tmpdir(), 'arkivector-lock-devnet-'));
  const state = join(root, 'chain.json');
  const devnet = (extra: string[] = []) =>
    spawn(process.execPath, ['bin/arkivector.js', 'devnet', '--port', '0', '--state', state, ...extra], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  const first = devnet();
  try {
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no devnet within 60 s: ${out}`)), 60_000);
      first.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (/Listening:/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      first.once('exit', (code) => reject(new Error(`devnet exited with ${code}: ${out}`)));
    });
    const second = devnet();
    let stderr = '';
    second.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => second.kill('SIGKILL'), 60_000);
    const [code] = await once(second, 'exit');
    clearTimeout(timer);
    assert.equal(code, 1, stderr);
    assert.match(
      stderr,
      new RegExp(`chain\\.json is already in use by another arkivector \\(PID ${first.pid}, .*--state FILE`),
    );
  } finally {
    const exited = once(first, 'exit');
    first.kill('SIGTERM');
    await exited;
    await rm(root, { recursive: true, force: true });
  }
  assert.ok(!existsSync(`${state}.lock`), 'a devnet that stops releases its lock');
});
