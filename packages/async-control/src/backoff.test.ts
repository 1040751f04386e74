import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  const low = () => 0;
  const high = () => 0.999_999;

  it('doubles the ceiling per attempt and keeps between half and all of it', () => {
    const options = { initialMs: 100, maxMs: 10_000 };
    expect([1, 2, 3, 4].map((attempt) => backoffDelay(attempt, { ...options, random: low }))).toEqual([
      50, 100, 200, 400,
    ]);
    expect([1, 2, 3, 4].map((attempt) => backoffDelay(attempt, { ...options, random: high }))).toEqual([
      100, 200, 400, 800,
    ]);
  });

  it('caps the ceiling at maxMs, also for attempt numbers far past the doubling', () => {
    for (const attempt of [8, 50, 1_000, Number.MAX_SAFE_INTEGER]) {
      expect(backoffDelay(attempt, { initialMs: 100, maxMs: 5_000, random: high })).toBe(5_000);
      expect(backoffDelay(attempt, { initialMs: 100, maxMs: 5_000, random: low })).toBe(2_500);
    }
  });

  it('spreads callers that failed together instead of retrying them in step', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 16_807) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    const delays = Array.from({ length: 50 }, () =>
      backoffDelay(3, { initialMs: 1_000, maxMs: 60_000, random }),
    );
    expect(new Set(delays).size).toBeGreaterThan(40);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(2_000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(4_000);
  });

  it('never waits less than the retry-after the other side asked for, even past maxMs', () => {
    expect(backoffDelay(1, { initialMs: 100, maxMs: 1_000, random: high, retryAfterMs: 30_000 })).toBe(
      30_000,
    );
    expect(backoffDelay(3, { initialMs: 100, maxMs: 1_000, random: high, retryAfterMs: 10 })).toBe(400);
  });

  it('treats attempt 0 and below like the first attempt and a zero initial delay as no wait', () => {
    expect(backoffDelay(0, { initialMs: 100, maxMs: 1_000, random: high })).toBe(100);
    expect(backoffDelay(-3, { initialMs: 100, maxMs: 1_000, random: high })).toBe(100);
    expect(backoffDelay(5, { initialMs: 0, maxMs: 1_000, random: high })).toBe(0);
  });
});
