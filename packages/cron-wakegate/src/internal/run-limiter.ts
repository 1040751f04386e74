/**
 * Starts at most `limit` tasks at once; the rest wait in arrival order. A task is started
 * synchronously when a slot is free, so a fire reaches its executor without a tick of delay.
 */
export class RunLimiter {
  #limit: number;
  #active = 0;
  #queue: Array<() => Promise<void>> = [];
  #head = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get active(): number {
    return this.#active;
  }

  /** Tasks allowed at once; a raised limit starts waiting tasks at once, a lowered one lets running tasks finish. */
  get limit(): number {
    return this.#limit;
  }

  set limit(value: number) {
    this.#limit = value;
    while (this.#active < this.#limit && this.#head < this.#queue.length) this.#startNext();
  }

  get waiting(): number {
    return this.#queue.length - this.#head;
  }

  run(task: () => Promise<void>): void {
    if (this.#active < this.#limit) this.#start(task);
    else this.#queue.push(task);
  }

  #start(task: () => Promise<void>): void {
    this.#active += 1;
    task()
      .catch(() => undefined)
      .finally(() => {
        this.#active -= 1;
        if (this.#active < this.#limit) this.#startNext();
      });
  }

  #startNext(): void {
    const next = this.#queue[this.#head];
    if (next === undefined) return;
    this.#queue[this.#head] = undefined as never;
    this.#head += 1;
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    this.#start(next);
  }
}
