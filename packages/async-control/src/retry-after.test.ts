import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './retry-after.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('1994-11-06T08:49:00Z');

  it('reads delay-seconds, tolerating surrounding space and a fraction', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('1.5', now)).toBe(1_500);
  });

  it('reads the three HTTP-date forms as the wait until that moment', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now)).toBe(37_000);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now)).toBe(37_000);
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', now)).toBe(37_000);
  });

  it('answers 0 for a date already past', () => {
    expect(parseRetryAfter('Sat, 05 Nov 1994 08:49:37 GMT', now)).toBe(0);
  });

  it('answers undefined for an absent header or text that is neither form', () => {
    for (const value of [
      undefined,
      null,
      '',
      '-5',
      '5 apples',
      'soon',
      '1e3',
      '2026-01-01T00:00:00Z',
      'Sun, 06 Nov 1994',
    ])
      expect(parseRetryAfter(value, now), String(value)).toBeUndefined();
  });
});
