import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  it('doubles the ceiling per attempt and keeps the delay between half and all of it', () => {
    expect(backoffDelay(1, 250, 10_000, () => 0)).toBe(125);
    expect(backoffDelay(1, 250, 10_000, () => 0.999_999)).toBe(250);
    expect(backoffDelay(2, 250, 10_000, () => 0)).toBe(250);
    expect(backoffDelay(3, 250, 10_000, () => 0.5)).toBe(750);
  });

  it('caps the ceiling at maxDelayMs even for very large attempt numbers', () => {
    expect(backoffDelay(10, 250, 10_000, () => 0.999_999)).toBe(10_000);
    expect(backoffDelay(5_000, 250, 10_000, () => 0)).toBe(5_000);
  });
});
