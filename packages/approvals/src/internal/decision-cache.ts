/**
 * Recent decisions keyed by session and tool, each valid until its own time. Expired entries
 * are dropped when looked up and when the map is swept on writes, so a long-running daemon
 * keeps only live entries.
 */
export class DecisionCache<V> {
  readonly #entries = new Map<string, { until: number; value: V }>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** The key of a session and tool (NUL cannot occur in either). */
  static key(sessionKey: string, toolName: string): string {
    return `${sessionKey}\u0000${toolName}`;
  }

  /** Remembers `value` for `ttlMs` (nothing when `ttlMs` is 0). */
  set(sessionKey: string, toolName: string, value: V, ttlMs: number): void {
    const key = DecisionCache.key(sessionKey, toolName);
    if (ttlMs <= 0) {
      this.#entries.delete(key);
      return;
    }
    this.#sweep();
    this.#entries.set(key, { until: this.#now() + ttlMs, value });
  }

  /** The live entry of a session and tool, if any. */
  get(sessionKey: string, toolName: string): V | undefined {
    const key = DecisionCache.key(sessionKey, toolName);
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  delete(sessionKey: string, toolName: string): void {
    this.#entries.delete(DecisionCache.key(sessionKey, toolName));
  }

  /** Drops every entry of a session; answers how many live ones there were. */
  clearSession(sessionKey: string): number {
    const prefix = `${sessionKey}\u0000`;
    const now = this.#now();
    let cleared = 0;
    for (const [key, entry] of this.#entries) {
      if (!key.startsWith(prefix)) continue;
      if (entry.until > now) cleared += 1;
      this.#entries.delete(key);
    }
    return cleared;
  }

  /** Drops every entry; answers how many live ones there were. */
  clear(): number {
    this.#sweep();
    const count = this.#entries.size;
    this.#entries.clear();
    return count;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, entry] of this.#entries) if (entry.until <= now) this.#entries.delete(key);
  }
}
