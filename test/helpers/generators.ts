// Seeded data generators shared by the tests and the benchmarks (neither is shipped in the package):
// a small PRNG, Gaussian noise, and clustered unit vectors. Everything is a pure function of its seed,
// so a failing run or a benchmark can be replayed exactly.

/** mulberry32: a small seeded generator, so a failing run can be replayed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal sample (Box–Muller) from a uniform generator. */
export function gaussian(rand: () => number): number {
  const u = Math.max(rand(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

/** The centres always come from this seed, so datasets of different seeds share their clusters. */
const CENTRES_SEED = 12345;

export type ClusteredOptions = {
  /** Number of centres (default 16). */
  clusters?: number;
  /** Noise around a centre, per coordinate (default 0.5). */
  spread?: number;
  /**
   * Draw the mixture in this many latent dimensions and project it linearly to `dim`, plus 0.1
   * noise: the ARCHITECTURE.md §10.1 benchmark data, closer to real embeddings. Without it, centres and noise
   * live in `dim` directly.
   */
  latent?: number;
  /** Called after each vector, for long runs. */
  onProgress?: (done: number, total: number) => void;
};

/**
 * Clustered unit vectors: each point is a random centre plus Gaussian noise, normalised.
 * @param n how many vectors
 * @param dim their dimension
 * @param seed seed of the points (the centres do not depend on it)
 * @returns the vectors and each one's cluster
 * @example clustered(1000, 16, 7).vectors
 */
export function clustered(
  n: number,
  dim: number,
  seed: number,
  options: ClusteredOptions = {},
): { vectors: Float32Array[]; cluster: number[] } {
  const { clusters = 16, spread = 0.5, latent, onProgress } = options;
  const space = latent ?? dim;
  const s = mulberry32(CENTRES_SEED);
  const centres = Array.from({ length: clusters }, () => Float64Array.from({ length: space }, () => gaussian(s)));
  // Entries N(0, 1/64), as ARCHITECTURE.md §10.1 specifies.
  const proj = latent === undefined ? undefined : Float64Array.from({ length: latent * dim }, () => gaussian(s) / 8);
  const rand = mulberry32(seed);
  const vectors: Float32Array[] = [];
  const cluster: number[] = [];
  const z = new Float64Array(space);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(rand() * clusters);
    cluster.push(c);
    for (let j = 0; j < space; j++) z[j] = centres[c]![j]! + spread * gaussian(rand);
    const v = new Float32Array(dim);
    let norm = 0;
    for (let d = 0; d < dim; d++) {
      if (proj === undefined || latent === undefined) {
        v[d] = z[d]!;
        // The float32 value, as the engine tests' vectors have always been normalised.
        norm += v[d]! * v[d]!;
        continue;
      }
      let x = 0;
      for (let j = 0; j < latent; j++) x += z[j]! * proj[j * dim + d]!;
      x += 0.1 * gaussian(rand);
      v[d] = x;
      norm += x * x;
    }
    norm = Math.sqrt(norm);
    for (let d = 0; d < dim; d++) v[d] = v[d]! / norm;
    vectors.push(v);
    onProgress?.(i + 1, n);
  }
  return { vectors, cluster };
}
