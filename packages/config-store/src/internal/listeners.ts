import { AsyncLocalStorage } from 'node:async_hooks';
import type { ConfigChangeEvent, ConfigChangeListener, ConfigStoreLogger } from '../config-store.js';
import type { Outcome } from './config-context.js';
import { deepClone } from './values.js';

/** The change listeners of a store, told one change at a time in commit order. */
export class ChangeListeners<Config> {
  readonly #logger: ConfigStoreLogger;
  readonly #listeners = new Set<ConfigChangeListener<Config>>();
  #notifications: Promise<unknown> = Promise.resolve();
  // Marks code running inside a listener: a write it awaits must notify at
  // once instead of queueing behind the listener that is waiting for it.
  readonly #listenerContext = new AsyncLocalStorage<true>();

  constructor(logger: ConfigStoreLogger) {
    this.#logger = logger;
  }

  /** Registers a listener; returns a function that removes it. */
  add(listener: ConfigChangeListener<Config>): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Tell listeners, one change at a time in commit order; reports whether all succeeded. */
  notify(outcome: Outcome): Promise<boolean> {
    if (outcome.result.changedSections.length === 0) return Promise.resolve(false);
    const event: ConfigChangeEvent = {
      changedSections: outcome.result.changedSections,
      restartRequired: outcome.result.restartRequired,
      sha: outcome.result.sha,
    };
    const deliver = async (): Promise<boolean> => {
      let allSucceeded = this.#listeners.size > 0;
      for (const listener of [...this.#listeners]) {
        try {
          await this.#listenerContext.run(true, () => listener(deepClone(outcome.next) as Config, event));
        } catch (error) {
          allSucceeded = false;
          this.#logger.error(
            {
              err: error,
              changedSections: event.changedSections,
              sha: event.sha,
              errorKind: 'internal',
              hint: 'the change is committed but a listener did not apply it; restart the daemon to apply it',
            },
            'config: change listener failed',
          );
        }
      }
      return allSucceeded;
    };
    if (this.#listenerContext.getStore()) return deliver();
    const run = this.#notifications.then(deliver);
    this.#notifications = run.catch(() => undefined);
    return run;
  }
}
