// One entry per pgvector operator class (halfvec_cosine_ops, halfvec_l2_ops, halfvec_ip_ops): the
// hnswlib space, how hnswlib's raw distance becomes pgvector's distance, the score, and the exact
// distance. Read by the HNSW wrapper, the exact scan and the planner, which never branch on the metric
// themselves (ARCHITECTURE.md §5).

import type { SpaceName } from 'hnswlib-node';
import type { Metric } from '../collections/index.ts';

export type Opclass = 'halfvec_cosine_ops' | 'halfvec_l2_ops' | 'halfvec_ip_ops';

export type MetricOps = {
  metric: Metric;
  opclass: Opclass;
  /** The hnswlib-node space that orders like the pgvector operator. */
  space: SpaceName;
  /**
   * Exact-scan kernel: `dot` ranks by a dot product (cosine over normalised vectors, ip), `l2` by the
   * squared Euclidean distance. exact.ts specialises its hot loop on this.
   */
  kernel: 'dot' | 'l2';
  /** Whether the exact scan divides dot products by the vector norms. */
  normalize: boolean;
  /** hnswlib's returned distance → pgvector's distance (within `clamp`'s range). */
  fromHnsw(raw: number): number;
  /**
   * A computed distance held to the metric's range: rounding puts a vector's cosine distance to itself a
   * few 1e-8 below 0 (and its score above 1), which no answer may show.
   */
  clamp(distance: number): number;
  /** pgvector's distance → score (higher is better). */
  score(distance: number): number;
  /**
   * pgvector's distance between two vectors (float64 arithmetic over the float32 values). A zero
   * vector has cosine distance 1, as hnswlib gives (pgvector would say NaN).
   */
  distance(a: ArrayLike<number>, b: ArrayLike<number>): number;
};

/** Cosine distance 1 − cos lies in [0, 2]; float32 and float64 rounding can step just outside it. */
const clampCosine = (d: number): number => Math.min(2, Math.max(0, d));
const unbounded = (d: number): number => d;

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** The three operator classes, keyed by the definition's `metric`. */
export const METRIC_OPS: Readonly<Record<Metric, MetricOps>> = {
  cosine: {
    metric: 'cosine',
    opclass: 'halfvec_cosine_ops',
    // hnswlib normalises both sides and returns 1 − a·b, i.e. 1 − cos.
    space: 'cosine',
    kernel: 'dot',
    normalize: true,
    fromHnsw: clampCosine,
    clamp: clampCosine,
    score: (d) => 1 - d,
    distance(a, b) {
      const na = Math.sqrt(dot(a, a));
      const nb = Math.sqrt(dot(b, b));
      if (na === 0 || nb === 0) return 1;
      return clampCosine(1 - dot(a, b) / (na * nb));
    },
  },
  l2: {
    metric: 'l2',
    opclass: 'halfvec_l2_ops',
    // hnswlib returns the squared distance; pgvector's <-> is the Euclidean distance itself.
    space: 'l2',
    kernel: 'l2',
    normalize: false,
    // A square root is never negative, and hnswlib's squared distance never is either.
    fromHnsw: (raw) => Math.sqrt(raw),
    clamp: unbounded,
    score: (d) => 1 / (1 + d),
    distance(a, b) {
      let s = 0;
      for (let i = 0; i < a.length; i++) {
        const t = a[i]! - b[i]!;
        s += t * t;
      }
      return Math.sqrt(s);
    },
  },
  ip: {
    metric: 'ip',
    opclass: 'halfvec_ip_ops',
    // hnswlib returns 1 − a·b; pgvector's <#> is −(a·b).
    space: 'ip',
    kernel: 'dot',
    normalize: false,
    fromHnsw: (raw) => raw - 1,
    // −(a·b) has no bounds to hold.
    clamp: unbounded,
    score: (d) => -d,
    distance: (a, b) => -dot(a, b),
  },
};

/**
 * The operations of a metric.
 * @param metric `cosine`, `l2` or `ip`
 * @returns its MetricOps entry
 * @example metricOps('l2').score(1) // 0.5
 */
export function metricOps(metric: Metric): MetricOps {
  return METRIC_OPS[metric];
}
