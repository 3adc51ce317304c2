// Tests about one graph engine's specifics (the hnswlib-node engine's slab, the native engine's format-4
// snapshots) pin it with ARKIVECTOR_ENGINE for their suite, whatever the default is.
import { after, before } from 'node:test';
import { ENGINE_ENV } from '../../src/engine/hnsw/engine.ts';
import type { GraphEngine } from '../../src/engine/hnsw/graph.ts';

/** Sets ARKIVECTOR_ENGINE for the enclosing suite (call inside `describe`) and restores it after. */
export function useEngine(engine: GraphEngine): void {
  let was: string | undefined;
  before(() => {
    was = process.env[ENGINE_ENV];
    process.env[ENGINE_ENV] = engine;
  });
  after(() => {
    if (was === undefined) delete process.env[ENGINE_ENV];
    else process.env[ENGINE_ENV] = was;
  });
}
