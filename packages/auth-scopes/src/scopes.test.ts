import { describe, expect, it } from 'vitest';
import { AuthScopesError } from './errors.js';
import { hasScope, type Scope, scopeError } from './scopes.js';

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
