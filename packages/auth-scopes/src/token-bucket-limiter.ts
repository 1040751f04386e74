import { z } from 'zod';
import { AuthScopesError } from './errors.js';
import { monotonicNow } from './internal/clock.js';
import { parseOrThrow } from './internal/validate.js';

/** Options of {@link TokenBucketLimiter}. */
export interface TokenBucketLimiterOptions {
  /** Bucket size: the largest burst allowed (> 0). The bucket starts full. */
  capacity: number;
  /** Tokens added per second, up to `capacity` (> 0). `5 / 60` is five per minute. */
  refillPerSecond: number;
  /**
   * Clock in milliseconds; only differences matter.
   * @default performance.now (monotonic)
   */
  now?: (() => number) | undefined;
}

const optionsSchema = z.object({
  capacity: z.number().positive().finite(),
  refillPerSecond: z.number().positive().finite(),
  now: z
    .custom<() => number>((value) => typeof value === 'function', { message: 'expected a function' })
    .optional(),
});

/**
 * Refill rates are rarely exact in binary floating point: ten one-second
 * refills at 0.1 per second sum to 0.9999999999999999. The tolerance lets
 * that count as the whole token the caller was promised.
 */
const EPSILON = 1e-9;

/**
 * A token bucket for per-method limits (`env.set` five per minute,
 * `image.generate` per hour): bursts up to `capacity`, then `refillPerSecond`.
 */
export class TokenBucketLimiter {
  readonly capacity: number;
  readonly refillPerSecond: number;
  readonly #now: () => number;
  #tokens: number;
  #updatedAt: number;

  constructor(options: TokenBucketLimiterOptions) {
    const parsed = parseOrThrow(optionsSchema, options, 'INVALID_OPTIONS', 'token bucket limiter options');
    this.capacity = parsed.capacity;
    this.refillPerSecond = parsed.refillPerSecond;
    this.#now = parsed.now ?? monotonicNow;
    this.#tokens = parsed.capacity;
    this.#updatedAt = this.#now();
  }

  /**
   * Takes `cost` tokens and returns true, or returns false (taking nothing)
   * when the bucket holds fewer. Throws `INVALID_ARGUMENT` for a cost that is
   * not positive or exceeds `capacity`, since such a call could never succeed.
   * @param cost tokens to take; default 1
   */
  tryAcquire(cost = 1): boolean {
    this.#checkCost(cost);
    this.#refill();
    if (this.#tokens + EPSILON < cost) return false;
    this.#tokens = Math.max(0, this.#tokens - cost);
    return true;
  }

  /**
   * Milliseconds until `tryAcquire(cost)` would succeed; 0 when it would now.
   * @param cost tokens wanted; default 1
   */
  retryAfterMs(cost = 1): number {
    this.#checkCost(cost);
    this.#refill();
    const missing = cost - this.#tokens;
    if (missing <= EPSILON) return 0;
    return Math.ceil((missing / this.refillPerSecond) * 1000);
  }

  /** Tokens currently in the bucket (fractional). */
  available(): number {
    this.#refill();
    return this.#tokens;
  }

  /** Refills the bucket to `capacity`. */
  reset(): void {
    this.#tokens = this.capacity;
    this.#updatedAt = this.#now();
  }

  #checkCost(cost: number): void {
    if (!(Number.isFinite(cost) && cost > 0 && cost <= this.capacity)) {
      throw new AuthScopesError('INVALID_ARGUMENT', `cost must be > 0 and <= capacity (${this.capacity})`, {
        data: { cost, capacity: this.capacity },
      });
    }
  }

  #refill(): void {
    const time = this.#now();
    const elapsed = time - this.#updatedAt;
    // A clock that stepped back adds nothing, rather than draining the bucket.
    if (elapsed > 0) {
      this.#tokens = Math.min(this.capacity, this.#tokens + (elapsed / 1000) * this.refillPerSecond);
    }
    this.#updatedAt = Math.max(this.#updatedAt, time);
  }
}
