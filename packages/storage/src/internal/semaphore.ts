/**
 * A FIFO counting semaphore. With one permit it is the in-process write lock:
 * SQLite admits one writer per file, and a second connection of this process
 * waiting in the native busy handler would block the event loop that the
 * first connection needs in order to commit, so writers must queue here.
 */
export class Semaphore {
  #available: number;
  readonly #waiters: Array<() => void> = [];

  constructor(permits: number) {
    this.#available = permits;
  }

  /** Runs `task` once a permit is free, and frees it whatever the outcome. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.#acquire();
    try {
      return await task();
    } finally {
      this.#release();
    }
  }

  #acquire(): Promise<void> {
    if (this.#available > 0) {
      this.#available -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #release(): void {
    const next = this.#waiters.shift();
    if (next === undefined) {
      this.#available += 1;
    } else {
      // The permit passes straight to the next waiter so nobody can jump the queue.
      next();
    }
  }
}
