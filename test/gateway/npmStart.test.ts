// `npm start` stopped with a signal sent to the npm process stops the server too: the start script
// execs node, so npm's forwarded signal reaches the gateway (not an intermediate shell that ignores it).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { defined } from '../helpers/defined.ts';

test('npm start: SIGTERM to the npm process stops the gateway', { timeout: 180_000 }, async () => {
  const npm = spawn('npm', ['start', '--silent'], {
    // Its own process group, so cleanup can reach every process it started, whatever happens.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ARKIVECTOR_HTTP: '127.0.0.1:0', ARKIVECTOR_BLOCK_TIME: '1', ARKIVECTOR_LOG_LEVEL: 'warn' },
  });
  let output = '';
  npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    const base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner within 90 s:\n${output}`)), 90_000);
      npm.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /REST:\s+(http:\/\/127\.0\.0\.1:\d+)\//.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(defined(match[1], 'match[1]'));
        }
      });
      npm.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`npm start exited with ${code}:\n${output}`));
      });
    });
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    const exited = once(npm, 'exit');
    npm.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      exited,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`npm start still running 30 s after SIGTERM:\n${output}`)), 30_000);
      }),
    ]).finally(() => clearTimeout(timer));
    // npm waits for its child: once npm is gone, nothing may listen any more.
    await assert.rejects(fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) }));
  } finally {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // The group is already gone: the expected case.
    }
  }
});

test('README Quick start: each `npm start -- FLAGS` line is what serve accepts after the start script’s own flags', async () => {
  const { readmeSection } = await import('../helpers/readme.ts');
  const { parseServeConfig } = await import('../../src/config.ts');
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } };
  const scripted = defined(/serve (.*)$/.exec(pkg.scripts.start)?.[1], 'the start script').split(' ');
  const lines = [...readmeSection('Quick start').matchAll(/`npm start -- ([^`]+)`/g)].map((m) =>
    defined(m[1], 'flags'),
  );
  assert.ok(lines.length > 0, 'the README shows npm start -- FLAGS');
  for (const line of lines) {
    const flags = line.split(/\s+/);
    const config = parseServeConfig([...scripted, ...flags], {});
    const http = flags[flags.indexOf('--http') + 1];
    assert.equal(`${config.http?.host}:${config.http?.port}`, http, line);
    const dataDir = flags.indexOf('--data-dir');
    if (dataDir >= 0) assert.equal(config.dataDir, flags[dataDir + 1], 'a later --data-dir wins over the script’s');
  }
});
