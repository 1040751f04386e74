import type { SessionMessage, SessionRecord } from '../session-store.js';

/** What the runtime keeps in memory about a session between turns. */
export interface CachedSession {
  session: SessionRecord;
  /** The newest context messages, oldest first. */
  messages: SessionMessage[];
  /** Every context message with `seq >= fromSeq` is in `messages`. */
  fromSeq: number;
}

/**
 * A least-recently-used map of session tails. Reading the tail back from libsql costs
 * tens of microseconds per row (row materialisation), which would dominate a turn; the
 * runtime is the only writer of its sessions and serialises each session, so the tail it
 * committed last is exactly what the next turn needs.
 */
export class SessionCache {
  readonly #entries = new Map<string, CachedSession>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get(key: string): CachedSession | undefined {
    const entry = this.#entries.get(key);
    if (entry) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: CachedSession): void {
    if (this.#capacity === 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    while (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }
}
