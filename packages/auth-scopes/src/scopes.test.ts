import { describe, expect, it } from 'vitest';
import { AuthScopesError } from './errors.js';
import { hasScope, isLastAdminToken, type Scope, scopeError } from './scopes.js';

describe('hasScope', () => {
  const cases: Array<[Scope[], Scope, boolean]> = [
    [['rpc'], 'rpc', true],
    [['rpc'], 'admin', false],
    [['rpc'], '*', false],
    [['admin'], 'admin', true],
    [['admin'], 'rpc', true],
    [['admin'], '*', false],
    [['*'], 'rpc', true],
    [['*'], 'admin', true],
    [['*'], '*', true],
    [['rpc', 'admin'], 'admin', true],
    [[], 'rpc', false],
    [[], 'admin', false],
  ];

  it.each(cases)('given %j and asked for %s answers %s', (granted, required, expected) => {
    expect(hasScope(granted, required)).toBe(expected);
  });
});

describe('scopeError', () => {
  it('carries the exact contract message naming the required scope', () => {
    const error = scopeError('admin');
    expect(error).toBeInstanceOf(AuthScopesError);
    expect(error.message).toBe("Insufficient scope: requires 'admin'");
    expect(error.code).toBe('INSUFFICIENT_SCOPE');
    expect(error.data).toEqual({ required: 'admin' });
  });

  it('names rpc when rpc is required', () => {
    expect(scopeError('rpc').message).toBe("Insufficient scope: requires 'rpc'");
  });
});

describe('isLastAdminToken', () => {
  const tokens = [
    { id: 'root', scopes: ['*'] },
    { id: 'ops', scopes: ['admin'] },
    { id: 'app', scopes: ['rpc'] },
  ];

  it('is true only for the one remaining token with admin or * scope', () => {
    expect(isLastAdminToken(tokens, 'root')).toBe(false);
    expect(isLastAdminToken(tokens.slice(1), 'ops')).toBe(true);
    expect(isLastAdminToken([tokens[0]!, tokens[2]!], 'root')).toBe(true);
  });

  it('is false for an rpc token and for an unknown id', () => {
    expect(isLastAdminToken(tokens.slice(1), 'app')).toBe(false);
    expect(isLastAdminToken(tokens.slice(1), 'ghost')).toBe(false);
  });

  it('does not count session tokens, which expire, as lasting admin tokens', () => {
    const withSession = [{ id: 'console-1', scopes: ['*'], expiresAt: 1 }, tokens[1]!];
    expect(isLastAdminToken(withSession, 'ops')).toBe(true);
    expect(isLastAdminToken(withSession, 'console-1')).toBe(false);
  });
});
