import { isLocalUrl } from '@agentd/input-guards';
import type { ProviderEntry, ProvidersSection } from './config.js';

/**
 * Fields of an OpenAI-compatible `GET /models` entry that name the context window the server
 * actually serves, in the order they are trusted: vLLM's `max_model_len`, then
 * `context_length` and `max_context_length` (servers and gateways that report the loaded
 * window under those names). A training-time window (llama.cpp's `meta.n_ctx_train`) is not
 * a served window and is ignored.
 */
const SERVED_WINDOW_FIELDS = ['max_model_len', 'context_length', 'max_context_length'] as const;

/** Options of {@link probeServedWindows}. */
export interface ServedWindowProbeOptions {
  /** The provider's base URL, e.g. `http://127.0.0.1:8000/v1`; `/models` is appended. */
  baseUrl: string;
  /** Extra request headers (the provider entry's `headers`). @default {} */
  headers?: Record<string, string>;
  /** The fetch to use. @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Time the request may take. @default 3000 */
  timeoutMs?: number;
}

/**
 * Asks an OpenAI-compatible server which context window it serves per model
 * (`GET <baseUrl>/models`). Resolves to a map of model id to served tokens, holding only
 * models whose entry reports one; `undefined` when the server could not be asked (network
 * error, timeout, non-2xx answer, or a body that is not a model list). Never throws.
 */
export async function probeServedWindows(
  options: ServedWindowProbeOptions,
): Promise<Map<string, number> | undefined> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const url = `${options.baseUrl.replace(/\/+$/, '')}/models`;
  try {
    const response = await doFetch(url, {
      headers: { accept: 'application/json', ...(options.headers ?? {}) },
      signal: AbortSignal.timeout(options.timeoutMs ?? 3000),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return undefined;
    }
    const body: unknown = await response.json();
    const data = (body as { data?: unknown } | null)?.data;
    if (!Array.isArray(data)) return undefined;
    const served = new Map<string, number>();
    for (const item of data) {
      if (typeof item !== 'object' || item === null) continue;
      const entry = item as Record<string, unknown>;
      if (typeof entry.id !== 'string') continue;
      for (const field of SERVED_WINDOW_FIELDS) {
        const value = entry[field];
        if (typeof value === 'number' && Number.isInteger(value) && value > 0) {
          served.set(entry.id, value);
          break;
        }
      }
    }
    return served;
  } catch {
    return undefined;
  }
}

/**
 * Whether a base URL points at this machine or a private network: the local model servers
 * whose served window can differ from the configured one. Hosted APIs are never probed. The
 * address rule is `@agentd/input-guards`' `isLocalUrl` (the same classification the browser
 * and media guards refuse), so no private form is missed.
 */
export function isLocalEndpoint(baseUrl: string): boolean {
  return isLocalUrl(baseUrl);
}

/** What {@link checkServedWindows} found. */
export interface ServedWindowPosture {
  /** Providers with at least one model whose served window is below its configured window. */
  servedBelowConfigured: number;
  /** Local OpenAI-compatible providers whose `/models` answered. */
  providersProbed: number;
  /** Local OpenAI-compatible providers that could not be asked. */
  providersUnreachable: number;
  /** Per provider id, the models served below their configured window (ids only, sorted). */
  below: Record<string, string[]>;
}

function configuredWindows(entry: ProviderEntry): Map<string, number> {
  const windows = new Map<string, number>();
  for (const model of entry.models) {
    if (typeof model === 'string') windows.set(model, entry.contextWindow);
    else windows.set(model.id, model.contextWindow ?? entry.contextWindow);
  }
  return windows;
}

/**
 * The `config_posture` check of served context windows: every local OpenAI-compatible
 * provider is asked what it serves, and a provider counts when a configured model is served
 * with a smaller window than the config promises (prompts sized for the configured window
 * would be cut by the server). Hosted providers and the offline provider are not asked.
 */
export async function checkServedWindows(
  providers: ProvidersSection,
  options: Omit<ServedWindowProbeOptions, 'baseUrl' | 'headers'> = {},
): Promise<ServedWindowPosture> {
  const posture: ServedWindowPosture = {
    servedBelowConfigured: 0,
    providersProbed: 0,
    providersUnreachable: 0,
    below: {},
  };
  const ids = Object.keys(providers.entries).sort();
  const probes = await Promise.all(
    ids.map(async (id) => {
      const entry = providers.entries[id] as ProviderEntry;
      if (entry.type !== 'openai-compatible' || !entry.baseUrl || !isLocalEndpoint(entry.baseUrl))
        return undefined;
      const served = await probeServedWindows({
        ...options,
        baseUrl: entry.baseUrl,
        ...(entry.headers ? { headers: entry.headers } : {}),
      });
      return { id, entry, served: served ?? null };
    }),
  );
  for (const probe of probes) {
    if (!probe) continue;
    if (probe.served === null) {
      posture.providersUnreachable += 1;
      continue;
    }
    posture.providersProbed += 1;
    const below: string[] = [];
    for (const [model, configured] of configuredWindows(probe.entry)) {
      const served = probe.served.get(model);
      if (served !== undefined && served < configured) below.push(model);
    }
    if (below.length > 0) {
      posture.servedBelowConfigured += 1;
      posture.below[probe.id] = below.sort();
    }
  }
  return posture;
}
