/** The logger the lifecycle reports a failed stop to. */
interface LifecycleLogger {
  error(fields: Record<string, unknown> & { hint: string; errorKind: string }, message?: string): void;
}

/** Services started in order and stopped in reverse: the daemon's one close list. */
export interface Lifecycle {
  /**
   * Starts one service and remembers how to stop it. A start that throws adds nothing (it
   * must clean up after itself); the caller then calls {@link Lifecycle.stop}.
   */
  start<T>(name: string, start: () => T | Promise<T>, stop?: (service: T) => unknown): Promise<T>;
  /**
   * Creates a service with `start()` and `close()`, starts it and stops it with `close()`; the
   * close is on the list before the start runs, so a start that fails part way is closed too.
   */
  service<T extends { start(): Promise<unknown>; close(): Promise<unknown> }>(
    name: string,
    create: () => T,
  ): Promise<T>;
  /** Remembers how to stop something already running (opened before the lifecycle could own it). */
  add(name: string, stop: () => unknown): void;
  /**
   * Stops every started service in reverse order, each once, going on past failures (logged);
   * rejects with the first failure after all were tried. Calls after the first wait for it.
   */
  stop(): Promise<void>;
  /** Names of the running services, in start order (for logs and tests). */
  readonly names: readonly string[];
}

/** Creates an empty {@link Lifecycle}. */
export function createLifecycle(options: { logger: LifecycleLogger }): Lifecycle {
  const entries: Array<{ name: string; stop: () => unknown }> = [];
  let stopping: Promise<void> | undefined;

  const stopAll = async (): Promise<void> => {
    let first: { error: unknown } | undefined;
    for (let entry = entries.pop(); entry; entry = entries.pop()) {
      try {
        await entry.stop();
      } catch (error) {
        first ??= { error };
        options.logger.error(
          {
            err: error,
            service: entry.name,
            hint: 'the other services were still stopped; check the named service',
            errorKind: 'internal',
          },
          'service did not stop cleanly',
        );
      }
    }
    if (first) throw first.error;
  };

  return {
    async start(name, start, stop) {
      const service = await start();
      if (stop) entries.push({ name, stop: () => stop(service) });
      return service;
    },
    async service(name, create) {
      const service = create();
      entries.push({ name, stop: () => service.close() });
      await service.start();
      return service;
    },
    add(name, stop) {
      entries.push({ name, stop });
    },
    stop() {
      stopping ??= stopAll();
      return stopping;
    },
    get names() {
      return entries.map((entry) => entry.name);
    },
  };
}
