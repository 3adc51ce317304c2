// The README promises that `arkivector serve` says when it loads a native build of hnswlib-node: that rests on
// reading the marker `npm run build:native` / `build:portable` leave next to the addon, and on anything else
// (no marker, a damaged one) meaning npm's default build.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ADDON_BUILD_MARKER, addonBuild } from '../../src/engine/addonBuild.ts';

test('addon build: the marker names a native or portable build; no marker or a damaged one is the npm default', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'arkivector-addon-'));
  try {
    assert.deepEqual(addonBuild(dir), { build: 'npm default', cxxflags: null });
    await writeFile(join(dir, ADDON_BUILD_MARKER), JSON.stringify({ build: 'native', cxxflags: '-O3 -march=native' }));
    assert.deepEqual(addonBuild(dir), { build: 'native', cxxflags: '-O3 -march=native' });
    await writeFile(join(dir, ADDON_BUILD_MARKER), JSON.stringify({ build: 'portable' }));
    assert.deepEqual(addonBuild(dir), { build: 'portable', cxxflags: null });
    await writeFile(join(dir, ADDON_BUILD_MARKER), '{"build": "native"'); // cut short
    assert.deepEqual(addonBuild(dir), { build: 'npm default', cxxflags: null });
    await writeFile(join(dir, ADDON_BUILD_MARKER), JSON.stringify({ build: 'turbo' }));
    assert.deepEqual(addonBuild(dir), { build: 'npm default', cxxflags: null });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
