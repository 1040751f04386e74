import type { NodeExecutor } from './execute.js';

/** Options of {@link createEchoExecutor}. */
export interface EchoExecutorOptions {
  /** Wait before answering each attempt, in ms (honours the abort signal). @default 0 */
  delayMs?: number | undefined;
}

/**
 * A deterministic executor for offline use and tests: each node's output is its rendered
 * prompt, after an optional delay. No model is involved.
 */
export function createEchoExecutor(options: EchoExecutorOptions = {}): NodeExecutor {
  const delayMs = Math.max(0, options.delayMs ?? 0);
  return {
    run(request) {
      if (delayMs === 0) return Promise.resolve(request.prompt);
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          clearTimeout(timer);
          reject(request.signal.reason);
        };
        const timer = setTimeout(() => {
          request.signal.removeEventListener('abort', onAbort);
          resolve(request.prompt);
        }, delayMs);
        if (request.signal.aborted) onAbort();
        else request.signal.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}
