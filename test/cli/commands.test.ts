// `arkivector` as a command: --version and --help on every command, the startup banner fitting the
// deployment (demo lines only where the demo data is, the token header where tokens are on), and a busy
// HTTP port refused at once, before a devnet starts or demo data is written.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { infoRequest } from '../../src/cliInfo.ts';
import { parseServeConfig } from '../../src/config.ts';
import { connectionBanner, createLogger, startGateway } from '../../src/node/index.ts';
import { hashSecret } from '../../src/http/index.ts';
import { VERSION } from '../../src/packageInfo.ts';
import { defined } from '../helpers/defined.ts';
import { startTestDevnet } from '../helpers/devnet.ts';
import { startEmbedder } from '../helpers/embedder.ts';

/** Runs the checkout's `arkivector` to its exit (bounded: killed after 60 s, which fails the test). */
function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runToExit(process.execPath, ['bin/arkivector.js', ...args]);
}

async function runToExit(command: string, args: string[]) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  return { code, stdout, stderr };
}

test('infoRequest: --version and --help anywhere before --, on every command', () => {
  assert.equal(infoRequest([]), 'help');
  assert.equal(infoRequest(['help']), 'help');
  for (const command of ['serve', 'devnet']) {
    assert.equal(infoRequest([command, '--help']), 'help');
    assert.equal(infoRequest([command, '--rpc', 'http://x', '-h']), 'help');
    assert.equal(infoRequest([command, '--version']), 'version');
    assert.equal(infoRequest([command, '--', '--help']), undefined);
    assert.equal(infoRequest([command, '--http', '127.0.0.1:0']), undefined);
  }
  assert.equal(infoRequest(['--version']), 'version');
  assert.equal(infoRequest(['version']), 'version');
});

test('arkivector --version, help, and --help on each command print and exit 0', async () => {
  const version = await run(['--version']);
  assert.equal(version.code, 0);
  assert.equal(version.stdout, `arkivector ${VERSION}\n`);
  assert.equal((await run(['serve', '--version'])).stdout, `arkivector ${VERSION}\n`);
  for (const [args, usage] of [
    [['help'], /^usage: arkivector COMMAND /],
    [['serve', '--help'], /^usage: arkivector serve /],
    [['devnet', '-h'], /^usage: arkivector devnet /],
  ] as const) {
    const answer = await run([...args]);
    assert.equal(answer.code, 0, args.join(' '));
    assert.match(answer.stdout, usage, args.join(' '));
  }
  const unknown = await run(['bogus']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command "bogus"/);
});

