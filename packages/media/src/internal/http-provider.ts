import { MediaError } from '../errors.js';
import type { HttpProvider } from '../options.js';

/** How a keyed request failed, in the voice evidence's words. */
export type ProviderFailureKind = 'auth_required' | 'network' | 'timeout';

/**
 * POSTs to `<baseUrl><path>` of an operator-configured provider with its Bearer key (or the
 * headers `headers` gives), within `timeoutMs`. A non-2xx answer is `PROVIDER_FAILED` naming
 * the status (the key never appears: only the provider id and status are put in the message).
 */
export async function postProvider(
  provider: HttpProvider,
  path: string,
  body: string | FormData,
  options: {
    timeoutMs: number;
    signal?: AbortSignal | undefined;
    json?: boolean;
    headers?: Record<string, string>;
  },
): Promise<Response> {
  const url = `${provider.baseUrl.replace(/\/+$/, '')}${path}`;
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  const headers: Record<string, string> = {
    ...(options.json ? { 'content-type': 'application/json' } : {}),
    ...(options.headers ?? (provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {})),
  };
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', body, headers, signal });
  } catch (error) {
    if (deadline.aborted)
      throw new MediaError(
        'TIMEOUT',
        `provider ${provider.id} did not answer within ${options.timeoutMs} ms`,
        {
          data: { provider: provider.id, errorKind: 'timeout', timeoutMs: options.timeoutMs },
        },
      );
    throw new MediaError('PROVIDER_FAILED', `provider ${provider.id} could not be reached`, {
      data: { provider: provider.id, errorKind: 'network' },
      cause: error,
    });
  }
  if (!response.ok) {
    await response.body?.cancel();
    const auth = response.status === 401 || response.status === 403;
    throw new MediaError(
      'PROVIDER_FAILED',
      `provider ${provider.id} answered HTTP ${response.status}${auth ? ' (check its apiKey)' : ''}`,
      {
        data: {
          provider: provider.id,
          status: response.status,
          errorKind: auth ? 'auth_required' : 'network',
        },
      },
    );
  }
  return response;
}

/** Reads a JSON answer, refusing one that is not JSON. */
export async function jsonOf(provider: HttpProvider, response: Response): Promise<Record<string, unknown>> {
  try {
    const value: unknown = await response.json();
    if (value && typeof value === 'object') return value as Record<string, unknown>;
  } catch {
    // Fall through to the one error below.
  }
  throw new MediaError('PROVIDER_FAILED', `provider ${provider.id} answered something that is not JSON`, {
    data: { provider: provider.id, errorKind: 'network' },
  });
}
