import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link ChannelsError} can carry.
 *
 * - `INVALID_OPTIONS`: options or a request failed validation (`data.issues` names the field).
 * - `UNCONFIGURED`: the platform has no credentials or is disabled in the config.
 * - `UNKNOWN_CHANNEL`: no adapter of that channel type exists.
 * - `UNSUPPORTED`: the platform has no such operation (for example fetching history on Telegram).
 * - `PLATFORM_ERROR`: the platform refused the request; `data.retryable` and `data.status` say more.
 * - `NOT_FOUND`: no delivery with that id.
 * - `CLOSED`: the queue or service was used after `close()`.
 */
export type ChannelsErrorCode =
  | 'INVALID_OPTIONS'
  | 'UNCONFIGURED'
  | 'UNKNOWN_CHANNEL'
  | 'UNSUPPORTED'
  | 'PLATFORM_ERROR'
  | 'NOT_FOUND'
  | 'CLOSED';

/** Detail of a {@link ChannelsError}; never a token, a message body or a platform response body. */
export interface ChannelsErrorData {
  /** zod issues of a validation failure. */
  issues?: unknown[];
  /** Whether a retry may succeed (rate limit, 5xx, network). */
  retryable?: boolean;
  /** How long the platform asked to wait before the next attempt, in ms. */
  retryAfterMs?: number;
  /** HTTP status of the platform answer, when there was one. */
  status?: number;
  /** The channel type concerned. */
  channelType?: string;
}

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class ChannelsError extends AgentdError<ChannelsErrorCode, ChannelsErrorData> {
  override readonly name = 'ChannelsError';
}

/** Options of the {@link ChannelsError} constructor. */
export type ChannelsErrorOptions = AgentdErrorOptions<ChannelsErrorData>;

/** True when `error` is a {@link ChannelsError}, optionally with the given code. */
export const isChannelsError = errorGuard(ChannelsError);

/** A platform refusal: retryable (with an optional wait) or permanent. */
export function platformError(
  channelType: string,
  message: string,
  detail: {
    retryable: boolean;
    retryAfterMs?: number | undefined;
    status?: number | undefined;
    cause?: unknown;
  },
): ChannelsError {
  return new ChannelsError('PLATFORM_ERROR', `${channelType}: ${message}`, {
    cause: detail.cause,
    data: {
      channelType,
      retryable: detail.retryable,
      ...(detail.retryAfterMs !== undefined ? { retryAfterMs: detail.retryAfterMs } : {}),
      ...(detail.status !== undefined ? { status: detail.status } : {}),
    },
  });
}
