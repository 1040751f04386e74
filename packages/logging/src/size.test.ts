import { describe, expect, it } from 'vitest';
import { LoggingError } from './errors.js';
import { parseSize } from './size.js';

describe('parseSize', () => {
  it('reads k, m and g as binary multiples, in any case, with an optional b', () => {
    expect(parseSize('10m')).toBe(10 * 1024 * 1024);
    expect(parseSize('50m')).toBe(52_428_800);
    expect(parseSize('5M')).toBe(5 * 1024 * 1024);
    expect(parseSize('512k')).toBe(512 * 1024);
    expect(parseSize('2g')).toBe(2 * 1024 ** 3);
    expect(parseSize('10MB')).toBe(10 * 1024 * 1024);
    expect(parseSize(' 1.5k ')).toBe(1536);
  });

  it('reads bare numbers and numeric strings as bytes', () => {
    expect(parseSize(4096)).toBe(4096);
    expect(parseSize('4096')).toBe(4096);
  });

  it('rejects malformed, zero and negative sizes with INVALID_SIZE', () => {
    for (const input of ['', 'ten', '10t', '-5m', '0', '0k', 'm', '1e3', 0, -1, Number.NaN]) {
      try {
        parseSize(input);
        expect.unreachable(`${String(input)} should be rejected`);
      } catch (error) {
        expect(error).toBeInstanceOf(LoggingError);
        expect((error as LoggingError).code).toBe('INVALID_SIZE');
      }
    }
  });
});
