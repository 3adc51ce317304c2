// `npm run build:native` / `npm run build:portable`: rebuilds this checkout's hnswlib-node addon for the
// CPU it runs on (`-march=native`, as pgvector's own Makefile builds; perf.md §2.2 measured +65–74 %
// QPS at 384 dims) or back to npm's default build. `npm rebuild` runs node-gyp (bundled with npm) with
// the package's allowScripts; node-gyp's Makefile appends CXXFLAGS from the environment. A marker file
// next to the addon says which build is there, so the gateway can log it at start (addonBuild.ts).
//
// A native addon dies with an illegal instruction on a CPU without the same features: never copy this
// node_modules to another machine or into an image built elsewhere.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';

const MODES = { native: '-O3 -march=native', portable: undefined };
const mode = process.argv[2];
if (!(mode in MODES)) {
  process.stderr.write('usage: node scripts/build-native.mjs native|portable\n');
  process.exit(2);
}
const flags = MODES[mode];
const root = new URL('..', import.meta.url);
const env = { ...process.env };
delete env.CXXFLAGS;
delete env.CFLAGS;
if (flags !== undefined) env.CXXFLAGS = flags;
// npm itself finds node-gyp (its bundled copy) and honours allowScripts; `--foreground-scripts` shows
// the compiler's output, so a failure is readable.
const npm = process.env.npm_execpath;
const [cmd, args] = npm?.endsWith('.js')
  ? [process.execPath, [npm, 'rebuild', 'hnswlib-node', '--foreground-scripts']]
  : ['npm', ['rebuild', 'hnswlib-node', '--foreground-scripts']];
process.stdout.write(`build-native: rebuilding hnswlib-node (${mode}${flags ? `: CXXFLAGS=${flags}` : ''})\n`);
execFileSync(cmd, args, { cwd: root, env, stdio: 'inherit' });

const addonDir = join(dirname(createRequire(import.meta.url).resolve('hnswlib-node/package.json')), 'build');
const marker = {
  build: mode,
  cxxflags: flags ?? null,
  cpu: cpus()[0]?.model ?? null,
  built_at: new Date().toISOString(),
};
writeFileSync(join(addonDir, 'arkivector-build.json'), `${JSON.stringify(marker, null, 2)}\n`);
// The addon just built must load here (an illegal-instruction build would not).
execFileSync(process.execPath, ['-e', "require('hnswlib-node')"], { cwd: root, stdio: 'inherit' });
process.stdout.write(
  `build-native: ${mode} build of hnswlib-node in place (${join(addonDir, 'Release/addon.node')})\n`,
);
