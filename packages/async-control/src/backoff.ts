/** Options of {@link backoffDelay}. */
export interface BackoffOptions {
  /** Ceiling of the first retry's delay, in ms; it doubles per attempt. */
  initialMs: number;
  /** Largest ceiling, in ms: attempts past the doubling wait at most this (before `retryAfterMs`). */
  maxMs: number;
  /** Jitter source, answering in [0, 1). @default Math.random */
  random?: (() => number) | undefined;
  /**
   * A wait the other side asked for (a `Retry-After`, a platform's `retry_after`), in ms: the
   * delay is never shorter, even past `maxMs`, since retrying sooner is only refused again.
   */
  retryAfterMs?: number | undefined;
}

/** Doublings past which the ceiling is `maxMs` for any sane option: keeps `2 ** n` finite. */
const MAX_DOUBLINGS = 40;

/**
 * Delay before retry number `attempt` (1-based: the wait after the first failure is attempt 1).
 *
 * The ceiling is `initialMs × 2^(attempt-1)`, capped at `maxMs`; the delay is half the ceiling
 * plus a random part of the other half ("equal jitter"). The fixed half keeps the backoff
 * growing; the random half spreads out callers that failed together (clients dropped by one
 * restart, writers that met one lock) so they do not retry in step. A `retryAfterMs` the other
 * side asked for is a floor.
 */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const { initialMs, maxMs, random = Math.random, retryAfterMs } = options;
  const doublings = Math.min(Math.max(0, Math.floor(attempt) - 1), MAX_DOUBLINGS);
  const ceiling = Math.max(0, Math.min(maxMs, initialMs * 2 ** doublings));
  const jittered = Math.round(ceiling / 2 + (random() * ceiling) / 2);
  return retryAfterMs !== undefined && retryAfterMs > jittered ? Math.ceil(retryAfterMs) : jittered;
}
