const settle = (): void => undefined;

/**
 * Runs tasks of one key one after another, in call order; tasks of different keys run in
 * parallel. A task that fails does not block the ones queued after it (each caller gets its own
 * outcome). One lane is a mutex over a constant key.
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `task` once every earlier task of `key` has settled; answers the task's outcome. */
  run<T>(key: string, task: () => Promise<T> | T): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    // The key is forgotten before the caller resumes, so `size` is exact once a task settled.
    const result = previous.then(task).finally(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    const tail = result.then(settle, settle);
    this.#tails.set(key, tail);
    return result;
  }

  /** Keys with a running or queued task. */
  get size(): number {
    return this.#tails.size;
  }
}
