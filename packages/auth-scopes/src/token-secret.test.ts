import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateTokenSecret, hashToken } from './token-secret.js';

describe('hashToken', () => {
  it('returns sha256: followed by the lowercase hex digest of the secret', () => {
    const expected = createHash('sha256').update('s3cret-value', 'utf8').digest('hex');
    expect(hashToken('s3cret-value')).toBe(`sha256:${expected}`);
    expect(hashToken('s3cret-value')).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('gives different hashes for different secrets', () => {
    expect(hashToken('a')).not.toBe(hashToken('b'));
  });
});

describe('generateTokenSecret', () => {
  it('makes agd_ prefixed secrets carrying 32 random bytes in base64url', () => {
    const secret = generateTokenSecret();
    expect(secret).toMatch(/^agd_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret.slice(4), 'base64url')).toHaveLength(32);
  });

  it('never repeats across many calls', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => generateTokenSecret()));
    expect(seen.size).toBe(1000);
  });
});