test('a second serve on a busy port fails at once with a clear message, before any devnet or demo data', async () => {
  const busy: Server = createServer();
  await new Promise<void>((resolve) => busy.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const { port } = busy.address() as AddressInfo;
  try {
    const answer = await run(['serve', '--http', `127.0.0.1:${port}`, '--log-level', 'info']);
    assert.equal(answer.code, 1);
    assert.match(answer.stderr, new RegExp(`127\\.0\\.0\\.1:${port} is already in use .*--http 127\\.0\\.0\\.1:PORT`));
    // Nothing was started or written: no devnet, no demo data, no banner.
    assert.doesNotMatch(answer.stderr, /embedded devnet started|demo collections/);
    assert.equal(answer.stdout, '');
  } finally {
    busy.close();
  }
});

test('serve and devnet refuse an unknown flag with their own help, not the top-level usage', async () => {
  for (const command of ['serve', 'devnet']) {
    const answer = await run([command, '--bogus-flag']);
    assert.equal(answer.code, 2, command);
    assert.match(
      answer.stderr,
      new RegExp(`^arkivector: Unknown option '--bogus-flag'\\nusage: arkivector ${command} `),
    );
    assert.doesNotMatch(answer.stderr, /usage: arkivector COMMAND/);
  }
});

test('a negative number after a flag is its value: the flag’s own check answers (exit 2), not parseArgs’ "ambiguous"', async () => {
  for (const [args, message] of [
    [['serve', '--start-block', '-1'], /^arkivector: --start-block must be at least 0\nusage: arkivector serve /],
    [['serve', '--live-lag', '-5'], /^arkivector: --live-lag must be at least 0\nusage: arkivector serve /],
    [
      ['devnet', '--port', '-1'],
      /^arkivector: --port must be an integer from 0 to 65535, not "-1"\nusage: arkivector devnet /,
    ],
  ] as const) {
    const answer = await run([...args]);
    assert.equal(answer.code, 2, args.join(' '));
    assert.match(answer.stderr, message);
    assert.doesNotMatch(answer.stderr, /ambiguous/);
  }
  // A client command takes a vector that starts negative: it goes on to ask the gateway (none here: exit 3).
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const search = await run(['search', 'notes', '--vector', '-0.5,1', '--url', url]);
  assert.equal(search.code, 3, search.stderr);
  assert.match(search.stderr, /^arkivector search: cannot reach the gateway/);
  const short = await run(['search', 'notes', '--vector', '1,0', '-k', '-2', '--url', url]);
  assert.equal(short.code, 2, short.stderr);
  assert.match(short.stderr, /^arkivector search: --k must be an integer from 1 to \d+, not "-2"/);
});

/** Runs the checkout's `arkivector` on a pseudo-terminal (util-linux `script`): what a person at a shell sees. */
async function runOnTerminal(args: string[]): Promise<{ code: number | null; output: string }> {
  const quoted = [process.execPath, 'bin/arkivector.js', ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`);
  // The terminal merges stdout and stderr into script's stdout, with CRLF line ends.
  const { code, stdout, stderr } = await runToExit('script', ['-qec', quoted.join(' '), '/dev/null']);
  return { code, output: (stdout + stderr).replace(/\r\n/g, '\n') };
}

test("on a terminal a startup error is the README's plain `arkivector: …` line, not a JSON log line", async () => {
  const readme = await readFile('README.md', 'utf8');
  // The README's own sentence (Quick start), with this test's port in place of 8787.
  const promised = defined(/`(arkivector: 127\.0\.0\.1:8787 is already in use[^`]*)`/.exec(readme)?.[1], 'README line')
    .replace(/\s+/g, ' ')
    .replace('8787', 'PORT_OF_TEST');
  const busy: Server = createServer();
  await new Promise<void>((resolve) => busy.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const { port } = busy.address() as AddressInfo;
  try {
    const answer = await runOnTerminal(['serve', '--http', `127.0.0.1:${port}`]);
    assert.equal(answer.code, 1, answer.output);
    assert.ok(answer.output.includes(`${promised.replace('PORT_OF_TEST', String(port))}\n`), answer.output);
    assert.doesNotMatch(answer.output, /"level":"fatal"/);
    // Not a terminal (a service, a pipe): the JSON log line, for log collectors.
    const piped = await run(['serve', '--http', `127.0.0.1:${port}`]);
    assert.equal(piped.code, 1);
    assert.equal(JSON.parse(piped.stderr.trim()).level, 'fatal');
  } finally {
    busy.close();
  }
});

test('banner: a node following an RPC with tokens shows the token header and no demo lines', async () => {
  const devnet = await startTestDevnet();
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-banner-'));
  const tokensFile = join(dir, 'tokens.json');
  const secret = 'banner-secret-0123456789';
  await writeFile(tokensFile, JSON.stringify([{ name: 'ops', sha256: hashSecret(secret), scopes: ['read'] }]));
  const config = parseServeConfig(['--rpc', devnet.url, '--http', '127.0.0.1:0', '--tokens', tokensFile], {});
  const gateway = await startGateway(config, createLogger('silent'));
  try {
    const banner = connectionBanner(gateway);
    assert.match(
      banner,
      new RegExp(
        `claude mcp add --transport http arkivector ${gateway.httpUrl}/mcp --header "Authorization: Bearer \\$ARKIVECTOR_TOKEN"\\n`,
      ),
    );
    assert.match(banner, new RegExp(`Console:  ${gateway.httpUrl}/\\n`));
    assert.doesNotMatch(banner, /curl|notes|demo/);
    assert.doesNotMatch(banner, new RegExp(secret));
    // No signer here: the stdio snippet stays read-only too.
    assert.doesNotMatch(banner, /ARKIVECTOR_PRIVATE_KEY/);
  } finally {
    await gateway.close();
    await devnet.stop();
    await rm(dir, { recursive: true, force: true });
  }
});

test('banner and console: one stdio snippet with the embedder flags and the key placeholders, never the keys', async () => {
  const devnet = await startTestDevnet();
  const embedder = await startEmbedder();
  const privateKey = defined(devnet.accounts[1], 'devnet.accounts[1]').privateKey;
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-banner-'));
  const keyFile = join(dir, 'signer.key');
  await writeFile(keyFile, privateKey);
  const config = parseServeConfig(
    [
      ...['--rpc', devnet.url, '--http', '127.0.0.1:0', '--private-key-file', keyFile],
      ...['--embedder', embedder.url, '--embedder-model', 'fake'],
    ],
    {},
  );
  const gateway = await startGateway(config, createLogger('silent'));
  try {
    const banner = connectionBanner(gateway);
    const snippet = defined(
      banner.split('\n').find((line) => line.includes('"mcpServers"')),
      'the Claude Desktop snippet',
    );
    type Entry = { command: string; args: string[]; env?: Record<string, string> };
    const printed = (JSON.parse(snippet) as { mcpServers: { arkivector: Entry } }).mcpServers.arkivector;
    assert.deepEqual(printed.env, { ARKIVECTOR_PRIVATE_KEY: '0x…' });
    assert.deepEqual(printed.args.slice(1), [
      ...['serve', '--stdio', '--rpc', devnet.url],
      ...['--embedder', embedder.url, '--embedder-model', 'fake'],
    ]);
    assert.match(banner, /put the signer's key in place of 0x…/);
    assert.doesNotMatch(banner, new RegExp(privateKey.slice(2)));
    // The console's Connect page shows the same entry, with the installed command's name.
    const shown = ((await (await fetch(`${gateway.httpUrl}/console/node.json`)).json()) as { stdio: Entry }).stdio;
    assert.deepEqual(shown, { command: 'arkivector', args: printed.args.slice(1), env: printed.env });
  } finally {
    await gateway.close();
    await embedder.close();
    await devnet.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
