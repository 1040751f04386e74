import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link SecretsError} can carry. No message or `data` ever holds a secret
 * value or a master key.
 *
 * - `INVALID_OPTIONS`: options failed validation.
 * - `INVALID_NAME`: a secret name breaks the naming rule (an upper-case letter, then
 *   upper-case letters, digits and `_`, at most 256 characters).
 * - `INVALID_VALUE`: a value is empty, longer than 8192 characters or the literal `[REDACTED]`.
 * - `MASTER_KEY_INVALID`: the master key is not hex or base64 of at least 32 bytes.
 * - `MASTER_KEY_FILE_INSECURE`: the master key file is readable or writable by others, not a
 *   regular file, or owned by another user.
 * - `MASTER_KEY_FILE_UNREADABLE`: the master key file cannot be read.
 * - `WRONG_MASTER_KEY`: `secrets.db` was written under another master key (the canary does not open).
 * - `CANARY_MISSING`: `secrets.db` holds secrets but no canary, so the key cannot be checked.
 * - `TAMPERED`: a stored secret failed its authentication tag check.
 * - `NO_MASTER_KEY`: an operation needs the encrypted store but no master key is configured.
 * - `CLOSED`: the store was used after `close()`.
 */
export type SecretsErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_NAME'
  | 'INVALID_VALUE'
  | 'MASTER_KEY_INVALID'
  | 'MASTER_KEY_FILE_INSECURE'
  | 'MASTER_KEY_FILE_UNREADABLE'
  | 'WRONG_MASTER_KEY'
  | 'CANARY_MISSING'
  | 'TAMPERED'
  | 'NO_MASTER_KEY'
  | 'CLOSED';

/** Options accepted by the {@link SecretsError} constructor; `data` never holds a value. */
export type SecretsErrorOptions = AgentdErrorOptions;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class SecretsError extends AgentdError<SecretsErrorCode> {
  override readonly name = 'SecretsError';
}

/** True when `error` is a {@link SecretsError}, optionally with the given code. */
export const isSecretsError = errorGuard(SecretsError);
