import { z } from 'zod';
import { monotonicNow } from './internal/clock.js';
import { parseOrThrow } from './internal/validate.js';

/** Upper bound on `maxEvents`: the limiter keeps one 8-byte timestamp per allowed event. */
export const SLIDING_WINDOW_MAX_EVENTS = 100_000;

/** Options of {@link SlidingWindowLimiter}. */
export interface SlidingWindowLimiterOptions {
  /** Events allowed in any window of `windowMs` (1..100000). */
  maxEvents: number;
  /** Window length in milliseconds (> 0). */
  windowMs: number;
  /**
   * Clock in milliseconds; only differences matter.
   * @default performance.now (monotonic)
   */
  now?: (() => number) | undefined;
  /**
   * The share of `maxEvents` allowed right now, in (0, 1]: a daemon under memory pressure
   * tightens its limits by answering less than 1 here. At least one event per window stays
   * allowed. Read at every event.
   * @default () => 1
   */
  share?: (() => number) | undefined;
}

const optionsSchema = z.object({
  maxEvents: z.number().int().min(1).max(SLIDING_WINDOW_MAX_EVENTS),
  windowMs: z.number().positive().finite(),
  now: z
    .custom<() => number>((value) => typeof value === 'function', { message: 'expected a function' })
    .optional(),
  share: z
    .custom<() => number>((value) => typeof value === 'function', { message: 'expected a function' })
    .optional(),
});

/**
 * An exact sliding-window counter: an event at time `t` is allowed when fewer
 * than `maxEvents` events were allowed in `(t - windowMs, t]`. Refused events
 * are not counted, so a client that keeps sending at the limit is not locked
 * out forever.
 *
 * It keeps a ring buffer of the last `maxEvents` allowed timestamps. That is
 * exact (a two-bucket weighted estimate can admit up to twice the limit
 * across a bucket edge, or refuse early) and cheap for per-connection limits
 * in the hundreds: O(1) per event and `8 * maxEvents` bytes.
 */
export class SlidingWindowLimiter {
  readonly maxEvents: number;
  readonly windowMs: number;
  readonly #now: () => number;
  readonly #share: (() => number) | undefined;
  readonly #stamps: Float64Array;
  /** Index of the oldest stored timestamp once the ring is full; the next slot to write before. */
  #head = 0;
  #count = 0;

  constructor(options: SlidingWindowLimiterOptions) {
    const parsed = parseOrThrow(optionsSchema, options, 'INVALID_OPTIONS', 'sliding window limiter options');
    this.maxEvents = parsed.maxEvents;
    this.windowMs = parsed.windowMs;
    this.#now = parsed.now ?? monotonicNow;
    this.#share = parsed.share;
    this.#stamps = new Float64Array(parsed.maxEvents);
  }

  /** Records one event and returns true, or returns false (recording nothing) when the window is full. */
  tryAcquire(): boolean {
    const time = this.#now();
    const limit = this.#limit();
    // The ring holds the last `count` allowed events, oldest at head: the limit-th newest decides.
    if (this.#count >= limit && time - this.#stampBack(limit) < this.windowMs) return false;
    if (this.#count < this.maxEvents) {
      this.#stamps[(this.#head + this.#count) % this.maxEvents] = time;
      this.#count += 1;
      return true;
    }
    this.#stamps[this.#head] = time;
    this.#head = (this.#head + 1) % this.maxEvents;
    return true;
  }

  /** Milliseconds until `tryAcquire` would next succeed; 0 when it would now. */
  retryAfterMs(): number {
    const limit = this.#limit();
    if (this.#count < limit) return 0;
    return Math.max(0, this.#stampBack(limit) + this.windowMs - this.#now());
  }

  /** Events allowed per window now: `maxEvents` scaled by `share`, at least 1. */
  #limit(): number {
    if (this.#share === undefined) return this.maxEvents;
    const share = this.#share();
    if (!(share < 1)) return this.maxEvents;
    return Math.max(1, Math.floor(this.maxEvents * Math.max(0, share)));
  }

  /** The timestamp of the `back`-th newest recorded event (1 = newest); `back <= count`. */
  #stampBack(back: number): number {
    return this.#stamps[(this.#head + this.#count - back) % this.maxEvents] as number;
  }

  /** Forgets every recorded event. */
  reset(): void {
    this.#head = 0;
    this.#count = 0;
  }
}
