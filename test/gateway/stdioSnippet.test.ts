// The stdio client entry shared by the banner and the console: flags of this node, placeholders for keys,
// and no secret from a URL (credentials, a query, or a path that might hold a key are shown redacted).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { stdioServerEntry } from '../../src/stdioSnippet.ts';

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
