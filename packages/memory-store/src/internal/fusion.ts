/** A lane's candidates best first, with the lane's own relevance (higher is better). */
export type Lane = Array<{ seq: number; relevance: number }>;

/** Reciprocal rank fusion: each lane adds 1 / (k + rank), rank from 1. */
export function reciprocalRankFusion(lanes: Lane[], k: number): Map<number, number> {
  const scores = new Map<number, number>();
  for (const lane of lanes) {
    lane.forEach((candidate, index) => {
      scores.set(candidate.seq, (scores.get(candidate.seq) ?? 0) + 1 / (k + index + 1));
    });
  }
  return scores;
}

/**
 * Convex combination of min-max normalised lane scores: `weights[i]` times
 * lane i's normalised relevance, 0 for a candidate a lane did not return.
 */
export function convexFusion(lanes: Lane[], weights: number[]): Map<number, number> {
  const scores = new Map<number, number>();
  lanes.forEach((lane, laneIndex) => {
    if (lane.length === 0) return;
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (const candidate of lane) {
      min = Math.min(min, candidate.relevance);
      max = Math.max(max, candidate.relevance);
    }
    const span = max - min;
    const weight = weights[laneIndex] ?? 1;
    for (const candidate of lane) {
      // A lane with a single score level still ranks its members above absent ones.
      const normalised = span === 0 ? 1 : (candidate.relevance - min) / span;
      scores.set(candidate.seq, (scores.get(candidate.seq) ?? 0) + weight * normalised);
    }
  });
  return scores;
}

/**
 * The first lane's candidates in its order, then the other lanes' candidates it
 * did not find (each lane min-max normalised; the first lane's scores lifted
 * above 1). For a lane that only restates another's evidence: the lexical
 * embedder knows the same words full-text search knows, and measured as an
 * equal partner it cost recall (see the README), but it still finds entries
 * whose words only partly match (typos, word pieces) when full-text has too few.
 */
export function backfillFusion(lanes: Lane[]): Map<number, number> {
  const [first = [], ...others] = lanes;
  const scores = convexFusion(
    others,
    others.map(() => 1 / Math.max(1, others.length)),
  );
  for (const [seq, score] of scores) scores.set(seq, 0.999 * score);
  for (const [seq, score] of convexFusion([first], [1])) scores.set(seq, 1 + score);
  return scores;
}
