// Secrets never reach a screen: real `arkivector serve` runs (HTTP and stdio) configured with a signer
// key, bearer tokens in ARKIVECTOR_TOKENS (the documented scope:secret form) and an RPC URL carrying a
// user:password, a key in its path and one in its query, plus an RPC key (ARKIVECTOR_RPC_KEY, sent as X-API-KEY). Everything they print (banner, logs at debug
// level, startup errors) and everything they answer is run through a scanner that looks for every
// configured secret in its raw, hex, base64 and URL-encoded forms.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Devnet } from '../../src/devnet/index.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { defined } from '../helpers/defined.ts';

const READ_TOKEN = 'tok-read-Q7m2Zp9xLw4c';
const WRITE_TOKEN = 'tok-write-V3n8Hk1sDy6r';
const RPC_USER = 'rpcuser';
const RPC_PASSWORD = 'RpcPa55-Hu8Jn2Kd';
const PATH_KEY = 'PathKey7Gq4Wm9Tz';
const QUERY_KEY = 'QueryKey2Bx5Nc8Lv';
const RPC_KEY = 'RpcKey7Tq3Wm9Zs4Pd';

/** Every spelling of a secret that could leak: raw, case variants, hex, base64(url), URL-encoded. */
function forms(secret: string): string[] {
  const out = new Set<string>([secret, secret.toLowerCase(), secret.toUpperCase(), encodeURIComponent(secret)]);
  const bytes = Buffer.from(secret, 'utf8');
  out.add(bytes.toString('hex'));
  out.add(bytes.toString('base64').replace(/=+$/, ''));
  out.add(bytes.toString('base64url'));
  if (/^0x[0-9a-f]+$/i.test(secret)) {
    const raw = Buffer.from(secret.slice(2), 'hex');
    out.add(secret.slice(2).toLowerCase());
    out.add(secret.slice(2).toUpperCase());
    out.add(raw.toString('base64').replace(/=+$/, ''));
    out.add(raw.toString('base64url'));
  }
  return [...out];
}

/** Every 10-character piece of a secret: a message quoting part of one (a prefix, a tail) leaks it too. */
const FRAGMENT_CHARS = 10;
function fragments(secret: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + FRAGMENT_CHARS <= secret.length; i++) out.push(secret.slice(i, i + FRAGMENT_CHARS));
  return out;
}

function scan(where: string, text: string, secrets: Record<string, string>): void {
  for (const [name, secret] of Object.entries(secrets)) {
    for (const form of forms(secret))
      assert.ok(!text.includes(form), `${where} shows the ${name} (as ${JSON.stringify(form.slice(0, 6))}…)`);
    for (const piece of fragments(secret))
      assert.ok(!text.includes(piece), `${where} shows part of the ${name} (${piece.length} characters of it)`);
  }
}

