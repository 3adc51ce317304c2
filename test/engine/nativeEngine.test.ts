// The native engine behind the store (ARKIVECTOR_ENGINE=native, src/engine/hnsw/engine.ts): the engine's
// recall, filtered-path and rebuild suites pass against it unchanged (run in a child process with the
// variable set, as a node would run), stores it creates hold native graphs, a snapshot of one engine
// is refused by the other (the node then rebuilds from the chain), and a misspelt engine is an error.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { InvalidArgumentError } from '../../src/collections/index.ts';
import { CollectionStore } from '../../src/engine/index.ts';
import { ENGINE_ENV, selectedEngine } from '../../src/engine/hnsw/engine.ts';
import { clustered, definition, makeRecord } from './helpers.ts';

const SUITES = ['test/engine/search.test.ts', 'test/engine/filteredPaths.test.ts', 'test/engine/rebuild.test.ts'];
const before = process.env[ENGINE_ENV];

afterEach(() => {
  if (before === undefined) delete process.env[ENGINE_ENV];
  else process.env[ENGINE_ENV] = before;
});

describe('native engine behind the store', () => {
  test('the engine suites (recall, filtered paths, rebuilds) pass with ARKIVECTOR_ENGINE=native', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', ...SUITES], {
      // Without the parent's NODE_TEST_CONTEXT, the child reports in its own output rather than to this runner.
      env: { ...process.env, NODE_TEST_CONTEXT: undefined, [ENGINE_ENV]: 'native' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.stderr.on('data', (b: Buffer) => {
      out += b.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, out.slice(-4000));
    assert.match(out, /# fail 0/);
  });

  test('a store holds the engine it was created with; a snapshot of the other engine is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-engine-'));
    try {
      const def = definition(16);
      const records = clustered(300, 16, 5).vectors.map((v, i) => makeRecord(i, v));
      process.env[ENGINE_ENV] = 'native';
      const native = new CollectionStore('test', def);
      await native.apply({ remove: [], upsert: records });
      const q = Array.from(records[7]!.vector);
      const answer = native.search({ vector: q, k: 5, efSearch: 100 });
      assert.equal(answer.results[0]!.record.id, records[7]!.id);
      await native.save(join(dir, 'native'));
      const back = await CollectionStore.load(join(dir, 'native'), 'test', def);
      assert.deepEqual(back.search({ vector: q, k: 5, efSearch: 100 }), answer);
      delete process.env[ENGINE_ENV];
      await assert.rejects(CollectionStore.load(join(dir, 'native'), 'test', def), InvalidArgumentError);
      const plain = new CollectionStore('test', def);
      await plain.apply({ remove: [], upsert: records });
      await plain.save(join(dir, 'plain'));
      process.env[ENGINE_ENV] = 'native';
      await assert.rejects(CollectionStore.load(join(dir, 'plain'), 'test', def), /hnswlib-node engine/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an unknown engine name is an error, not the default', () => {
    process.env[ENGINE_ENV] = 'nativ';
    assert.throws(() => selectedEngine(), InvalidArgumentError);
    process.env[ENGINE_ENV] = '';
    assert.equal(selectedEngine(), 'hnswlib-node');
  });
});
