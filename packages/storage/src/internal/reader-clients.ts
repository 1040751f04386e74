import type { Client } from '@libsql/client';

/**
 * The pool of read connections of a local file, replaceable while in use.
 *
 * A statement that fails with SQLITE_BUSY inside @libsql/client is not reset,
 * so its connection can be left holding a stale snapshot. Rather than reuse
 * it, the whole reader client is swapped for a fresh one; the old one is
 * closed as soon as the operations still using it have finished.
 */
export class ReaderClients {
  #current: Client;
  readonly #create: () => Client;
  readonly #users = new Map<Client, number>();
  readonly #retired = new Set<Client>();

  constructor(create: () => Client) {
    this.#create = create;
    this.#current = create();
  }

  /** Runs `task` with the current client, keeping that client open until it settles. */
  async use<T>(task: (client: Client) => Promise<T>): Promise<T> {
    const client = this.#current;
    this.#users.set(client, (this.#users.get(client) ?? 0) + 1);
    try {
      return await task(client);
    } finally {
      const left = (this.#users.get(client) ?? 1) - 1;
      if (left === 0) {
        this.#users.delete(client);
        if (this.#retired.delete(client)) client.close();
      } else {
        this.#users.set(client, left);
      }
    }
  }

  /** Starts using a fresh client; the old one closes when its last user is done. */
  replace(): void {
    const old = this.#current;
    this.#current = this.#create();
    if (this.#users.has(old)) {
      this.#retired.add(old);
    } else {
      old.close();
    }
  }

  /** Closes every client, in use or not. */
  close(): void {
    this.#current.close();
    for (const client of this.#retired) client.close();
    this.#retired.clear();
  }
}
