// Configuration of the surface: ARKIVECTOR_TOKENS is the documented scope:secret list (never a file
// path), --rate-limit and --log-format with their twins, and a node exposed without access control is
// refused before it connects to anything.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pino from 'pino';
import { RPC_BUDGET } from '../../indexer/defaults.ts';
import {
  clientEnv,
  ConfigError,
  DEFAULT_GATEWAY_URL,
  envName,
  parseDevnetConfig,
  parseModelPullConfig,
  parseServeConfig,
} from '../../src/config.ts';
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

test('config: the devnet flags read their ARKIVECTOR_<FLAG> twins; the flag wins; bad values are ConfigErrors', () => {
  assert.deepEqual(parseDevnetConfig([], {}), {
    protocol: 'v1',
    host: '127.0.0.1',
    port: 8545,
    chainId: 1337,
    blockTime: 2,
    stateFile: undefined,
  });
  const env = {
    ARKIVECTOR_PROTOCOL: 'dbchain',
    ARKIVECTOR_HOST: '0.0.0.0',
    ARKIVECTOR_PORT: '0',
    ARKIVECTOR_CHAIN_ID: '7',
    ARKIVECTOR_BLOCK_TIME: '1',
    ARKIVECTOR_STATE: '/tmp/chain.json',
  };
  assert.deepEqual(parseDevnetConfig([], env), {
    protocol: 'dbchain',
    host: '0.0.0.0',
    port: 0,
    chainId: 7,
    blockTime: 1,
    stateFile: '/tmp/chain.json',
  });
  assert.equal(parseDevnetConfig(['--port', '9'], env).port, 9, 'the flag wins');
  assert.throws(() => parseDevnetConfig(['--protocol', 'x'], {}), {
    name: 'ConfigError',
    message: '--protocol must be one of v1, dbchain, not "x"',
  });
  assert.throws(() => parseDevnetConfig([], { ARKIVECTOR_PORT: 'abc' }), {
    message: '--port must be an integer from 0 to 65535, not "abc"',
  });
  assert.throws(() => parseDevnetConfig(['--bogus'], {}), ConfigError);
});

test('config: model pull reads ARKIVECTOR_MODEL_HUB and the cache root; the client commands their variables', () => {
  const pull = parseModelPullConfig(['pull', 'e5-small'], { ARKIVECTOR_MODEL_HUB: 'off', XDG_CACHE_HOME: '/xdg' });
  assert.deepEqual(pull, { positionals: ['pull', 'e5-small'], modelHub: 'off', modelCache: '/xdg/arkivector/models' });
  assert.equal(parseModelPullConfig(['pull', '--model-hub', 'http://127.0.0.1:9'], {}).modelHub, 'http://127.0.0.1:9');
  assert.deepEqual(clientEnv({ ARKIVECTOR_URL: '', ARKIVECTOR_TOKEN: '' }), {
    url: DEFAULT_GATEWAY_URL,
    token: undefined,
    rpc: undefined,
  });
  assert.deepEqual(clientEnv({ ARKIVECTOR_URL: 'http://h:1', ARKIVECTOR_TOKEN: 't', ARKIVECTOR_RPC: 'http://r:2' }), {
    url: 'http://h:1',
    token: 't',
    rpc: 'http://r:2',
  });
});

test('config: the signer and embedder keys come from the environment only, and never from a flag', () => {
  const config = parseServeConfig([], { ARKIVECTOR_PRIVATE_KEY: '0xkey', ARKIVECTOR_EMBEDDER_KEY: 'sk-1' });
  assert.equal(config.privateKey, '0xkey');
  assert.equal(config.embedderKey, 'sk-1');
  assert.throws(() => parseServeConfig(['--private-key', '0xkey'], {}), ConfigError);
});
