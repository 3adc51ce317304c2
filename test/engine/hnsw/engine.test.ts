// One engine serves every store: the native graph. The retired engine setting (src/engine/hnsw/engine.ts)
// changes nothing but a warning, naming the variable and how to silence it; a snapshot of the retired
// hnswlib-node engine is converted on load (engineConversion.test.ts).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { CollectionStore } from '../../../src/engine/index.ts';
import { ENGINE_ENV, engineSettingWarning, selectedEngine } from '../../../src/engine/hnsw/engine.ts';
import { addonPath } from '../../../src/engine/hnsw/nativeAddon.ts';
import { clustered, definition, makeRecord } from '../helpers.ts';

const before = process.env[ENGINE_ENV];

afterEach(() => {
  if (before === undefined) delete process.env[ENGINE_ENV];
  else process.env[ENGINE_ENV] = before;
});

describe('native engine behind the store', () => {
  test('a store is native whatever ARKIVECTOR_ENGINE says, and its snapshot loads as it was', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-engine-'));
    try {
      const def = definition(16);
      const records = clustered(300, 16, 5).vectors.map((v, i) => makeRecord(i, v));
      process.env[ENGINE_ENV] = 'hnswlib-node';
      const store = new CollectionStore('test', def);
      assert.equal(store.graphStats.engine, 'native');
      await store.apply({ remove: [], upsert: records });
      const q = Array.from(records[7]!.vector);
      const answer = store.search({ vector: q, k: 5, efSearch: 100 });
      assert.equal(answer.results[0]!.record.id, records[7]!.id);
      await store.save(join(dir, 'native'));
      const back = await CollectionStore.load(join(dir, 'native'), 'test', def);
      assert.equal(back.graphStats.engine, 'native');
      assert.equal(back.converted, false);
      assert.deepEqual(back.search({ vector: q, k: 5, efSearch: 100 }), answer);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the retired setting: unset, empty or native is silent; anything else warns once and serves native', () => {
    for (const quiet of [undefined, '', 'native']) assert.equal(engineSettingWarning(quiet), undefined);
    for (const value of ['hnswlib-node', 'nativ']) {
      const warning = engineSettingWarning(value) ?? '';
      assert.ok(warning.includes(`${ENGINE_ENV}="${value}" is ignored`), warning);
      assert.ok(warning.includes(`unset ${ENGINE_ENV}`), warning);
    }
    assert.ok((engineSettingWarning('x'.repeat(10_000)) ?? '').length < 400, 'a long value is cut');
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      process.env[ENGINE_ENV] = 'hnswlib-node';
      assert.equal(selectedEngine(), 'native');
      assert.equal(selectedEngine(), 'native');
      delete process.env[ENGINE_ENV];
      assert.equal(selectedEngine(), 'native');
    } finally {
      process.off('warning', onWarning);
    }
    // A warning is emitted on the next tick; at most once per process.
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        assert.ok(warnings.filter((w) => w.includes(ENGINE_ENV)).length <= 1, warnings.join('\n'));
        resolve();
      }),
    );
  });

  test('an addon that was not built is an error naming the build command', async () => {
    // The folder of a package installed with --ignore-scripts: no native/build/ above it.
    const dir = await mkdtemp(join(tmpdir(), 'arkivector-unbuilt-'));
    try {
      assert.throws(
        () => addonPath(dir),
        (error: Error) => error.message.includes('not built') && error.message.includes('`node native/build.mjs`'),
      );
      assert.match(addonPath(), /arkivector_native\.node$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
