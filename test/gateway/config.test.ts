// Configuration of the surface: ARKIVECTOR_TOKENS is the documented scope:secret list (never a file
// path), --rate-limit and --log-format with their twins, and a node exposed without access control is
// refused before it connects to anything.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { RPC_BUDGET } from '../../indexer/defaults.ts';
import { ConfigError, envName, parseServeConfig } from '../../src/config.ts';
import { prettyLine, startGateway } from '../../src/node/index.ts';

test('config: ARKIVECTOR_TOKENS is the scope:secret list; the file flag has ARKIVECTOR_TOKENS_FILE', () => {
  const config = parseServeConfig([], { ARKIVECTOR_TOKENS: 'read:abc,write:def' });
  assert.equal(config.tokensFile, undefined);
  assert.equal(config.tokensEnv, 'read:abc,write:def');
  assert.equal(envName('tokens'), 'ARKIVECTOR_TOKENS_FILE');
  assert.equal(parseServeConfig([], { ARKIVECTOR_TOKENS_FILE: '/etc/t.json' }).tokensFile, '/etc/t.json');
});

test('config: --rate-limit and --log-format, with environment twins', () => {
  assert.equal(parseServeConfig([], {}).rateLimitPerMinute, undefined);
  assert.equal(parseServeConfig(['--rate-limit', '30'], {}).rateLimitPerMinute, 30);
  assert.equal(parseServeConfig([], { ARKIVECTOR_RATE_LIMIT: '0' }).rateLimitPerMinute, 0);
  assert.equal(parseServeConfig([], {}, { stderrIsTty: false }).logFormat, 'json');
  assert.equal(parseServeConfig([], {}, { stderrIsTty: true }).logFormat, 'pretty');
  assert.equal(parseServeConfig(['--log-format', 'json'], {}, { stderrIsTty: true }).logFormat, 'json');
  assert.equal(parseServeConfig([], { ARKIVECTOR_LOG_FORMAT: 'pretty' }, { stderrIsTty: false }).logFormat, 'pretty');
  for (const [args, pattern] of [
    [['--rate-limit=-1'], /--rate-limit must be at least 0/],
    [['--rate-limit', 'many'], /--rate-limit must be a number/],
    [['--log-format', 'xml'], /--log-format must be json or pretty/],
  ] as const)
    assert.throws(
      () => parseServeConfig([...args], {}),
      (e: Error) => e instanceof ConfigError && pattern.test(e.message),
    );
});

test("config: --kuradb-endpoint-file takes an optional path (default KuraDB's), needs --compat kuradb and HTTP", () => {
  const compat = ['--compat', 'kuradb'];
  assert.equal(parseServeConfig(compat, {}).kuradbEndpointFile, undefined);
  assert.equal(
    parseServeConfig([...compat, '--kuradb-endpoint-file'], {}).kuradbEndpointFile,
    '~/.config/kuradb/endpoint',
  );
  assert.equal(
    parseServeConfig(['--kuradb-endpoint-file', ...compat], {}).kuradbEndpointFile,
    '~/.config/kuradb/endpoint',
    'followed by another flag: the default',
  );
  assert.equal(parseServeConfig([...compat, '--kuradb-endpoint-file', '/tmp/e'], {}).kuradbEndpointFile, '/tmp/e');
  assert.equal(parseServeConfig(compat, { ARKIVECTOR_KURADB_ENDPOINT_FILE: '/tmp/f' }).kuradbEndpointFile, '/tmp/f');
  for (const [args, pattern] of [
    [['--kuradb-endpoint-file'], /needs --compat kuradb/],
    [[...compat, '--stdio', '--kuradb-endpoint-file'], /needs the HTTP listener/],
  ] as const)
    assert.throws(
      () => parseServeConfig([...args], {}),
      (e: Error) => e instanceof ConfigError && pattern.test(e.message),
    );
});

