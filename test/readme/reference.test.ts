// The manual's reference text as test input, without a node: the error table is the code's closed list of codes
// with their HTTP statuses, every `arkivector serve …` line the README and docs/ show is one `serve` accepts, and the
// MCP client configurations parse and name a command that exists in a checkout and in the package; a refused
// flag is a usage error, in a pipe too.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseServeConfig } from '../../src/config.ts';
import { ERROR_STATUS } from '../../src/errors.ts';
import {
  HTTP_BODY_MIN_BYTES_PER_S,
  HTTP_CONNECTIONS_CHECK_MS,
  HTTP_CONNECTIONS_PER_ADDRESS_MAX,
  HTTP_HEADERS_TIMEOUT_MS,
  HTTP_KEEP_ALIVE_TIMEOUT_MS,
  HTTP_MAX_CONNECTIONS,
  HTTP_MAX_HEADER_BYTES,
  HTTP_REQUEST_TIMEOUT_MS,
} from '../../src/httpDefault.ts';
import { defined } from '../helpers/defined.ts';
import { codeSpans, docSection, fencedBlocks, MANUAL, tableRows } from '../helpers/readme.ts';

test('README Errors: the table lists every code the code can answer, with its HTTP status, and no other', () => {
  const rows = tableRows(docSection('README.md', 'Errors'), 'code').map(([code = '', http = '']) => [
    codeSpans(code)[0],
    Number(http),
  ]);
  assert.deepEqual(Object.fromEntries(rows), ERROR_STATUS, 'README "Errors" and ERROR_STATUS (src/errors.ts) differ');
  assert.equal(rows.length, Object.keys(ERROR_STATUS).length, 'a code listed twice');
});

/** `serve` arguments with the README's placeholders replaced by values of their kind. */
function serveArgs(line: string): string[] {
  return line
    .replace(/(^|\s+)#.*$/, '')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map((word) =>
      word === 'URL'
        ? 'http://127.0.0.1:9'
        : word === 'local:PATH'
          ? 'local:/tmp/model'
          : word === 'NAME' || word === 'KEY'
            ? 'placeholder'
            : word,
    );
}

