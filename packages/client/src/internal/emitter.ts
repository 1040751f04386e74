type Listener = (...args: never[]) => void;

/**
 * A minimal event emitter whose `on` returns the unsubscribe function.
 *
 * A throwing listener must not break the socket handling that emitted the
 * event, so listener errors go to `onListenerError` instead of propagating.
 */
export class Emitter {
  private readonly listeners = new Map<string, Set<Listener>>();

  constructor(private readonly onListenerError: (event: string, error: unknown) => void) {}

  on(event: string, listener: Listener): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(event);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.listeners.delete(event);
    };
  }

  has(event: string): boolean {
    return this.listeners.has(event);
  }

  emit(event: string, ...args: unknown[]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    // Copy so a listener that unsubscribes (itself or another) does not skip anyone in this round.
    for (const listener of [...set]) {
      try {
        (listener as (...values: unknown[]) => void)(...args);
      } catch (error) {
        this.onListenerError(event, error);
      }
    }
  }
}
