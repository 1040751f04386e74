/** The playwright-core module, loaded when the first browser starts. */
export type Playwright = typeof import('playwright-core');

let loaded: Playwright | undefined;
let loading: Promise<Playwright> | undefined;

/**
 * Loads playwright-core once. It is the heaviest module agentd uses (~80 MB of memory once
 * imported), so a daemon that never opens a browser never loads it.
 */
export function loadPlaywright(): Promise<Playwright> {
  loading ??= import('playwright-core').then((module) => {
    loaded = module;
    return module;
  });
  return loading;
}

/** Whether `error` is playwright's timeout; false before playwright was loaded (nothing could have thrown one). */
export function isPlaywrightTimeout(error: unknown): boolean {
  return loaded !== undefined && error instanceof loaded.errors.TimeoutError;
}
