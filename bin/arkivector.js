#!/usr/bin/env node
// The `arkivector` command. Installed from the package it runs the compiled build (dist/, made by
// `npm run build` when the package is packed); no TypeScript runner is needed. In a checkout, where
// src/ and the devDependency tsx are present, it runs the sources instead, so an edit never meets a
// stale build.
import { existsSync } from 'node:fs';

const sources = new URL('../src/cli.ts', import.meta.url);
const build = new URL('../dist/src/cli.js', import.meta.url);

async function tsxRegister() {
  try {
    return (await import('tsx/esm/api')).register;
  } catch {
    return undefined;
  }
}

const register = existsSync(sources) ? await tsxRegister() : undefined;
if (register) {
  register();
  await import(sources.href);
} else if (existsSync(build)) {
  await import(build.href);
} else {
  process.stderr.write('arkivector: the build is missing (dist/); run `npm run build` in this checkout\n');
  process.exit(1);
}
