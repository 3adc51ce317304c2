// Every install line shown anywhere is one that works from what a user has: the package is in no registry,
// so the lines are the README's `npm pack` route (src/packageInfo.ts INSTALL_COMMANDS), which
// scripts/check-pack.sh runs as written. Here: the README, the console (node.json) and the banner show
// exactly those, nothing names a registry package, and the tarball `npm pack` leaves is ignored by git.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { INSTALL_COMMANDS, VERSION } from '../../src/packageInfo.ts';
import { defined } from '../helpers/defined.ts';
import { docSection, fencedBlocks, README, shellCommands } from '../helpers/readme.ts';

test('the README installs with the lines the console shows (INSTALL_COMMANDS), from npm pack', () => {
  const [block] = fencedBlocks(docSection('README.md', 'Installing'), 'sh');
  const npmLines = shellCommands(defined(block, 'the Installing sh block'))
    .filter((line) => line.startsWith('npm '))
    .map((line) => line.replace(/\s+#.*$/, ''));
  assert.deepEqual(npmLines, [...INSTALL_COMMANDS]);
  assert.deepEqual(INSTALL_COMMANDS, ['npm pack', `npm install -g ./arkivector-${VERSION}.tgz`]);
});

/** Every file a user reads install instructions from: the README, the sources (banner, help) and the console. */
function shownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : /\.(ts|js|html)$/.test(e.name) ? [join(dir, e.name)] : [],
    );
  return ['README.md', ...walk('src'), ...walk('tools'), ...walk('indexer')];
}

test('nothing tells a user to install arkivector from a registry', () => {
  // `npm install -g arkivector`, `npm i arkivector`, `npx arkivector …`: a package no registry has.
  const registryInstall = /\bnpm (?:install|i|add)(?: -g| --global)* arkivector\b|\bnpx (?:-y )?arkivector\b/;
  for (const file of shownFiles()) {
    const text = readFileSync(file, 'utf8');
    assert.doesNotMatch(text, registryInstall, `${file} shows an install line that cannot work`);
  }
  assert.ok(README.includes(`npm install -g ./arkivector-${VERSION}.tgz`));
});

test('the tarball npm pack writes into the checkout is ignored by git', () => {
  // git check-ignore exits 0 when the path is ignored, 1 when not (execFileSync throws then).
  assert.doesNotThrow(() => execFileSync('git', ['check-ignore', '-q', `arkivector-${VERSION}.tgz`]));
});

test('package-lock.json is what npm install writes: the root entry says it has an install script', () => {
  // npm records `hasInstallScript` on the root package when package.json has an (pre|post)install script;
  // a lockfile without it was rewritten by every `npm install`, leaving a fresh clone's checkout dirty.
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts?: Record<string, string> };
  const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
    packages: Record<string, { hasInstallScript?: boolean }>;
  };
  const scripts = Object.keys(pkg.scripts ?? {});
  const installs = ['preinstall', 'install', 'postinstall'].some((s) => scripts.includes(s));
  assert.equal(lock.packages['']?.hasInstallScript === true, installs);
});
