// The package's `install` script (npm runs it after the dependencies, on `npm ci` and `npm install`
// alike): compiles arkivector's native engine (native/src/addon.cc over the hnswlib headers inside
// hnswlib-node) with node-gyp, as npm builds hnswlib-node itself. Nothing is downloaded: npm's bundled
// node-gyp, and the headers Node ships beside its binary (<prefix>/include/node) unless npm's `nodedir`
// names others. No C++ compiler means the same node-gyp failure hnswlib-node's own install gives, then one
// paragraph saying what to install (and no stack trace of this script).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * hnswlib's HierarchicalNSW holds MAX_LABEL_OPERATION_LOCKS mutexes per index, whatever its size, so that
 * several threads may write one label at once; the addon changes a graph from one thread at a time, so
 * that fixed cost would be every collection's least cost. The headers compiled are a copy (native/gen/,
 * remade at each build) with fewer locks; the patch must apply exactly, or the build stops.
 */
const LABEL_LOCKS_FROM = 'static const tableint MAX_LABEL_OPERATION_LOCKS = 65536;';
const LABEL_LOCKS_TO = 'static const tableint MAX_LABEL_OPERATION_LOCKS = 1;';

function copyHeaders() {
  const from = join(dirname(createRequire(import.meta.url).resolve('hnswlib-node/package.json')), 'src', 'hnswlib');
  const to = join(here, 'gen', 'hnswlib');
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    if (!name.endsWith('.h')) continue;
    let text = readFileSync(join(from, name), 'utf8');
    if (name === 'hnswalg.h') {
      if (text.split(LABEL_LOCKS_FROM).length !== 2)
        fail(`arkivector: ${join(from, name)} does not declare the label locks as expected (${LABEL_LOCKS_FROM})`);
      text = text.replace(LABEL_LOCKS_FROM, LABEL_LOCKS_TO);
    }
    writeFileSync(join(to, name), text);
  }
}

/** What a failed build prints after node-gyp's own error: what to install, and how to build again. */
const NO_TOOLCHAIN_HINT =
  'arkivector: the native graph engine could not be built (the node-gyp error above). Like hnswlib-node, it ' +
  'compiles at install and needs a C++17 compiler, make and Python 3: on Debian or Ubuntu ' +
  '`apt-get install build-essential python3`, on macOS `xcode-select --install`, on Windows the Visual Studio ' +
  'Build Tools ("Desktop development with C++"). Then run `npm rebuild arkivector` (in a checkout: ' +
  '`node native/build.mjs`).';

/** Prints a failure without a stack trace and exits with its status. */
function fail(message, status = 1) {
  process.stderr.write(`\n${message}\n`);
  process.exit(status);
}

function nodeGyp() {
  // npm names its bundled node-gyp for every lifecycle script it runs.
  const fromNpm = process.env.npm_config_node_gyp;
  if (fromNpm && existsSync(fromNpm)) return fromNpm;
  const npm = process.env.npm_execpath;
  if (npm) {
    const beside = join(dirname(npm), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    if (existsSync(beside)) return beside;
  }
  const global = join(
    dirname(process.execPath),
    '..',
    'lib',
    'node_modules',
    'npm',
    'node_modules',
    'node-gyp',
    'bin',
    'node-gyp.js',
  );
  if (existsSync(global)) return global;
  return fail('arkivector: node-gyp (bundled with npm) not found; run the install through npm');
}

copyHeaders();
const args = [nodeGyp(), 'rebuild'];
const prefix = join(dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node_api.h')))
  args.push(`--nodedir=${prefix}`);
try {
  execFileSync(process.execPath, args, { cwd: here, stdio: 'inherit' });
} catch (error) {
  // node-gyp has written its own error (a missing make, compiler or Python) to the inherited stderr.
  fail(NO_TOOLCHAIN_HINT, typeof error?.status === 'number' && error.status !== 0 ? error.status : 1);
}
