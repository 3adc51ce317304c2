// README "Configuration (`arkivector serve`)" as test input: the flag table names exactly the flags the
// parser and `serve --help` know, every flag reads its ARKIVECTOR_<FLAG> twin, each default the table states
// as a literal is the parser's default, and the flags the table says are "Not with `--rpc`" are refused there.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import {
  ConfigError,
  defaultDataDir,
  envName,
  FLAG_NAMES,
  type FlagName,
  parseServeConfig,
  type ServeConfig,
} from '../../src/config.ts';
import { modelName } from '../../src/embedder/local/catalog.ts';
import { defined } from '../helpers/defined.ts';
import { codeSpans, docSection, tableRows } from '../helpers/readme.ts';

const ROWS = tableRows(docSection('configuration.md', 'Configuration'), 'flag').map(
  ([flag = '', byDefault = '', meaning = '']) => ({
    flag: defined(/^`--([a-z-]+)/.exec(flag)?.[1], `flag in ${flag}`) as FlagName,
    byDefault,
    meaning,
  }),
);

// A home of its own: the defaults must not depend on the machine's environment.
const ENV = { HOME: '/home/readme-test' };
const parse = (args: string[], env: NodeJS.ProcessEnv = {}): ServeConfig =>
  parseServeConfig(args, { ...ENV, ...env }, { stderrIsTty: false });

/** A value other than the default for each flag, and the flags it needs beside it. */
const SAMPLES: Record<FlagName, { value: string | true; with?: string[] }> = {
  rpc: { value: 'http://127.0.0.1:9' },
  ws: { value: 'ws://127.0.0.1:9' },
  chain: { value: 'localhost' },
  protocol: { value: 'v1' },
  'rpc-key': { value: 'key-1' },
  'rpc-budget': { value: '7' },
  http: { value: '127.0.0.1:9' },
  stdio: { value: true },
  'data-dir': { value: '/tmp/arkivector-readme' },
  'no-data-dir': { value: true },
  collections: { value: 'a,b' },
  'collection-owner': { value: `notes=0x${'1'.repeat(40)}` },
  confirmations: { value: '3' },
  'live-lag': { value: '7' },
  'start-block': { value: '12' },
  embedder: { value: 'none' },
  'embedder-model': { value: 'my-model' },
  'model-hub': { value: 'off' },
  tokens: { value: '/tmp/tokens.json' },
  'public-read': { value: true },
  compat: { value: 'kuradb' },
  'kuradb-endpoint-file': { value: '/tmp/endpoint', with: ['--compat', 'kuradb'] },
  'log-level': { value: 'warn' },
  'min-block-timeout': { value: '3' },
  'private-key-file': { value: '/tmp/key' },
  'block-time': { value: '5' },
  'no-demo': { value: true },
  'devnet-state': { value: '/tmp/chain.json' },
  'devnet-port': { value: '0' },
  'rate-limit': { value: '30' },
  'log-format': { value: 'pretty' },
  'verify-rpc': { value: 'http://127.0.0.1:9' },
};

const asArgs = (flag: FlagName, value: string | true) => (value === true ? [`--${flag}`] : [`--${flag}`, value]);

test('README Configuration: the flag table lists exactly the flags serve accepts, and `serve --help` names each with its twin', async () => {
  assert.deepEqual(ROWS.map((row) => row.flag).sort(), [...FLAG_NAMES].sort());
  const child = spawn(process.execPath, ['bin/arkivector.js', 'serve', '--help'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let help = '';
  child.stdout.on('data', (chunk: Buffer) => (help += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0);
  for (const flag of FLAG_NAMES) assert.match(help, new RegExp(`^ {2}--${flag}\\b.*\\[${envName(flag)}\\]$`, 'm'));
});

test('README Configuration: every flag reads its ARKIVECTOR_<FLAG> twin (booleans true/1/yes); the flag wins', () => {
  for (const flag of FLAG_NAMES) {
    const rule = `ARKIVECTOR_${flag.toUpperCase().replace(/-/g, '_')}`;
    // The one exception the README states in the row: --tokens reads ARKIVECTOR_TOKENS_FILE.
    assert.equal(envName(flag), flag === 'tokens' ? 'ARKIVECTOR_TOKENS_FILE' : rule);
    const { value, with: beside = [] } = SAMPLES[flag];
    const fromFlag = parse([...beside, ...asArgs(flag, value)]);
    assert.notDeepEqual(fromFlag, parse(beside), `--${flag} ${value} changes nothing`);
    for (const spelled of value === true ? ['true', '1', 'yes'] : [value])
      assert.deepEqual(parse(beside, { [envName(flag)]: spelled }), fromFlag, `${envName(flag)}=${spelled}`);
  }
  assert.equal(parse(['--live-lag', '9'], { ARKIVECTOR_LIVE_LAG: '7' }).liveLag, 9, 'the flag wins');
  assert.equal(parse([], { ARKIVECTOR_STDIO: 'no' }).stdio, false);
});

test('README Configuration: each default the table gives as a literal is the default', () => {
  const home = defaultDataDir(ENV);
  assert.equal(home, '/home/readme-test/.local/share/arkivector');
  assert.equal(defaultDataDir({ ...ENV, XDG_DATA_HOME: '/xdg' }), '/xdg/arkivector');
  let checked = 0;
  for (const { flag, byDefault } of ROWS) {
    // `X`, `X` (…), `X`, … : a literal (conditional defaults such as "`auto` with `--rpc`" are not).
    const literal = /^`([^`]+)`(?:$| \(|, )/.exec(byDefault)?.[1];
    if (literal === undefined) continue;
    const value = literal.replace(/^DATA_DIR(?=\/)/, home);
    const given = parse(asArgs(flag, value));
    const unset = parse([]);
    // Naming the devnet's file is also saying "not a kept v1 chain": the only field that may differ.
    if (flag === 'devnet-state') {
      delete given.keptV1DevnetState;
      delete unset.keptV1DevnetState;
    }
    assert.deepEqual(given, unset, `--${flag}: the README's default ${literal}`);
    checked += 1;
  }
  assert.ok(checked >= 10, `only ${checked} literal defaults found: did the table change shape?`);
  // The ones in words.
  const row = (flag: FlagName) =>
    defined(
      ROWS.find((r) => r.flag === flag),
      flag,
    );
  assert.match(row('data-dir').byDefault, /^embedded devnet: `\$\{XDG_DATA_HOME:-~\/\.local\/share\}\/arkivector`/);
  assert.equal(parse([]).dataDir, home);
  assert.equal(parse(['--rpc', 'http://127.0.0.1:9']).dataDir, undefined, 'with --rpc: none');
  assert.match(row('rpc').byDefault, /embedded devnet/);
  assert.equal(parse([]).rpc, undefined);
  assert.equal(parse([]).protocol, 'dbchain');
  assert.equal(parse(['--rpc', 'http://127.0.0.1:9']).protocol, 'auto');
  assert.equal(parse(['--chain', 'localhost']).protocol, 'v1', "the preset's");
  assert.equal(parse(['--stdio']).http, undefined, 'no HTTP with --stdio alone');
  assert.deepEqual(parse(['--stdio', '--http', '127.0.0.1:0']).http, { host: '127.0.0.1', port: 0 });
  assert.equal(parse([]).embedder, undefined);
  assert.equal(modelName(defined(parse([]).localEmbedder, 'the local embedder')), 'all-MiniLM-L6-v2');
  for (const flag of ['stdio', 'no-data-dir', 'public-read', 'no-demo'] as const)
    assert.equal(row(flag).byDefault, 'off');
  assert.deepEqual(
    [parse([]).stdio, parse([]).publicRead, parse([]).demo, parse([]).dataDir !== undefined],
    [false, false, true, true],
  );
});

test('README Configuration: the flags the table says are "Not with `--rpc`" are refused with it', () => {
  const refused = ROWS.filter((row) => row.meaning.includes('Not with `--rpc`')).map((row) => row.flag);
  assert.deepEqual(refused.sort(), ['devnet-port', 'devnet-state']);
  for (const flag of refused)
    for (const chain of [
      ['--rpc', 'http://127.0.0.1:9'],
      ['--chain', 'localhost'],
    ])
      assert.throws(
        () => parse([...chain, ...asArgs(flag, String(SAMPLES[flag].value))]),
        (e: Error) => e instanceof ConfigError && /apply to the embedded devnet only/.test(e.message),
      );
});

test('README Configuration: the values the table lists are the values accepted, and others are refused', () => {
  const spans = (flag: FlagName) =>
    codeSpans(
      defined(
        ROWS.find((r) => r.flag === flag),
        flag,
      ).meaning,
    );
  // `--log-level`: "`trace`, `debug`, …"
  const levels = spans('log-level');
  assert.deepEqual(levels, ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);
  for (const level of levels) assert.equal(parse(['--log-level', level]).logLevel, level);
  assert.throws(() => parse(['--log-level', 'loud']), ConfigError);
  // `--chain`: the presets the row names.
  const chains = spans('chain').filter((s) => /^[a-z]+$/.test(s));
  assert.deepEqual(chains, ['tiramisu', 'localhost', 'braga', 'kaolin']);
  for (const chain of chains) assert.equal(parse(['--chain', chain]).chainName, chain);
  assert.throws(() => parse(['--chain', 'mainnet']), /--chain must be one of/);
  // `--protocol dbchain|v1|auto` in the flag cell itself.
  for (const protocol of ['dbchain', 'v1', 'auto'])
    assert.equal(parse(['--rpc', 'http://127.0.0.1:9', '--protocol', protocol]).protocol, protocol);
  assert.throws(() => parse(['--protocol', 'v2']), /--protocol must be one of/);
  // Bounds stated in the rows: --rpc-budget at most 1,000,000.
  assert.match(
    defined(
      ROWS.find((r) => r.flag === 'rpc-budget'),
      'rpc-budget',
    ).meaning,
    /at most 1,000,000/,
  );
  assert.equal(parse(['--rpc-budget', '1000000']).rpcBudget, 1_000_000);
  assert.throws(() => parse(['--rpc-budget', '1000001']), /at most 1000000/);
});

test('README Configuration: each "at most N" a row states is the bound serve enforces, with a message naming the flag', () => {
  const bounded = ROWS.flatMap(({ flag, meaning }) => {
    const most = /\(at most ([\d,]+)[;)]/.exec(meaning)?.[1];
    return most === undefined ? [] : [{ flag, most: Number(most.replace(/,/g, '')) }];
  });
  assert.deepEqual(bounded.map((b) => b.flag).sort(), [
    'block-time',
    'confirmations',
    'live-lag',
    'min-block-timeout',
    'rate-limit',
    'rpc-budget',
  ]);
  for (const { flag, most } of bounded) {
    assert.doesNotThrow(() => parse([`--${flag}`, String(most)]), `--${flag} ${most}`);
    assert.throws(
      () => parse([`--${flag}`, String(most + 1)]),
      (e: Error) => e instanceof ConfigError && e.message === `--${flag} must be at most ${most}`,
    );
    assert.throws(
      () => parse([`--${flag}`, 'x']),
      (e: Error) => e instanceof ConfigError && e.message === `--${flag} must be a number`,
    );
  }
});
