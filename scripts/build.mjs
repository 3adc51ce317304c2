// `npm run build` (run by `prepare`, so by `npm install` in a checkout and by `npm pack`): a clean dist/
// compiled by tsc from tsconfig.build.json, plus the console's static files, which tsc does not copy.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const root = new URL('..', import.meta.url);
rmSync(new URL('dist', root), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
cpSync(new URL('src/console/public', root), new URL('dist/src/console/public', root), { recursive: true });
