// The engine choice (src/engine/hnsw/engine.ts): native by default, hnswlib-node with
// ARKIVECTOR_ENGINE=hnswlib-node. The whole suite runs the default; the engine's recall, filtered-path and
// rebuild suites also pass unchanged against the opt-out engine (run in a child process with the variable
// set, as a node would run). Stores hold the engine they were created with; a snapshot of the other engine
// is converted (engineConversion.test.ts), and a misspelt engine is an error.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { InvalidArgumentError } from '../../src/collections/index.ts';
import { CollectionStore } from '../../src/engine/index.ts';
import { ENGINE_ENV, selectedEngine } from '../../src/engine/hnsw/engine.ts';
import { addonPath } from '../../src/engine/hnsw/nativeAddon.ts';
import { clustered, definition, makeRecord } from './helpers.ts';

const SUITES = ['test/engine/search.test.ts', 'test/engine/filteredPaths.test.ts', 'test/engine/rebuild.test.ts'];
const before = process.env[ENGINE_ENV];

afterEach(() => {
  if (before === undefined) delete process.env[ENGINE_ENV];
  else process.env[ENGINE_ENV] = before;
});

describe('native engine behind the store', () => {
  test('the engine suites (recall, filtered paths, rebuilds) pass with ARKIVECTOR_ENGINE=hnswlib-node', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', ...SUITES], {
      // Without the parent's NODE_TEST_CONTEXT, the child reports in its own output rather than to this runner.
      env: { ...process.env, NODE_TEST_CONTEXT: undefined, [ENGINE_ENV]: 'hnswlib-node' },
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

  test('a store holds the engine it was created with; the default is native; a snapshot loads as this node’s engine', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-engine-'));
    try {
      const def = definition(16);
      const records = clustered(300, 16, 5).vectors.map((v, i) => makeRecord(i, v));
      delete process.env[ENGINE_ENV];
      const native = new CollectionStore('test', def);
      assert.equal(native.graphStats.engine, 'native');
      await native.apply({ remove: [], upsert: records });
      const q = Array.from(records[7]!.vector);
      const answer = native.search({ vector: q, k: 5, efSearch: 100 });
      assert.equal(answer.results[0]!.record.id, records[7]!.id);
      await native.save(join(dir, 'native'));
      const back = await CollectionStore.load(join(dir, 'native'), 'test', def);
      assert.deepEqual(back.search({ vector: q, k: 5, efSearch: 100 }), answer);
      process.env[ENGINE_ENV] = 'hnswlib-node';
      // Converted from the vectors in its graph (engineConversion.test.ts): the store is of this node's engine.
      const converted = await CollectionStore.load(join(dir, 'native'), 'test', def);
      assert.equal(converted.graphStats.engine, 'hnswlib-node');
      const plain = new CollectionStore('test', def);
      assert.equal(plain.graphStats.engine, 'hnswlib-node');
      await plain.apply({ remove: [], upsert: records });
      assert.deepEqual(
        plain.search({ vector: q, k: 5, efSearch: 100 }).results.map((h) => h.record.id),
        answer.results.map((h) => h.record.id),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an unknown engine name is an error, not the default', () => {
    process.env[ENGINE_ENV] = 'nativ';
    assert.throws(() => selectedEngine(), InvalidArgumentError);
    process.env[ENGINE_ENV] = '';
    assert.equal(selectedEngine(), 'native');
    delete process.env[ENGINE_ENV];
    assert.equal(selectedEngine(), 'native');
    process.env[ENGINE_ENV] = 'hnswlib-node';
    assert.equal(selectedEngine(), 'hnswlib-node');
  });

  test('an addon that was not built is an error naming the build command and the other engine', async () => {
    // The folder of a package installed with --ignore-scripts: no native/build/ above it.
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-unbuilt-'));
    try {
      assert.throws(
        () => addonPath(dir),
        (error: Error) =>
          error.message.includes('not built') &&
          error.message.includes('`node native/build.mjs`') &&
          error.message.includes('ARKIVECTOR_ENGINE=hnswlib-node'),
      );
      assert.match(addonPath(), /arkivector_native\.node$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