describe('secrets: banners, logs and answers of real gateway runs', () => {
  let devnet: Devnet;
  let rpcUrl: string;
  let secrets: Record<string, string>;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    devnet = await startTestDevnet();
    const url = new URL(devnet.url);
    rpcUrl = `http://${RPC_USER}:${RPC_PASSWORD}@${url.host}/v2/${PATH_KEY}?apikey=${QUERY_KEY}`;
    const privateKey = defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey;
    secrets = {
      'signer key': privateKey,
      'read token': READ_TOKEN,
      'write token': WRITE_TOKEN,
      'RPC password': RPC_PASSWORD,
      'RPC basic credentials': `${RPC_USER}:${RPC_PASSWORD}`,
      'RPC path key': PATH_KEY,
      'RPC query key': QUERY_KEY,
      'RPC key (X-API-KEY)': RPC_KEY,
    };
    env = {
      ...process.env,
      ARKIVECTOR_PRIVATE_KEY: privateKey,
      ARKIVECTOR_TOKENS: `read:${READ_TOKEN},read+write:${WRITE_TOKEN}`,
      ARKIVECTOR_RPC_KEY: RPC_KEY,
    };
  });
  after(async () => {
    await devnet.stop();
  });

  test('HTTP: banner, debug logs and answers hold no secret; ARKIVECTOR_TOKENS=scope:secret works', async () => {
    const child = spawn(
      process.execPath,
      ['bin/arkivector.js', 'serve', '--rpc', rpcUrl, '--http', '127.0.0.1:0', '--log-level', 'debug'],
      { stdio: ['ignore', 'pipe', 'pipe'], env },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const answers: string[] = [];
    try {
      const base = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no banner within 60 s:\n${stdout}\n${stderr}`)), 60_000);
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          const match = /REST:\s+(http:\/\/127\.0\.0\.1:\d+)\/v1\/collections/.exec(stdout);
          if (match) {
            clearTimeout(timer);
            resolve(defined(match[1], 'match[1]'));
          }
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`serve exited with ${code}:\n${stderr}`));
        });
      });
      const get = async (path: string, token?: string, init: RequestInit = {}) => {
        const response = await fetch(`${base}${path}`, {
          ...init,
          headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers ?? {}) },
        });
        const text = await response.text();
        answers.push(text, JSON.stringify([...response.headers]));
        return { status: response.status, text };
      };
      const status = await get('/v1/status', READ_TOKEN);
      assert.equal(status.status, 200, status.text);
      assert.equal(JSON.parse(status.text).rpc, `http://${new URL(devnet.url).host}/…`);
      // --protocol auto (the default with --rpc) found the v1 node.
      assert.equal(JSON.parse(status.text).protocol, 'v1');
      assert.equal((await get('/v1/status')).status, 401);
      assert.equal((await get('/v1/status', 'wrong-token')).status, 401);
      assert.equal((await get('/v1/collections', READ_TOKEN, { method: 'POST', body: '{}' })).status, 403);
      const created = await get('/v1/collections', WRITE_TOKEN, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bad name!', dim: 0 }),
      });
      assert.equal(created.status, 400, created.text);
      assert.equal((await get('/metrics', READ_TOKEN)).status, 200);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    assert.match(stdout, /Chain: {4}http:\/\/127\.0\.0\.1:\d+\/… \(chain id/);
    assert.match(stdout, /shown without its credentials/);
    scan('the banner', stdout, secrets);
    scan('the log', stderr, secrets);
    scan('an answer', answers.join('\n'), secrets);
  });

  test('stdio: banner and debug logs hold no secret', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['bin/arkivector.js', 'serve', '--stdio', '--rpc', rpcUrl, '--log-level', 'debug'],
      env: env as Record<string, string>,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'secrets-test', version: '1.0.0' });
    await client.connect(transport);
    const texts: string[] = [];
    try {
      const listed = await client.callTool({ name: 'arkivector_list_collections', arguments: {} });
      const upsert = await client.callTool({ name: 'arkivector_upsert', arguments: { collection: 'none' } });
      assert.equal(upsert.isError, true);
      texts.push(JSON.stringify(listed), JSON.stringify(upsert));
    } finally {
      await client.close();
    }
    scan('the stdio log', stderr, secrets);
    scan('a stdio answer', texts.join('\n'), secrets);
  });

  test('startup errors: a malformed ARKIVECTOR_TOKENS and a bad key are refused without echoing them', async () => {
    const run = async (extraEnv: NodeJS.ProcessEnv) => {
      const child = spawn(
        process.execPath,
        ['bin/arkivector.js', 'serve', '--rpc', rpcUrl, '--http', '127.0.0.1:0', '--log-level', 'debug'],
        { stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, ...extraEnv } },
      );
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const [code] = await once(child, 'exit');
      assert.notEqual(code, 0, output);
      return output;
    };
    const tokens = await run({ ARKIVECTOR_TOKENS: `admin:${READ_TOKEN}` });
    assert.match(tokens, /ARKIVECTOR_TOKENS: entry 0/);
    scan('a token error', tokens, secrets);
    // Reversed (secret:scope): the secret stands where the scope should, and no part of it may be quoted.
    const reversed = await run({ ARKIVECTOR_TOKENS: `${READ_TOKEN}:read` });
    assert.match(reversed, /ARKIVECTOR_TOKENS: entry 0: unknown scope/);
    scan('a reversed token error', reversed, secrets);
    const badKey = `0x${'zz'.repeat(32)}${WRITE_TOKEN}`;
    const key = await run({ ARKIVECTOR_PRIVATE_KEY: badKey });
    assert.match(key, /signer key/);
    scan('a key error', key, { ...secrets, 'bad key': badKey });
  });
});
