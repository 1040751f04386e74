/**
 * The size a cluster test runs at: the design's full scale when `AGENTD_CLUSTER_SCALE=full`
 * (a run on a quiet machine, minutes long), else the scaled-down figures that fit a 2-core CI
 * machine. The same test and the same assertions either way; only the counts and durations change.
 */
export function clusterScale<T>(sizes: { full: T; ci: T }): T {
  return process.env.AGENTD_CLUSTER_SCALE === 'full' ? sizes.full : sizes.ci;
}
