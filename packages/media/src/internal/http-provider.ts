import { readBoundedStream } from '@agentd/input-guards';
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

/**
 * Largest answer body read from a provider. Generated images come back as base64 JSON (a few
 * MiB); more than this is a misbehaving endpoint, not an answer to hold in memory.
 */
export const MAX_PROVIDER_BODY_BYTES = 64 * 1024 * 1024;

/** The answer body, read chunk by chunk and refused (`PROVIDER_FAILED`) past `maxBytes`. */
export async function bodyOf(
  provider: HttpProvider,
  response: Response,
  maxBytes = MAX_PROVIDER_BODY_BYTES,
): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length'));
  const read =
    Number.isFinite(declared) && declared > maxBytes
      ? { ok: false as const }
      : await readBoundedStream(response.body, maxBytes);
  if (!read.ok) {
    await response.body?.cancel().catch(() => {});
    throw new MediaError('PROVIDER_FAILED', `provider ${provider.id} answered more than ${maxBytes} bytes`, {
      data: { provider: provider.id, errorKind: 'network', maxBytes },
    });
  }
  return read.bytes;
}

/** Reads a JSON answer (at most {@link MAX_PROVIDER_BODY_BYTES}), refusing one that is not JSON. */
export async function jsonOf(provider: HttpProvider, response: Response): Promise<Record<string, unknown>> {
  const body = await bodyOf(provider, response);
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    if (value && typeof value === 'object') return value as Record<string, unknown>;
  } catch {
    // Fall through to the one error below.
  }
  throw new MediaError('PROVIDER_FAILED', `provider ${provider.id} answered something that is not JSON`, {
    data: { provider: provider.id, errorKind: 'network' },
  });
}
