import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link MediaError} can carry.
 *
 * - `INVALID_OPTIONS`: options or a config section failed validation.
 * - `INVALID_INPUT`: what the caller sent is unusable (bad base64, empty input, a URL that is
 *   not http(s)); `data.field` names the parameter.
 * - `TOO_LARGE`: the input (or a fetched body) is over its cap (`data.field`, `data.maxBytes`).
 * - `UNSUPPORTED_TYPE`: the bytes are not of a kind this operation takes (`data.field`, `data.detected`).
 * - `CORRUPT_INPUT`: the bytes claim a known type but could not be decoded (`data.field`).
 * - `NOT_CONFIGURED`: the capability needs a provider that is not configured; the message says which key to set.
 * - `ENGINE_MISSING`: a local program is not installed (`data.command`, `data.package` to install).
 * - `ENGINE_FAILED`: a local program ran and failed (`data.command`, `data.exitCode`).
 * - `PROVIDER_FAILED`: a keyed provider answered an error (`data.status`, `data.errorKind`).
 * - `BLOCKED_ADDRESS`: a URL or redirect hop resolved to a non-public address (`data.host`, `data.reason`).
 * - `FETCH_FAILED`: a link could not be fetched (`data.url`, `data.status` when there was one).
 * - `TIMEOUT`: the operation passed its deadline (`data.timeoutMs`).
 * - `RATE_LIMITED`: a per-agent hourly limit was reached (`data.limit`).
 * - `DENIED`: a scope rule refused the operation for this channel context.
 */
export type MediaErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_INPUT'
  | 'TOO_LARGE'
  | 'UNSUPPORTED_TYPE'
  | 'CORRUPT_INPUT'
  | 'NOT_CONFIGURED'
  | 'ENGINE_MISSING'
  | 'ENGINE_FAILED'
  | 'PROVIDER_FAILED'
  | 'BLOCKED_ADDRESS'
  | 'FETCH_FAILED'
  | 'TIMEOUT'
  | 'RATE_LIMITED'
  | 'DENIED';

/** Options accepted by the {@link MediaError} constructor. */
export type MediaErrorOptions = AgentdErrorOptions;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class MediaError extends AgentdError<MediaErrorCode> {
  override readonly name = 'MediaError';
}

/** True when `error` is a {@link MediaError}, optionally with the given code. */
export const isMediaError = errorGuard(MediaError);

/** Codes caused by what the caller sent (a daemon answers them as invalid params). */
export const CALLER_ERROR_CODES: ReadonlySet<MediaErrorCode> = new Set([
  'INVALID_INPUT',
  'TOO_LARGE',
  'UNSUPPORTED_TYPE',
  'CORRUPT_INPUT',
  'BLOCKED_ADDRESS',
]);
