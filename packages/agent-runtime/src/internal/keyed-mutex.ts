/** Runs callbacks of one key one after another; different keys run in parallel. */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `callback` once every earlier callback of `key` has settled. */
  run<T>(key: string, callback: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => done);
    this.#tails.set(key, tail);
    return previous.then(callback).finally(() => {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
  }

  /** Keys with a running or queued callback. */
  get size(): number {
    return this.#tails.size;
  }
}
