import type { ChannelHealth } from '../adapter.js';
import type { ChannelsError } from '../errors.js';
import { scrubbedMessage } from './redact.js';

/** How a failed platform call reads. */
export interface PlatformFailure {
  /** The `PLATFORM_ERROR` the queue acts on (`retryable`, `retryAfterMs`). */
  error: ChannelsError;
  /** The platform itself looks unwell (5xx, network): the adapter's health says `error`. */
  down: boolean;
}

/**
 * The wrapper every platform call of an adapter goes through: a success stamps `lastOkAt` (and
 * `onOk` may restore the state), a failure records its message, free of secrets, as `lastError`
 * and is thrown as `classify` reads it.
 */
export function guardPlatformCalls(options: {
  health: ChannelHealth;
  scrub: (text: string) => string;
  now: () => number;
  onOk?: () => void;
  /** `message` is the failure's message, already scrubbed; anything else quoted goes through `scrub`. */
  classify(error: unknown, message: string, scrub: (text: string) => string): PlatformFailure;
}): <T>(run: () => Promise<T>) => Promise<T> {
  const { health, scrub, now } = options;
  return async (run) => {
    try {
      const result = await run();
      health.lastOkAt = now();
      options.onOk?.();
      return result;
    } catch (error) {
      const message = scrubbedMessage(error, scrub);
      health.lastError = message;
      const failure = options.classify(error, message, scrub);
      if (failure.down) health.state = 'error';
      throw failure.error;
    }
  };
}

/**
 * Marks a platform connection down (polling stopped, a webhook not registered, a socket or
 * gateway that could not connect): the health says `error` with the failure's message, free of
 * secrets, which is answered for the log line.
 */
export function markDown(health: ChannelHealth, scrub: (text: string) => string, error: unknown): string {
  health.state = 'error';
  health.lastError = scrubbedMessage(error, scrub);
  return health.lastError;
}
