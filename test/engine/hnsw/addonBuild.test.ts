// `npm install` builds the native graph engine (native/build.mjs, the package's install script). On a
// machine without a C++ compiler it fails as hnswlib-node's own install does (node-gyp's error), then says
// in one paragraph what to install and how to build again, without a stack trace of the script. Run on a
// copy of native/ with a PATH that holds everything this one does except the compilers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { test } from 'node:test';

const COMPILER = /(^|-)(c\+\+|g\+\+|gcc|cc|clang|clang\+\+)(-[\d.]+)?$/;

/** A folder of links to every program on PATH but the C and C++ compilers. */
async function pathWithoutCompilers(into: string): Promise<string> {
  await mkdir(into);
  const seen = new Set<string>();
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (seen.has(name) || COMPILER.test(name)) continue;
      seen.add(name);
      await symlink(join(dir, name), join(into, name));
    }
  }
  return into;
}

test('without a C++ compiler the install fails with node-gyp’s error and what to install, no stack trace', async (t) => {
  // node-gyp would download Node's headers when they are not beside the binary: no network in tests.
  const prefix = join(dirname(process.execPath), '..');
  if (!process.env.npm_config_nodedir && !existsSync(join(prefix, 'include', 'node', 'node_api.h'))) {
    t.skip('Node headers are not beside the binary (node-gyp would download them)');
    return;
  }
  const root = await mkdtemp(join(tmpdir(), 'arkivector-nocc-'));
  try {
    const pkg = join(root, 'pkg');
    await mkdir(pkg);
    for (const part of ['build.mjs', 'binding.gyp', 'src'])
      await cp(resolve('native', part), join(pkg, 'native', part), { recursive: true });
    await symlink(resolve('node_modules'), join(pkg, 'node_modules'));
    const bin = await pathWithoutCompilers(join(root, 'bin'));
    const run = spawnSync(process.execPath, [join('native', 'build.mjs')], {
      cwd: pkg,
      env: { ...process.env, PATH: bin, CXX: undefined, CC: undefined },
      encoding: 'utf8',
      timeout: 180_000,
    });
    const out = `${run.stdout}\n${run.stderr}`;
    assert.notEqual(run.status, 0, out.slice(-3000));
    assert.match(run.stderr, /gyp ERR!/, 'node-gyp’s own error, as hnswlib-node’s install gives');
    assert.match(run.stderr, /the native graph engine could not be built/);
    assert.match(run.stderr, /C\+\+17 compiler, make and Python 3/);
    assert.match(run.stderr, /npm rebuild arkivector/);
    assert.doesNotMatch(run.stderr, /at .*build\.mjs:\d+/, 'no stack trace of the build script');
    assert.equal(existsSync(join(pkg, 'native', 'build', 'Release', 'arkivector_native.node')), false);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
