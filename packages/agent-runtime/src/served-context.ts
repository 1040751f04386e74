import type { Logger } from '@agentd/contracts';
import type { ProvidersSection } from './config.js';
import { checkServedWindows, type ServedWindowPosture } from './served-window.js';

/** Options of {@link createServedWindowMonitor}. */
export interface ServedWindowMonitorOptions {
  /** Receives each finished check (the daemon writes it as the `config_posture` health row). */
  record(posture: ServedWindowPosture): void;
  /** Warns when a model is served below its configured window, and when a check fails. */
  logger: Pick<Logger, 'warn'>;
  /** The fetch used to ask local model servers. @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** Runs {@link checkServedWindows} for each providers change, one check at a time. */
export interface ServedWindowMonitor {
  /** Checks `providers` (after any check in flight) and records the result; never rejects. */
  check(providers: ProvidersSection): Promise<void>;
  /** Resolves when no check is in flight (shutdown waits for it before closing the evidence store). */
  idle(): Promise<void>;
}

/**
 * Keeps the served-window posture current: checks are serialised, and checks asked for while
 * one is in flight fold into one more run with the latest providers, so the latest config
 * always wins and a burst of config changes costs at most two rounds of requests.
 */
export function createServedWindowMonitor(options: ServedWindowMonitorOptions): ServedWindowMonitor {
  let running: Promise<void> | undefined;
  let pending: ProvidersSection | undefined;

  async function once(providers: ProvidersSection): Promise<void> {
    const posture = await checkServedWindows(providers, options.fetch ? { fetch: options.fetch } : {});
    options.record(posture);
    if (posture.servedBelowConfigured > 0) {
      options.logger.warn(
        {
          step: 'posture',
          itemCount: posture.servedBelowConfigured,
          errorKind: 'config',
          hint: 'lower contextWindow of these models to what the server serves, or raise the server’s window',
          below: posture.below,
        },
        'model served with a smaller context window than configured',
      );
    }
  }

  async function drain(): Promise<void> {
    while (pending) {
      const providers = pending;
      pending = undefined;
      await once(providers);
    }
  }

  return {
    idle: () => running ?? Promise.resolve(),
    check(providers) {
      pending = providers;
      running ??= drain()
        .catch((err: unknown) =>
          options.logger.warn(
            { err, step: 'posture', errorKind: 'internal', hint: 'the posture row was not recorded' },
            'posture check failed',
          ),
        )
        .finally(() => {
          running = undefined;
        });
      return running;
    },
  };
}
