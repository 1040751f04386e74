import { describe, expect, it } from 'vitest';
import { acquireAt, manualClock } from './internal/test-support.js';
import { TokenBucketLimiter } from './token-bucket-limiter.js';

describe('TokenBucketLimiter', () => {
  it('allows a burst of capacity and then refuses', () => {
    const time = manualClock();
    const limiter = new TokenBucketLimiter({ capacity: 5, refillPerSecond: 5 / 60, now: time.now });
    for (let index = 0; index < 5; index += 1) expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(false);
  });

  it('refills at the configured rate, exactly on the boundary despite floating point', () => {
    const time = manualClock();
    // env.set: five writes per minute, one token every 12 seconds.
    const limiter = new TokenBucketLimiter({ capacity: 5, refillPerSecond: 5 / 60, now: time.now });
    for (let index = 0; index < 5; index += 1) limiter.tryAcquire();
    // One token by 12 s; two more by 36 s, the third not yet.
    const answers = acquireAt(limiter, time, [11_999, 12_000, 12_000, 36_000, 36_000, 36_000]);
    expect(answers).toEqual([false, true, false, true, true, false]);
  });

  it('counts a token as refilled when polling accumulates floating-point error', () => {
    const time = manualClock();
    const limiter = new TokenBucketLimiter({ capacity: 1, refillPerSecond: 0.1, now: time.now });
    expect(limiter.tryAcquire()).toBe(true);
    // Ten refills of 0.1 sum to 0.9999999999999999 in binary floating point.
    for (let second = 1; second < 10; second += 1) {
      time.set(second * 1000);
      expect(limiter.tryAcquire()).toBe(false);
    }
    time.set(10_000);
    expect(limiter.retryAfterMs()).toBe(0);
    expect(limiter.tryAcquire()).toBe(true);
  });

  it('never holds more than capacity however long it idles', () => {
    const time = manualClock();
    const limiter = new TokenBucketLimiter({ capacity: 3, refillPerSecond: 10, now: time.now });
    time.set(3_600_000);
    expect(limiter.available()).toBe(3);
    for (let index = 0; index < 3; index += 1) expect(limiter.tryAcquire()).toBe(true);
    expect(limiter.tryAcquire()).toBe(false);
  });

  it('charges a cost and refuses without charging when short', () => {
    const time = manualClock();
    const limiter = new TokenBucketLimiter({ capacity: 10, refillPerSecond: 1, now: time.now });
    expect(limiter.tryAcquire(7)).toBe(true);
    expect(limiter.tryAcquire(4)).toBe(false);
    expect(limiter.available()).toBe(3);
    expect(limiter.tryAcquire(3)).toBe(true);
  });

  it('tells how long until a cost fits', () => {
    const time = manualClock();
    const limiter = new TokenBucketLimiter({ capacity: 2, refillPerSecond: 0.5, now: time.now });
    expect(limiter.retryAfterMs()).toBe(0);
    limiter.tryAcquire(2);
    expect(limiter.retryAfterMs()).toBe(2000);
    expect(limiter.retryAfterMs(2)).toBe(4000);
    time.set(1500);
    expect(limiter.retryAfterMs()).toBe(500);
    time.set(2000);
    expect(limiter.retryAfterMs()).toBe(0);
    expect(limiter.tryAcquire()).toBe(true);
  });

  it('ignores a clock that steps backwards', () => {
    const time = manualClock(10_000);
    const limiter = new TokenBucketLimiter({ capacity: 1, refillPerSecond: 1, now: time.now });
    limiter.tryAcquire();
    expect(acquireAt(limiter, time, [5_000, 10_999, 11_000])).toEqual([false, false, true]);
  });

  it('refills completely on reset', () => {
    const time = manualClock();
    const limiter = new TokenBucketLimiter({ capacity: 2, refillPerSecond: 1, now: time.now });
    limiter.tryAcquire(2);
    limiter.reset();
    expect(limiter.tryAcquire(2)).toBe(true);
  });

  it('refuses a cost that could never be met with INVALID_ARGUMENT', () => {
    const limiter = new TokenBucketLimiter({ capacity: 2, refillPerSecond: 1 });
    expect(() => limiter.tryAcquire(3)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => limiter.tryAcquire(0)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => limiter.retryAfterMs(Number.NaN)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  it('refuses invalid options with INVALID_OPTIONS', () => {
    expect(() => new TokenBucketLimiter({ capacity: 0, refillPerSecond: 1 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    expect(() => new TokenBucketLimiter({ capacity: 1, refillPerSecond: -1 })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });
});