test('the manual: every `arkivector serve …` line the README and docs/ show is accepted by serve', () => {
  // Continued shell lines joined, so a command split over two lines is read whole.
  const text = MANUAL.replace(/\\\n\s*/g, '');
  const lines = [...text.matchAll(/arkivector serve((?: [^`\n|]*)?)(?=[`\n|])/g)].map((m) => (m[1] ?? '').trim());
  assert.ok(lines.length >= 10, `only ${lines.length} serve lines found`);
  let parsed = 0;
  for (const line of lines) {
    const args = serveArgs(line);
    if (args.includes('--help')) continue;
    assert.doesNotThrow(() => parseServeConfig(args, { HOME: '/home/readme-test' }), `arkivector serve ${line}`);
    parsed += 1;
  }
  assert.ok(parsed >= 10);
});

test('the manual: the MCP client configurations parse, start a serve that accepts their args, with a command that exists', () => {
  const blocks = fencedBlocks(MANUAL, 'json').filter((block) => block.includes('mcpServers'));
  assert.ok(blocks.length >= 3, 'the Connecting and Agent memory snippets');
  let urls = 0;
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { bin: Record<string, string>; files: string[] };
  for (const block of blocks) {
    const config = JSON.parse(block) as {
      mcpServers: Record<string, { command: string; args: string[] } | { url: string }>;
    };
    for (const [name, server] of Object.entries(config.mcpServers)) {
      if ('url' in server) {
        // A client that speaks streamable HTTP: the node's MCP endpoint.
        assert.match(server.url, /^http:\/\/127\.0\.0\.1:8787\/mcp$/, `${name}: the MCP endpoint npm start prints`);
        urls += 1;
        continue;
      }
      // `arkivector` is what `npm install -g` of the package puts on PATH: the package's bin, in its files.
      assert.equal(server.command, 'arkivector', `${name}: the installed command`);
      const bin = pkg.bin[server.command];
      assert.ok(bin !== undefined && existsSync(bin), `package.json bin ${server.command}`);
      assert.ok(
        pkg.files.some((f) => bin.startsWith(f)),
        `${bin} is in the package's files`,
      );
      assert.equal(server.args[0], 'serve');
      assert.doesNotThrow(() => parseServeConfig(server.args.slice(1), {}), server.args.join(' '));
    }
  }
  assert.ok(urls >= 1, 'the streamable HTTP entry (Cursor and any client)');
  // The checkout form the README names: `"command": "node"` with the absolute path of bin/arkivector.js.
  assert.match(
    docSection('README.md', 'Connecting'),
    /"command": "node"`? with the absolute path of its `bin\/arkivector\.js`/,
  );
  assert.ok(existsSync('bin/arkivector.js'));
});

test('README Quick start: a refused flag is a usage error (plain line and help, exit 2) even in a pipe; other startup errors are a JSON line there (exit 1)', async () => {
  const run = async (args: string[]) => {
    const child = spawn(process.execPath, ['bin/arkivector.js', 'serve', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, stderr };
  };
  assert.match(docSection('install.md', 'Startup errors'), /a bad value such as `--live-lag x`\) is a usage error/);
  const usage = await run(['--live-lag', 'x']);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^arkivector: --live-lag must be a number\nusage: arkivector serve /);
  // Port 9 of loopback: refused before anything is reached (a public bind without access control).
  const refused = await run(['--rpc', 'http://127.0.0.1:9', '--http', '0.0.0.0:0']);
  assert.equal(refused.code, 1);
  assert.equal(JSON.parse(refused.stderr.trim()).level, 'fatal');
});

const DECLARED: Record<string, number> = {
  HTTP_HEADERS_TIMEOUT_MS,
  HTTP_REQUEST_TIMEOUT_MS,
  HTTP_MAX_CONNECTIONS,
  HTTP_CONNECTIONS_PER_ADDRESS_MAX,
  HTTP_BODY_MIN_BYTES_PER_S,
  HTTP_MAX_HEADER_BYTES,
};

test('README REST API: the connection limits it states are the ones src/httpDefault.ts declares', () => {
  const section = docSection('rest.md', 'REST API');
  const rows = tableRows(section, 'what').map(([what = '', limit = '']) => [
    defined(/`(HTTP_[A-Z_]+)`/.exec(what)?.[1], what),
    limit,
  ]);
  const asDeclared = (value: number, name: string) =>
    name.endsWith('_MS') ? `${value / 1000} s` : value.toLocaleString('en-US');
  assert.deepEqual(
    rows,
    rows.map(([name = '']) => [name, asDeclared(defined(DECLARED[name], name), name)]),
  );
  assert.deepEqual(rows.map(([name]) => name).sort(), [
    'HTTP_BODY_MIN_BYTES_PER_S',
    'HTTP_CONNECTIONS_PER_ADDRESS_MAX',
    'HTTP_HEADERS_TIMEOUT_MS',
    'HTTP_MAX_CONNECTIONS',
    'HTTP_MAX_HEADER_BYTES',
    'HTTP_REQUEST_TIMEOUT_MS',
  ]);
  const keepAlive = HTTP_KEEP_ALIVE_TIMEOUT_MS / 1000;
  assert.match(section, new RegExp(`stay open ${keepAlive} s \\(\`HTTP_KEEP_ALIVE_TIMEOUT_MS\`,`));
  assert.match(section, new RegExp(`\`Keep-Alive: timeout=${keepAlive}\``));
  assert.equal(HTTP_CONNECTIONS_CHECK_MS, 1000);
  assert.match(section, /checked every second \(`HTTP_CONNECTIONS_CHECK_MS`\)/);
});
