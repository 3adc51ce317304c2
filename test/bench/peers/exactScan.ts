// The exact scan bench:peers draws its ground truth with and runs as its `exact` system: the engine's own
// (HalfGraph.exact over the native addon: binary16 elements, the float32 query, ties by label), the scan
// the store's planner answers its `exact` mode with. The vectors go in through the graph's insert, at the
// narrowest graph settings, since the scan reads only the elements and never the links.

import { HalfGraph } from '../../../src/engine/hnsw/halfGraph.ts';
import { METRIC_OPS } from '../../../src/engine/index.ts';

/** The graph settings of the scan's index: the fewest links and the cheapest insert the addon takes. */
const SCAN_GRAPH = { m: 2, efConstruction: 1 } as const;

export class ExactScan {
  readonly #graph: HalfGraph;

  /**
   * @param base row-major n × dim vectors (the bench's are binary16 values already, so they go in unchanged)
   * @param onProgress called per vector inserted
   */
  constructor(base: Float32Array, n: number, dim: number, onProgress?: (done: number, total: number) => void) {
    this.#graph = HalfGraph.create(METRIC_OPS.cosine, dim, SCAN_GRAPH, Math.max(1, n));
    for (let i = 0; i < n; i++) {
      this.#graph.add(base.subarray(i * dim, (i + 1) * dim), i);
      onProgress?.(i + 1, n);
    }
  }

  /**
   * The exact k nearest ids by cosine distance, nearest first (ties by id).
   * @param candidates the ids to rank (ascending or not); absent: every id
   */
  topK(query: Float32Array, k: number, candidates?: Uint32Array): number[] {
    return this.#graph.exact(query, k, candidates).labels;
  }
}
