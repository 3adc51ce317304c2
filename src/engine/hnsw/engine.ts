// The retired engine setting. Every store runs on the native graph (halfGraph.ts); the hnswlib-node store
// engine that `ARKIVECTOR_ENGINE=hnswlib-node` used to pick is gone (hnswlib-node stays the benchmarks' raw
// baseline). A node started with the variable set to anything but `native` warns and serves natively:
// there is no other engine left for replicas to disagree on, and its snapshots are converted on load.

import type { MetricOps } from '../metrics.ts';
import type { GraphEngine, GraphParams } from './graph.ts';
import { HalfGraph } from './halfGraph.ts';

/** The environment variable that used to select the engine of new stores. */
export const ENGINE_ENV = 'ARKIVECTOR_ENGINE';

/**
 * What a node tells its operator about the retired engine setting.
 * @param value the setting (`ARKIVECTOR_ENGINE`), undefined when unset
 * @returns the warning to log once, or undefined when the setting is unset, empty or `native`
 * @example engineSettingWarning('hnswlib-node') // 'ARKIVECTOR_ENGINE="hnswlib-node" is ignored: …'
 */
export function engineSettingWarning(value: string | undefined): string | undefined {
  if (value === undefined || value === '' || value === 'native') return undefined;
  const shown = JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return `${ENGINE_ENV}=${shown} is ignored: the hnswlib-node store engine was retired and every store runs on the native engine (snapshots of the old engine are converted on load); unset ${ENGINE_ENV} to silence this warning`;
}

let warned = false;

/**
 * The engine stores run on: always native. Reads `ARKIVECTOR_ENGINE` only to warn once (as a process
 * warning) when it asks for something else; a caller with a logger should log `engineSettingWarning` of
 * its parsed configuration instead.
 */
export function selectedEngine(): GraphEngine {
  const warning = engineSettingWarning(process.env[ENGINE_ENV]);
  if (warning !== undefined && !warned) {
    warned = true;
    process.emitWarning(warning, { code: 'ARKIVECTOR_ENGINE_RETIRED' });
  }
  return 'native';
}

/** An empty graph (for the measurement scripts, which name the engine they measure). */
export function createGraph(
  _engine: GraphEngine,
  ops: MetricOps,
  dim: number,
  params: GraphParams,
  capacity?: number,
): HalfGraph {
  return HalfGraph.create(ops, dim, params, capacity);
}
