/**
 * Synthetic data for the benchmarks: clustered unit vectors (real embeddings of
 * conversational memory cluster by topic, which is what makes ANN graphs and
 * quantization behave differently from uniform noise), from a seeded generator
 * so every run measures the same data.
 */

/** A small, fast, seeded PRNG (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussian(random: () => number): number {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

function normalise(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  for (let index = 0; index < vector.length; index++) vector[index] = vector[index]! / norm;
  return vector;
}

/** `count` unit vectors around `clusters` random centres, with per-dimension noise `spread`. */
export function clusteredVectors(
  count: number,
  dimensions: number,
  options: { clusters?: number; spread?: number; seed?: number } = {},
): Float32Array[] {
  const random = seededRandom(options.seed ?? 42);
  const clusters = options.clusters ?? Math.max(8, Math.round(count / 100));
  const spread = options.spread ?? 0.6;
  const centres: Float32Array[] = [];
  for (let index = 0; index < clusters; index++) {
    const centre = new Float32Array(dimensions);
    for (let d = 0; d < dimensions; d++) centre[d] = gaussian(random);
    centres.push(normalise(centre));
  }
  const vectors: Float32Array[] = [];
  for (let index = 0; index < count; index++) {
    const centre = centres[Math.floor(random() * clusters)]!;
    const vector = new Float32Array(dimensions);
    const noise = spread / Math.sqrt(dimensions);
    for (let d = 0; d < dimensions; d++) vector[d] = centre[d]! + gaussian(random) * noise;
    vectors.push(normalise(vector));
  }
  return vectors;
}

/** Exact top-k by cosine (dot product of unit vectors), as indices into `vectors`. */
export function exactTopK(vectors: Float32Array[], query: Float32Array, k: number): number[] {
  const scores = new Float32Array(vectors.length);
  for (let index = 0; index < vectors.length; index++) {
    const vector = vectors[index]!;
    let dot = 0;
    for (let d = 0; d < query.length; d++) dot += vector[d]! * query[d]!;
    scores[index] = dot;
  }
  const order = Array.from(scores.keys());
  order.sort((a, b) => scores[b]! - scores[a]!);
  return order.slice(0, k);
}

/** Fraction of `truth` found in `found`. */
export function recallAt(found: readonly number[], truth: readonly number[]): number {
  const wanted = new Set(truth);
  let hits = 0;
  for (const item of found) if (wanted.has(item)) hits++;
  return truth.length === 0 ? 1 : hits / truth.length;
}

/** The p-th percentile (0..100) of `samples`. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return 0;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}
