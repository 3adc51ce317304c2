// Which graph engine a new store uses (issue 23): arkivector's own native addon by default (binary16
// inside the graph, kernels chosen at run time), hnswlib-node with `ARKIVECTOR_ENGINE=hnswlib-node`.
// A store keeps the engine it was created with (its rebuilds build the same one); a snapshot records
// it. A snapshot of the other engine is converted from its own binary16 vectors, without reading the
// chain (storeSnapshot.ts); only an hnswlib-node node without the native addon refuses a native one.

import { InvalidArgumentError } from '../../collections/index.ts';
import type { MetricOps } from '../metrics.ts';
import { GRAPH_ENGINES, type Graph, type GraphEngine, type GraphParams, HnswGraph } from './graph.ts';
import { HalfGraph } from './halfGraph.ts';

/** The environment variable that selects the engine of new stores. */
export const ENGINE_ENV = 'ARKIVECTOR_ENGINE';

/**
 * The engine new stores use: `ARKIVECTOR_ENGINE` (native or hnswlib-node), native when unset.
 * @throws InvalidArgumentError for any other value (a typo must not silently pick the default)
 */
export function selectedEngine(): GraphEngine {
  const value = process.env[ENGINE_ENV];
  if (value === undefined || value === '') return 'native';
  if ((GRAPH_ENGINES as readonly string[]).includes(value)) return value as GraphEngine;
  throw new InvalidArgumentError(`${ENGINE_ENV}=${value}: expected one of ${GRAPH_ENGINES.join(', ')}`);
}

/** An empty graph of an engine. */
export function createGraph(
  engine: GraphEngine,
  ops: MetricOps,
  dim: number,
  params: GraphParams,
  capacity?: number,
): Graph {
  return engine === 'native'
    ? HalfGraph.create(ops, dim, params, capacity)
    : HnswGraph.create(ops, dim, params, capacity);
}

/** A graph of an engine read from the file its `write` made. */
export function readGraph(
  engine: GraphEngine,
  ops: MetricOps,
  dim: number,
  params: GraphParams,
  path: string,
): Promise<Graph> {
  return engine === 'native' ? HalfGraph.read(ops, dim, params, path) : HnswGraph.read(ops, dim, params, path);
}
