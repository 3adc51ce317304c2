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
 * The changes the addon makes to hnswlib's HierarchicalNSW (hnswalg.h). The headers compiled are a copy
 * (native/gen/, remade at each build); every patch must apply exactly as often as written, or the build
 * stops. The addon changes a graph from one thread at a time (every change waits for the searches in
 * flight, and a rebuild builds in one worker thread), so hnswlib's locks for concurrent writers are costs
 * without a use:
 * - MAX_LABEL_OPERATION_LOCKS mutexes per index, whatever its size: one instead;
 * - a mutex per element of capacity (40 bytes each on glibc): none (NoLock does nothing);
 * a level per element takes one byte instead of an int;
 * and the label of each element is kept once, in the addon's map (src/labelMirror.h), not as 8 bytes inside
 * every element plus an unordered_map entry; the level-0 block is reserved and grown in place (src/level0.h)
 * instead of malloc'd and realloc'd; and hnswlib's own file reading and writing, which assume the label
 * inside the element, refuse (the addon's graphFile.h reads and writes the same file format).
 */
const HNSW_PATCHES = [
  ['static const tableint MAX_LABEL_OPERATION_LOCKS = 65536;', 'static const tableint MAX_LABEL_OPERATION_LOCKS = 1;'],
  [
    'namespace hnswlib {\ntypedef unsigned int tableint;',
    '#include "../../src/labelMirror.h"\n#include "../../src/level0.h"\n\nnamespace hnswlib {\n' +
      'struct NoLocks { int operator[](size_t) const { return 0; } };\n' +
      'struct NoLock { explicit NoLock(int) {} NoLock(int, std::defer_lock_t) {} void lock() {} void unlock() {} };\n' +
      'typedef unsigned int tableint;',
  ],
  ['std::vector<std::mutex> link_list_locks_;', 'NoLocks link_list_locks_;'],
  // A level in one byte: levels are -ln(uniform) / ln(m), below 64 for any m ≥ 2 (loads refuse more).
  ['std::vector<int> element_levels_;', 'std::vector<int8_t> element_levels_;'],
  ['element_levels_ = std::vector<int>(max_elements);', 'element_levels_ = std::vector<int8_t>(max_elements);'],
  ['link_list_locks_(max_elements),', ''],
  ['std::vector<std::mutex>(new_max_elements).swap(link_list_locks_);', ''],
  ['std::vector<std::mutex>(max_elements).swap(link_list_locks_);', ''],
  [/std::unique_lock <std::mutex> (\w+)\(link_list_locks_\[/g, 'NoLock $1(link_list_locks_[', 8],
  ['std::unordered_map<labeltype, tableint> label_lookup_;', 'mutable arkivector::LabelMirror label_lookup_;'],
  [
    'size_data_per_element_ = size_links_level0_ + data_size_ + sizeof(labeltype);',
    'size_data_per_element_ = size_links_level0_ + data_size_;',
  ],
  [
    'memcpy(&return_label, (data_level0_memory_ + internal_id * size_data_per_element_ + label_offset_), sizeof(labeltype));',
    'return_label = label_lookup_.labelAt(internal_id);',
  ],
  [
    'memcpy((data_level0_memory_ + internal_id * size_data_per_element_ + label_offset_), &label, sizeof(labeltype));',
    'label_lookup_.setLabel(internal_id, label);',
  ],
  ['memcpy(getExternalLabeLp(cur_c), &label, sizeof(labeltype));', 'setExternalLabel(cur_c, label);'],
  ['*ll_cur |= DELETE_MARK;', '*ll_cur |= DELETE_MARK;\n            label_lookup_.setDead(internalId, true);'],
  ['*ll_cur &= ~DELETE_MARK;', '*ll_cur &= ~DELETE_MARK;\n            label_lookup_.setDead(internalId, false);'],
  ['char *data_level0_memory_{nullptr};', 'char *data_level0_memory_{nullptr};\n    size_t level0Reserved{0};'],
  [
    'data_level0_memory_ = (char *) malloc(max_elements_ * size_data_per_element_);',
    'data_level0_memory_ = arkivector::level0Alloc(max_elements_ * size_data_per_element_, level0Reserved);',
  ],
  [
    'char * data_level0_memory_new = (char *) realloc(data_level0_memory_, new_max_elements * size_data_per_element_);',
    'char * data_level0_memory_new = arkivector::level0Grow(data_level0_memory_, max_elements_ * size_data_per_element_, new_max_elements * size_data_per_element_, level0Reserved);',
  ],
  ['free(data_level0_memory_);', 'arkivector::level0Free(data_level0_memory_, level0Reserved);'],
  [
    'void saveIndex(const std::string &location) {',
    'void saveIndex(const std::string &) override { throw std::runtime_error("the addon writes graphs with graphFile.h"); }\n' +
      '    void saveIndexAsHnswlib(const std::string &location) {',
  ],
  [
    'void loadIndex(const std::string &location, SpaceInterface<dist_t> *s, size_t max_elements_i = 0) {',
    'void loadIndex(const std::string &, SpaceInterface<dist_t> *, size_t = 0) { throw std::runtime_error("the addon reads graphs with graphFile.h"); }\n' +
      '    void loadIndexAsHnswlib(const std::string &location, SpaceInterface<dist_t> *s, size_t max_elements_i = 0) {',
  ],
];

/** hnswalg.h with every patch applied, or the build stops naming the one that did not apply. */
function patchHnsw(text, file) {
  for (const [from, to, times = 1] of HNSW_PATCHES) {
    const found = typeof from === 'string' ? text.split(from).length - 1 : (text.match(from) ?? []).length;
    if (found !== times)
      fail(
        `arkivector: ${file} does not read as the build expects (${String(from)} found ${found} times, not ${times})`,
      );
    text = typeof from === 'string' ? text.split(from).join(to) : text.replace(from, to);
  }
  return text;
}

function copyHeaders() {
  const from = join(dirname(createRequire(import.meta.url).resolve('hnswlib-node/package.json')), 'src', 'hnswlib');
  const to = join(here, 'gen', 'hnswlib');
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    if (!name.endsWith('.h')) continue;
    let text = readFileSync(join(from, name), 'utf8');
    if (name === 'hnswalg.h') text = patchHnsw(text, join(from, name));
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
