// The package's `install` script (npm runs it after the dependencies, on `npm ci` and `npm install`
// alike): compiles arkivector's native engine (native/src/addon.cc over the hnswlib headers inside
// hnswlib-node) with node-gyp, as npm builds hnswlib-node itself. Nothing is downloaded: npm's bundled
// node-gyp, and the headers Node ships beside its binary (<prefix>/include/node) unless npm's `nodedir`
// names others. No C++ compiler means the same node-gyp failure hnswlib-node's own install gives, then one
// paragraph saying what to install (and no stack trace of this script).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

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
