// Which build of the hnswlib-node addon this process loads: `npm run build:native` and
// `npm run build:portable` (scripts/build-native.mjs) leave a marker file next to the addon; without
// one it is npm's default (portable) build. The gateway logs it at start, so a native build is never a
// surprise in a bug report.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The marker's file name, in hnswlib-node's build/ folder. */
export const ADDON_BUILD_MARKER = 'arkivector-build.json';

export type AddonBuild = { build: 'native' | 'portable' | 'npm default'; cxxflags: string | null };

/**
 * Reads the addon's build marker (a few hundred bytes; any failure means npm's default build).
 * @param buildDir the addon's build/ folder (hnswlib-node's own, unless a test points elsewhere)
 * @returns the build and the CXXFLAGS it was compiled with
 * @example addonBuild() // { build: 'native', cxxflags: '-O3 -march=native' }
 */
export function addonBuild(buildDir?: string): AddonBuild {
  try {
    const dir = buildDir ?? join(dirname(createRequire(import.meta.url).resolve('hnswlib-node/package.json')), 'build');
    const marker = JSON.parse(readFileSync(join(dir, ADDON_BUILD_MARKER), 'utf8')) as unknown;
    if (typeof marker === 'object' && marker !== null) {
      const { build, cxxflags } = marker as Record<string, unknown>;
      if (build === 'native' || build === 'portable')
        return { build, cxxflags: typeof cxxflags === 'string' ? cxxflags : null };
    }
  } catch {
    // No marker: the build npm made at install.
  }
  return { build: 'npm default', cxxflags: null };
}
