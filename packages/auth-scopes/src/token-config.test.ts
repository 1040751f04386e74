import { describe, expect, it } from 'vitest';
import { gatewayTokensSchema, tokenConfigSchema } from './token-config.js';
import { hashToken } from './token-secret.js';

describe('tokenConfigSchema', () => {
  it('accepts a plaintext token', () => {
    const parsed = tokenConfigSchema.parse({ id: 'cli', clientId: 'cli', scopes: ['rpc'], token: 'abc' });
    expect(parsed.token).toBe('abc');
  });

  it('accepts a hashed token with createdAt', () => {
    const config = { id: 'ops', clientId: 'ops', scopes: ['admin'], tokenHash: hashToken('x'), createdAt: 5 };
    expect(tokenConfigSchema.parse(config)).toEqual(config);
  });

  it('refuses both token and tokenHash', () => {
    const result = tokenConfigSchema.safeParse({
      id: 'a',
      clientId: 'a',
      scopes: ['rpc'],
      token: 'abc',
      tokenHash: hashToken('abc'),
    });
    expect(result.success).toBe(false);
  });

  it('refuses neither token nor tokenHash', () => {
    expect(tokenConfigSchema.safeParse({ id: 'a', clientId: 'a', scopes: ['rpc'] }).success).toBe(false);
  });

  it('refuses a malformed hash, an empty scope list and an unknown scope', () => {
    const base = { id: 'a', clientId: 'a' };
    expect(tokenConfigSchema.safeParse({ ...base, scopes: ['rpc'], tokenHash: 'md5:abc' }).success).toBe(
      false,
    );
    expect(
      tokenConfigSchema.safeParse({ ...base, scopes: ['rpc'], tokenHash: `sha256:${'a'.repeat(63)}` })
        .success,
    ).toBe(false);
    expect(tokenConfigSchema.safeParse({ ...base, scopes: [], token: 'x' }).success).toBe(false);
    expect(tokenConfigSchema.safeParse({ ...base, scopes: ['root'], token: 'x' }).success).toBe(false);
  });

  it('refuses an id with spaces or slashes', () => {
    expect(
      tokenConfigSchema.safeParse({ id: 'a b', clientId: 'a', scopes: ['rpc'], token: 'x' }).success,
    ).toBe(false);
    expect(
      tokenConfigSchema.safeParse({ id: 'a/b', clientId: 'a', scopes: ['rpc'], token: 'x' }).success,
    ).toBe(false);
  });
});

describe('gatewayTokensSchema', () => {
  it('defaults to an empty list', () => {
    expect(gatewayTokensSchema.parse(undefined)).toEqual([]);
  });

  it('refuses duplicate ids', () => {
    const result = gatewayTokensSchema.safeParse([
      { id: 'a', clientId: 'a', scopes: ['rpc'], token: 'one' },
      { id: 'a', clientId: 'b', scopes: ['rpc'], token: 'two' },
    ]);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toContain("duplicate token id 'a'");
  });

  it('refuses two entries sharing one secret, even when one is given hashed', () => {
    const result = gatewayTokensSchema.safeParse([
      { id: 'a', clientId: 'a', scopes: ['rpc'], token: 'same' },
      {
        id: 'b',
        clientId: 'b',
        scopes: ['admin'],
        tokenHash: hashToken('same').toUpperCase().replace('SHA256', 'sha256'),
      },
    ]);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual([1, 'tokenHash']);
  });
});
