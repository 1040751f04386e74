import { performance } from 'node:perf_hooks';

/**
 * Limiters measure intervals, so they default to the monotonic clock: a wall
 * clock stepped back by NTP would otherwise stall or flood a limiter.
 */
export function monotonicNow(): number {
  return performance.now();
}
