import { LoggingError } from './errors.js';

const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };
const SIZE_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*([kmg]?)b?\s*$/i;

/**
 * Parses a size such as `daemon.logging.maxSize` into bytes. Suffixes `k`, `m`
 * and `g` are binary (1024-based, so `50m` is 52428800, the contract's
 * `maxSizeBytes` default), case-insensitive, optionally followed by `b`
 * (`10MB`). A bare number or numeric string is bytes. Fractions are floored
 * (`1.5k` is 1536).
 * @throws {LoggingError} `INVALID_SIZE` for anything else, zero or a negative size.
 */
export function parseSize(size: string | number): number {
  if (typeof size === 'number') {
    if (Number.isFinite(size) && size > 0) return Math.floor(size);
    throw new LoggingError('INVALID_SIZE', `Invalid size ${size}: expected a positive number of bytes`, {
      data: { size },
    });
  }
  const match = SIZE_PATTERN.exec(size);
  const bytes = match ? Math.floor(Number(match[1]) * (UNITS[(match[2] ?? '').toLowerCase()] ?? 1)) : 0;
  if (bytes > 0) return bytes;
  throw new LoggingError(
    'INVALID_SIZE',
    `Invalid size "${size}": expected a positive number with an optional k, m or g suffix (e.g. 10m)`,
    { data: { size } },
  );
}
