import type { APICallError } from 'ai';

/** The `ai` SDK module, loaded on the first model call. */
export type AiSdk = typeof import('ai');

let loaded: AiSdk | undefined;
let loading: Promise<AiSdk> | undefined;

/**
 * Loads the `ai` SDK once. A daemon that never calls a model provider (the offline default)
 * never pays for it: the SDK and its telemetry dependencies cost ~20 MB of memory at start.
 */
export function loadAiSdk(): Promise<AiSdk> {
  loading ??= import('ai').then((module) => {
    loaded = module;
    return module;
  });
  return loading;
}

/** Whether `error` is the SDK's API call failure; false before the SDK was loaded (nothing could have thrown one). */
export function isApiCallError(error: unknown): error is APICallError {
  return loaded?.APICallError.isInstance(error) === true;
}
