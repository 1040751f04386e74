import { z } from 'zod';
import { AuthScopesError } from './errors.js';

/** Every scope a token can hold. `*` is a wildcard, not a method scope. */
export const scopeSchema = z.enum(['rpc', 'admin', '*']);

/** A scope a token can hold: `rpc`, `admin` or `*`. */
export type Scope = z.infer<typeof scopeSchema>;

/** A scope a method can require. Methods never require `*`. */
export type MethodScope = Exclude<Scope, '*'>;

/**
 * Whether a token holding `granted` may call a method requiring `required`.
 *
 * The scopes form a ladder `rpc` < `admin` < `*`: `*` grants everything,
 * `admin` grants `admin` and `rpc` (an operator token that cannot run
 * `system.ping` would only surprise), `rpc` grants `rpc` alone, matching the
 * contract's "a token holding only `rpc` may call only `rpc`-scoped methods".
 * Asking for `*` itself is satisfied only by `*`.
 */
export function hasScope(granted: readonly Scope[], required: Scope): boolean {
  if (granted.includes('*')) return true;
  switch (required) {
    case '*':
      return false;
    case 'admin':
      return granted.includes('admin');
    case 'rpc':
      return granted.includes('rpc') || granted.includes('admin');
  }
}

/**
 * The error for a call whose token lacks `required`. Its message is exactly
 * `Insufficient scope: requires '<scope>'`, the wire text the contract fixes;
 * the transport maps it to JSON-RPC code -32603.
 */
export function scopeError(required: Scope): AuthScopesError {
  return new AuthScopesError('INSUFFICIENT_SCOPE', `Insufficient scope: requires '${required}'`, {
    data: { required },
  });
}

/**
 * Whether `id` names the only lasting token that can call admin methods (`admin` or `*`)
 * among `tokens`: revoking it would lock every admin out until a restart mints a new one.
 * Session tokens (those with an `expiresAt`) do not count as lasting: they expire. False when
 * `id` is unknown, not an admin token, or a session token.
 */
export function isLastAdminToken(
  tokens: ReadonlyArray<{ id: string; scopes: readonly string[]; expiresAt?: number }>,
  id: string,
): boolean {
  const lastingAdmin = (token: { scopes: readonly string[]; expiresAt?: number }) =>
    token.expiresAt === undefined && hasScope(token.scopes as readonly Scope[], 'admin');
  const target = tokens.find((token) => token.id === id);
  return target !== undefined && lastingAdmin(target) && tokens.filter(lastingAdmin).length === 1;
}