test('config: --embedder is local by default; local:NAME, local:ORG/NAME, local:PATH, none, URL; --model-hub', () => {
  const local = (args: string[], env: NodeJS.ProcessEnv = {}) => parseServeConfig(args, env).localEmbedder;
  const byDefault = parseServeConfig([], {});
  assert.deepEqual(
    [byDefault.embedder, byDefault.localEmbedder?.kind, byDefault.modelHub],
    [undefined, 'hub', 'https://huggingface.co'],
  );
  const hubModel = (ref: ReturnType<typeof local>) => (ref?.kind === 'hub' ? ref.model : undefined);
  assert.equal(hubModel(byDefault.localEmbedder)?.name, 'all-MiniLM-L6-v2');
  assert.equal(hubModel(local(['--embedder', 'local']))?.repo, 'sentence-transformers/all-MiniLM-L6-v2');
  assert.equal(
    hubModel(local(['--embedder', 'local:sentence-transformers/all-MiniLM-L6-v2']))?.name,
    'all-MiniLM-L6-v2',
  );
  assert.deepEqual(
    [hubModel(local([], { ARKIVECTOR_EMBEDDER: 'local:multilingual-e5-small' }))?.queryPrefix],
    ['query: '],
  );
  const other = hubModel(local(['--embedder', 'local:someone/model']));
  assert.deepEqual([other?.name, other?.revision], ['someone/model', 'main']);
  for (const path of ['/models/mini', './mini', '~/mini']) {
    const ref = local(['--embedder', `local:${path}`, '--embedder-model', 'mini-recorded']);
    assert.deepEqual([ref?.kind, ref?.kind === 'path' && ref.name], ['path', 'mini-recorded'], path);
  }
  const none = parseServeConfig(['--embedder', 'none'], {});
  assert.deepEqual([none.embedder, none.localEmbedder], [undefined, undefined]);
  const http = parseServeConfig(['--embedder', 'http://127.0.0.1:11434/v1', '--embedder-model', 'nomic'], {});
  assert.deepEqual(
    [http.embedder, http.localEmbedder],
    [{ url: 'http://127.0.0.1:11434/v1', model: 'nomic' }, undefined],
  );
  assert.equal(parseServeConfig([], { ARKIVECTOR_MODEL_HUB: 'off' }).modelHub, 'off');
  for (const [args, pattern] of [
    [['--embedder', 'ollama'], /--embedder must be local, local:MODEL, local:PATH, none or an http\(s\) URL/],
    [['--embedder', 'local:not a model'], /a model is ORG\/NAME on the hub/],
    [['--embedder', 'http://127.0.0.1:1/v1'], /--embedder needs --embedder-model/],
    [['--embedder', 'none', '--embedder-model', 'x'], /not of --embedder none/],
    [['--model-hub', 'ftp://mirror'], /--model-hub must be an http\(s\) URL or off/],
  ] as const)
    assert.throws(
      () => parseServeConfig([...args], {}),
      (e: Error) => e instanceof ConfigError && pattern.test(e.message),
      args.join(' '),
    );
});

test('prettyLine: time, level, message and fields of a pino line', () => {
  const line = JSON.stringify({ level: 40, time: '2026-11-30T12:00:01.000Z', msg: 'chain step failed', failures: 2 });
  assert.equal(prettyLine(line), '12:00:01 WARN  chain step failed failures=2\n');
  assert.equal(prettyLine('not json'), 'not json');
});

test('serve on a public address without access control is refused before connecting to anything', async () => {
  // Nothing listens on port 9 of loopback: any attempt to reach the RPC would fail differently (and late).
  const config = parseServeConfig(['--rpc', 'http://127.0.0.1:9', '--http', '0.0.0.0:0'], {});
  const logger = pino({ level: 'silent' });
  await assert.rejects(startGateway(config, logger), /refusing to serve on 0\.0\.0\.0 without access control/);
});

test('--rpc-budget: 40 calls an hour on a public preset without a key, 3600 with one, none with --rpc; bounded', () => {
  assert.equal(parseServeConfig(['--chain', 'tiramisu'], {}).rpcBudget, RPC_BUDGET.anonymous);
  assert.equal(parseServeConfig(['--chain', 'tiramisu', '--rpc-key', 'k'], {}).rpcBudget, RPC_BUDGET.keyed);
  assert.equal(parseServeConfig(['--chain', 'tiramisu'], { ARKIVECTOR_RPC_KEY: 'k' }).rpcBudget, RPC_BUDGET.keyed);
  assert.equal(parseServeConfig(['--rpc', 'http://127.0.0.1:8545'], {}).rpcBudget, 0);
  assert.equal(parseServeConfig([], {}).rpcBudget, 0);
  assert.equal(parseServeConfig(['--chain', 'tiramisu', '--rpc-budget', '0'], {}).rpcBudget, 0);
  assert.equal(parseServeConfig(['--rpc', 'http://127.0.0.1:8545', '--rpc-budget', '120'], {}).rpcBudget, 120);
  assert.throws(() => parseServeConfig(['--rpc-budget', String(RPC_BUDGET.max + 1)], {}), ConfigError);
  assert.throws(() => parseServeConfig(['--rpc-budget', '-1'], {}), ConfigError);
});
