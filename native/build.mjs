// The package's `install` script (npm runs it after the dependencies, on `npm ci` and `npm install`
// alike): compiles arkivector's native engine (native/src/addon.cc over the hnswlib headers inside
// hnswlib-node) with node-gyp, as npm builds hnswlib-node itself. Nothing is downloaded: npm's bundled
// node-gyp, and the headers Node ships beside its binary (<prefix>/include/node) unless npm's `nodedir`
// names others. No C++ compiler means the same node-gyp failure hnswlib-node's own install gives first.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

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
  throw new Error('arkivector: node-gyp (bundled with npm) not found; run the install through npm');
}

const args = [nodeGyp(), 'rebuild'];
const prefix = join(dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node_api.h')))
  args.push(`--nodedir=${prefix}`);
execFileSync(process.execPath, args, { cwd: here, stdio: 'inherit' });
