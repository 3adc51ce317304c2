#!/usr/bin/env node
// The `arkivector` command: loads the TypeScript sources through tsx so the package runs without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
