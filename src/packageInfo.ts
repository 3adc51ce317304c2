// Facts about the installed package, found from this module's own location so they hold both in a
// checkout (src/ run through tsx) and in the published build (dist/src/): the package root, its version,
// and the path of the `arkivector` command.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** How many directories up from this module the package root may be (src/ or dist/src/). */
const MAX_DEPTH = 3;

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i <= MAX_DEPTH; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'bin', 'arkivector.js'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('arkivector: cannot find the package root (package.json beside bin/arkivector.js)');
}

export const PACKAGE_ROOT = findRoot();
export const VERSION: string = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')).version;
/** The `arkivector` command of this package, for the client snippets printed at start. */
export const BIN_PATH = join(PACKAGE_ROOT, 'bin', 'arkivector.js');
/**
 * How a user gets the `arkivector` command: the package is in no registry, so from a checkout, as the
 * README's "Installing" shows (scripts/check-pack.sh runs these lines from the README).
 */
export const INSTALL_COMMANDS: readonly string[] = ['npm pack', `npm install -g ./arkivector-${VERSION}.tgz`];
