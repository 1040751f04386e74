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
