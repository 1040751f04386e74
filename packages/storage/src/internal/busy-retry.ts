import { backoffDelay } from '@agentd/async-control';
import { StorageError } from '../errors.js';
import type { StorageLogger } from '../logger.js';
import { isBusyError } from './map-error.js';

/** What the retry loop needs from its surroundings; injected for tests. */
export interface BusyRetryContext {
  /** Total time allowed for all attempts and pauses together. */
  budgetMs: number;
  now: () => number;
  random: () => number;
  logger: StorageLogger;
  url: string;
  /** Called after each BUSY failure, before the pause, to repair what the failure left behind. */
  onBusy?: (() => Promise<void>) | undefined;
}

const FIRST_PAUSE_MS = 10;
const LONGEST_PAUSE_MS = 1000;

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}

/**
 * Runs `operation` again while it fails with BUSY/LOCKED, pausing with
 * exponential backoff and jitter so competing processes drift apart. The
 * native busy_timeout has already waited inside each attempt, but it blocks
 * the event loop; these pauses do not. Once the budget would be exceeded the
 * last failure is reported as a StorageError `BUSY` that is not retryable.
 */
export async function withBusyRetry<T>(operation: () => Promise<T>, context: BusyRetryContext): Promise<T> {
  const started = context.now();
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await operation();
    } catch (error) {
      if (!isBusyError(error)) {
        throw error;
      }
      const pause = backoffDelay(attempt, {
        initialMs: FIRST_PAUSE_MS,
        maxMs: LONGEST_PAUSE_MS,
        random: context.random,
      });
      const elapsed = context.now() - started;
      if (elapsed + pause > context.budgetMs) {
        throw new StorageError(
          'BUSY',
          `The database at ${context.url} stayed locked by another connection for ${elapsed} ms ` +
            `(${attempt} attempts); giving up`,
          { cause: error, data: { url: context.url, attempts: attempt, elapsedMs: elapsed } },
        );
      }
      context.logger.debug(
        { url: context.url, attempt, pauseMs: pause, elapsedMs: elapsed },
        'database busy, retrying',
      );
      await sleep(pause);
    }
  }
}
