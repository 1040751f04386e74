import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError } from '@agentd/errors';

/**
 * Every code an {@link AuthScopesError} can carry.
 *
 * - `INVALID_OPTIONS`: a factory or constructor received options that fail validation.
 * - `INVALID_TOKEN_CONFIG`: a token list (at load or on `replace`) fails validation.
 * - `INVALID_ARGUMENT`: a method argument is out of range (for example a bucket cost above capacity).
 * - `TOKEN_NOT_FOUND`: `revoke` named an id the store does not hold.
 * - `TOKEN_EXISTS`: `create` was asked for an id or a secret the store already holds.
 * - `PERSIST_FAILED`: the injected `persist` callback threw; the in-memory state was left unchanged.
 * - `INSUFFICIENT_SCOPE`: built by {@link scopeError} for a caller whose token lacks the required scope.
 */
export type AuthScopesErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_TOKEN_CONFIG'
  | 'INVALID_ARGUMENT'
  | 'TOKEN_NOT_FOUND'
  | 'TOKEN_EXISTS'
  | 'PERSIST_FAILED'
  | 'INSUFFICIENT_SCOPE';

/**
 * Options accepted by the {@link AuthScopesError} constructor. `data`: structured details safe to log
 * (never a secret).
 */
export type AuthScopesErrorOptions = AgentdErrorOptions;

/** The one error class thrown by this package; branch on `code`, not on the message. */
export class AuthScopesError extends AgentdError<AuthScopesErrorCode> {
  override readonly name = 'AuthScopesError';
}
