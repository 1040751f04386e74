import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Request context bound to every line logged inside {@link runWithTrace}.
 * `traceId` is required; other canonical fields (connectionId, clientId, method,
 * requestId, agentId, ...) may ride along.
 */
export interface TraceContext {
  /** Id shared by every line of one request. */
  traceId: string;
  [field: string]: unknown;
}

const storage = new AsyncLocalStorage<Readonly<TraceContext>>();

/**
 * Runs `fn` with `context` bound: every line logged by any agentd logger inside
 * `fn`, across awaits, timers and callbacks started there, carries the context's
 * fields. Nested calls merge with the outer context (inner fields win), so a
 * per-method scope can add `method` to a per-connection scope. Fields passed on
 * the log call itself win over the context.
 */
export function runWithTrace<R>(context: TraceContext, fn: () => R): R {
  const outer = storage.getStore();
  const merged = Object.freeze(outer === undefined ? { ...context } : { ...outer, ...context });
  return storage.run(merged, fn);
}

/** The context bound by the innermost {@link runWithTrace}, or `undefined` outside one. */
export function currentTrace(): Readonly<TraceContext> | undefined {
  return storage.getStore();
}
