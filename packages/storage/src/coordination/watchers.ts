import type { BusMessage } from './types.js';

interface Watch {
  check: () => Promise<void> | void;
  running: boolean;
  again: boolean;
  timer: NodeJS.Timeout | undefined;
}

/** Topic handlers and watchers whose checks never overlap: a notice during a run queues one more. */
export class Watchers {
  readonly #handlers = new Map<string, Set<(message: BusMessage) => void>>();
  readonly #watches = new Set<Watch>();
  onError: (error: unknown, topic: string) => void = () => undefined;

  subscribe(topic: string, handler: (message: BusMessage) => void): () => void {
    let set = this.#handlers.get(topic);
    if (set === undefined) {
      set = new Set();
      this.#handlers.set(topic, set);
    }
    set.add(handler);
    return () => {
      set.delete(handler);
      if (set.size === 0) this.#handlers.delete(topic);
    };
  }

  deliver(message: BusMessage): void {
    for (const handler of [...(this.#handlers.get(message.topic) ?? [])]) {
      try {
        handler(message);
      } catch (error) {
        this.onError(error, message.topic);
      }
    }
  }

  watch(topic: string, check: () => Promise<void> | void, pollMs: number | undefined): () => void {
    const watch: Watch = { check, running: false, again: false, timer: undefined };
    const run = () => this.#run(watch, topic);
    const unsubscribe = this.subscribe(topic, run);
    if (pollMs !== undefined) {
      watch.timer = setInterval(run, pollMs);
      watch.timer.unref();
    }
    this.#watches.add(watch);
    return () => {
      unsubscribe();
      if (watch.timer !== undefined) clearInterval(watch.timer);
      this.#watches.delete(watch);
    };
  }

  /** Runs every watcher once (after the listener reconnected and may have missed notices). */
  recheckAll(): void {
    for (const watch of this.#watches) void this.#run(watch, '*');
  }

  async #run(watch: Watch, topic: string): Promise<void> {
    if (watch.running) {
      watch.again = true;
      return;
    }
    watch.running = true;
    try {
      do {
        watch.again = false;
        try {
          await watch.check();
        } catch (error) {
          this.onError(error, topic);
        }
      } while (watch.again);
    } finally {
      watch.running = false;
    }
  }

  close(): void {
    for (const watch of this.#watches) if (watch.timer !== undefined) clearInterval(watch.timer);
    this.#watches.clear();
    this.#handlers.clear();
  }
}
