// The stdio client entry shared by the banner and the console: flags of this node, placeholders for keys,
// and no secret from a URL (credentials, a query, or a path that might hold a key are shown redacted).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseServeConfig } from '../../src/config.ts';
import { parseLocalModel } from '../../src/embedder/local/catalog.ts';
import { stdioFacts, stdioServerEntry } from '../../src/stdioSnippet.ts';
import { spawnGateway } from '../helpers/gatewayProcess.ts';

test('the entry carries the rpc, the embedder flags and key placeholders; plain URLs are shown as given', () => {
  const { entry, redacted } = stdioServerEntry(
    {
      rpc: 'http://127.0.0.1:8545',
      embedder: { url: 'http://127.0.0.1:11434/v1', model: 'nomic-embed-text' },
      signer: true,
      embedderKey: true,
    },
    'arkivector',
  );
  assert.deepEqual(entry, {
    command: 'arkivector',
    args: [
      ...['serve', '--stdio', '--rpc', 'http://127.0.0.1:8545'],
      ...['--embedder', 'http://127.0.0.1:11434/v1', '--embedder-model', 'nomic-embed-text'],
    ],
    env: { ARKIVECTOR_PRIVATE_KEY: '0x…', ARKIVECTOR_EMBEDDER_KEY: 'sk-…' },
  });
  assert.equal(redacted, false);
  // A read-only node without an embedder: no env block, no embedder flags.
  assert.deepEqual(stdioServerEntry({ rpc: 'http://127.0.0.1:8545', signer: false, embedderKey: true }, 'x').entry, {
    command: 'x',
    args: ['serve', '--stdio', '--rpc', 'http://127.0.0.1:8545'],
  });
});

test('no secret of a URL reaches the entry', () => {
  const secret = fc.stringMatching(/^[A-Za-z0-9]{12,24}$/);
  const url = fc.oneof(
    secret.map((s) => ({ url: `https://user:${s}@embed.example/v1`, s })),
    secret.map((s) => ({ url: `https://embed.example/v1/${s}`, s })),
    secret.map((s) => ({ url: `https://embed.example/v1?key=${s}`, s })),
    secret.map((s) => ({ url: `https://rpc.example/${s}`, s })),
  );
  // A mirror's credentials stay out too.
  fc.assert(
    fc.property(secret, (s) => {
      const { entry, redacted } = stdioServerEntry(
        {
          rpc: 'http://127.0.0.1:8545',
          local: { kind: 'path', path: '/m', name: 'm', maxTokens: 512, queryPrefix: '', passagePrefix: '' },
          signer: false,
          embedderKey: false,
        },
        'arkivector',
      );
      assert.ok(!JSON.stringify(entry).includes(s) && !redacted);
      const mirrored = stdioServerEntry(
        {
          rpc: 'http://127.0.0.1:8545',
          local: parseLocalModel('someone/model'),
          modelHub: `https://user:${s}@mirror.example/hf`,
          signer: false,
          embedderKey: false,
        },
        'arkivector',
      );
      assert.ok(!JSON.stringify(mirrored.entry).includes(s), JSON.stringify(mirrored.entry));
      assert.equal(mirrored.redacted, true);
    }),
  );
  fc.assert(
    fc.property(url, url, ({ url: rpc, s: a }, { url: embedder, s: b }) => {
      const { entry, redacted } = stdioServerEntry(
        { rpc, embedder: { url: embedder, model: 'm' }, signer: false, embedderKey: false },
        'arkivector',
      );
      const text = JSON.stringify(entry);
      assert.ok(!text.includes(a) && !text.includes(b), text);
      assert.equal(redacted, true);
    }),
  );
});

test("the snippet carries the node's embedder and compat: a stdio node started from it embeds as this one does", () => {
  const rpc = 'http://127.0.0.1:8545';
  for (const flags of [
    [],
    ['--embedder', 'local:/models/mine'],
    ['--embedder', 'local:./rel/model', '--embedder-model', 'my-model'],
    ['--embedder', 'local:multilingual-e5-small'],
    ['--embedder', 'local:someone/custom-model'],
    ['--embedder', 'local:intfloat/multilingual-e5-small', '--embedder-model', 'e5'],
    ['--embedder', 'local:someone/custom-model', '--model-hub', 'http://127.0.0.1:9/hub'],
    ['--embedder', 'none'],
    ['--embedder', 'none', '--compat', 'kuradb'],
    ['--embedder', 'http://127.0.0.1:11434/v1', '--embedder-model', 'nomic-embed-text', '--compat', 'kuradb'],
  ]) {
    const node = parseServeConfig(['--rpc', rpc, ...flags], {});
    const { entry } = stdioServerEntry(stdioFacts(node, rpc, false, false), 'arkivector');
    const [serve, ...args] = entry.args;
    assert.equal(serve, 'serve');
    const copy = parseServeConfig(args, {});
    assert.deepEqual(
      [copy.stdio, copy.localEmbedder, copy.embedder, copy.compat, copy.modelHub],
      [true, node.localEmbedder, node.embedder, node.compat, node.modelHub],
      flags.join(' '),
    );
  }
  // The default model needs no flag.
  const plain = stdioServerEntry(stdioFacts(parseServeConfig(['--rpc', rpc], {}), rpc, false, false), 'x');
  assert.deepEqual(plain.entry.args, ['serve', '--stdio', '--rpc', rpc]);
});

test('a node started with --embedder local:PATH and --compat kuradb prints it in the banner and /console/node.json', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'arkivector-snippet-model-'));
  const args = ['--http', '127.0.0.1:0', '--devnet-port', '0', '--no-demo', '--no-data-dir'];
  const node = await spawnGateway([...args, '--embedder', `local:${folder}`, '--compat', 'kuradb']);
  try {
    const wanted = ['--embedder', `local:${folder}`, '--compat', 'kuradb'];
    assert.ok(node.banner.includes(JSON.stringify(wanted).slice(1, -1).replace(/,/g, ', ')), node.banner);
    const info = (await (await fetch(`${node.url}/console/node.json`)).json()) as { stdio: { args: string[] } };
    const at = info.stdio.args.indexOf('--embedder');
    assert.deepEqual(info.stdio.args.slice(at, at + 4), wanted);
  } finally {
    await node.stop();
    await rm(folder, { recursive: true, force: true });
  }
});
