import { ClientError, RpcCallError } from './errors.js';
import {
  buildRequest,
  checkRequest,
  classify,
  type JsonRpcId,
  readWireError,
  serialise,
} from './internal/json-rpc.js';
import { readDuration, readEndpoint, readFunction, readHeaders, readLogger } from './internal/options.js';
import { type ClientLogger, silentLogger } from './logger.js';
import type {
  BatchEntry,
  BatchResults,
  CallArguments,
  CallOptions,
  MethodName,
  MethodParams,
  MethodResult,
} from './methods.js';

/** The `fetch` signature the HTTP client needs; the global `fetch` of Node 20 fits. */
export type FetchFunction = (
  input: string,
  init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<{ status: number; text(): Promise<string> }>;

/** Options of {@link createHttpClient}. */
export interface HttpClientOptions {
  /** Base URL of the daemon, for example `http://127.0.0.1:7420`; requests go to `<url>/rpc`. */
  url: string | URL;
  /** Bearer token sent as `Authorization: Bearer <token>`. */
  token?: string;
  /**
   * Default time a request may take, body included.
   * @default 30000
   */
  requestTimeoutMs?: number;
  /**
   * Extra request headers.
   * @default {}
   */
  headers?: Record<string, string>;
  /**
   * `fetch` implementation.
   * @default globalThis.fetch
   */
  fetch?: FetchFunction;
  /**
   * Logger for unexpected answers.
   * @default a silent logger
   */
  logger?: ClientLogger;
}

/** A JSON-RPC 2.0 client over agentd's `POST /rpc`; each call is one HTTP request. */
export interface HttpClient {
  /**
   * Calls a method and resolves with its result.
   * @throws {RpcCallError} when the server answers with a JSON-RPC error.
   * @throws {ClientError} `UNAUTHORIZED`, `BAD_RESPONSE`, `TIMEOUT`, `ABORTED`, `CONNECT_FAILED`, `INVALID_ARGUMENT`.
   */
  call<M extends MethodName>(method: M, ...args: CallArguments<M, CallOptions>): Promise<MethodResult<M>>;
  /** Sends a notification; the server answers `204 No Content`. */
  notify<M extends MethodName>(method: M, params?: MethodParams<M>, options?: CallOptions): Promise<void>;
  /**
   * Posts an array of requests. Resolves with one entry per request, in order:
   * the result, the `RpcCallError` for that entry, or `undefined` for notifications.
   */
  batch<const T extends readonly BatchEntry[]>(entries: T, options?: CallOptions): Promise<BatchResults<T>>;
}

interface Settings {
  endpoint: string;
  headers: Record<string, string>;
  requestTimeoutMs: number;
  fetch: FetchFunction;
  logger: ClientLogger;
}

interface Answer {
  status: number;
  text: string;
}

function readSettings(input: unknown): Settings {
  const { options, url, token } = readEndpoint(input, ['http:', 'https:']);
  const headers: Record<string, string> = {
    ...readHeaders(options.headers, 'headers'),
    'Content-Type': 'application/json',
    Accept: 'application/json',
  };
  if (token !== undefined) headers.Authorization = `Bearer ${token}`;
  const globalFetch = globalThis.fetch as unknown as FetchFunction | undefined;
  const fetchFunction = readFunction<FetchFunction | undefined>(options.fetch, 'fetch', globalFetch);
  if (!fetchFunction) throw new ClientError('INVALID_OPTIONS', 'no global fetch; pass options.fetch');
  // Keep any path prefix (a reverse proxy may mount the daemon below one).
  const base = url.toString().replace(/\/+$/, '');
  return {
    endpoint: `${base}/rpc`,
    headers,
    requestTimeoutMs: readDuration(options.requestTimeoutMs, 'requestTimeoutMs', 30_000),
    fetch: fetchFunction,
    logger: readLogger<ClientLogger>(options.logger, 'logger', silentLogger),
  };
}

function badResponse(message: string, answer: Answer, cause?: unknown): ClientError {
  return new ClientError('BAD_RESPONSE', message, {
    cause,
    data: { status: answer.status, body: answer.text.slice(0, 500) },
  });
}

/** Parses a body that must be JSON; anything else is a proxy page, a crash or the wrong server. */
function parseBody(answer: Answer): unknown {
  try {
    return JSON.parse(answer.text);
  } catch (error) {
    throw badResponse(`HTTP ${answer.status} answer is not JSON`, answer, error);
  }
}

function unauthorized(answer: Answer): ClientError {
  let wire: ReturnType<typeof readWireError>;
  try {
    const body: unknown = JSON.parse(answer.text);
    wire = readWireError((body as { error?: unknown } | null)?.error);
  } catch {
    wire = undefined;
  }
  return new ClientError(
    'UNAUTHORIZED',
    wire ? `the server rejected the token: ${wire.message}` : 'the server rejected the token (HTTP 401)',
    {
      cause: wire ? new RpcCallError(wire) : undefined,
      data: wire ?? { status: answer.status, body: answer.text.slice(0, 500) },
    },
  );
}

class HttpConnection implements HttpClient {
  private readonly settings: Settings;
  private nextId = 1;

  constructor(options: HttpClientOptions) {
    this.settings = readSettings(options);
  }

  async call<M extends MethodName>(
    method: M,
    ...args: CallArguments<M, CallOptions>
  ): Promise<MethodResult<M>> {
    const [params, options] = args as [unknown, CallOptions | undefined];
    checkRequest(method, params);
    const id = this.nextId++;
    const answer = await this.post(serialise(buildRequest(method, params, id)), method, options);
    if (answer.status === 401) throw unauthorized(answer);
    if (answer.text.length === 0)
      throw badResponse(`HTTP ${answer.status} answer to ${method} has no body`, answer);
    const message = classify(parseBody(answer));
    // An error with id null is still ours: over HTTP one request gets exactly one answer.
    if (message.kind === 'error' && (message.id === id || message.id === null)) {
      throw new RpcCallError(message.error, method);
    }
    if (message.kind === 'result' && message.id === id) return message.result as MethodResult<M>;
    throw badResponse(`HTTP ${answer.status} answer to ${method} is not its JSON-RPC response`, answer);
  }

  async notify<M extends MethodName>(
    method: M,
    params?: MethodParams<M>,
    options?: CallOptions,
  ): Promise<void> {
    checkRequest(method, params);
    const answer = await this.post(serialise(buildRequest(method, params, undefined)), method, options);
    this.expectNoContent(answer, method);
  }

  async batch<const T extends readonly BatchEntry[]>(
    entries: T,
    options?: CallOptions,
  ): Promise<BatchResults<T>> {
    if (!Array.isArray(entries))
      throw new ClientError('INVALID_ARGUMENT', 'batch expects an array of entries');
    if (entries.length === 0) return [] as unknown as BatchResults<T>;
    for (const entry of entries) checkRequest(entry?.method, entry?.params);
    const ids: Array<JsonRpcId | undefined> = entries.map((entry) =>
      entry.notification ? undefined : this.nextId++,
    );
    const body = serialise(
      entries.map((entry, index) => buildRequest(entry.method, entry.params, ids[index])),
    );
    const label = `batch of ${entries.length}`;
    const answer = await this.post(body, label, options);
    if (ids.every((id) => id === undefined)) {
      this.expectNoContent(answer, label);
      return entries.map(() => undefined) as unknown as BatchResults<T>;
    }
    if (answer.status === 401) throw unauthorized(answer);
    const parsed = parseBody(answer);
    if (!Array.isArray(parsed)) {
      // A single error answer rejects the whole batch (too many entries, too large, rate limited).
      const message = classify(parsed);
      if (message.kind === 'error') throw new RpcCallError(message.error);
      throw badResponse(`HTTP ${answer.status} answer to a batch is not an array`, answer);
    }
    const byId = new Map<JsonRpcId, unknown>();
    for (const item of parsed) {
      const message = classify(item);
      if (message.kind === 'result') byId.set(message.id, message.result);
      else if (message.kind === 'error' && message.id !== null)
        byId.set(message.id, new RpcCallError(message.error));
    }
    return ids.map((id, index) => {
      if (id === undefined) return undefined;
      if (!byId.has(id)) throw badResponse(`batch answer has no response for entry ${index}`, answer);
      const value = byId.get(id);
      if (value instanceof RpcCallError) return new RpcCallError(value.toJSON(), entries[index]!.method);
      return value;
    }) as unknown as BatchResults<T>;
  }

  private expectNoContent(answer: Answer, label: string): void {
    if (answer.status === 401) throw unauthorized(answer);
    if (answer.status >= 200 && answer.status < 300 && answer.text.trim().length === 0) return;
    if (answer.text.length > 0) {
      const parsed = parseBody(answer);
      const message = classify(parsed);
      if (message.kind === 'error') throw new RpcCallError(message.error);
    }
    throw badResponse(
      `HTTP ${answer.status} answer to ${label}; a notification expects 204 No Content`,
      answer,
    );
  }

  private async post(body: string, label: string, options: CallOptions | undefined): Promise<Answer> {
    const timeoutMs = options?.timeoutMs ?? this.settings.requestTimeoutMs;
    const signal = options?.signal;
    if (signal?.aborted) {
      throw new ClientError('ABORTED', `${label} was aborted before it was sent`, { cause: signal.reason });
    }
    const controller = new AbortController();
    let timedOut = false;
    const timer = Number.isFinite(timeoutMs)
      ? setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, timeoutMs)
      : undefined;
    const forwardAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', forwardAbort, { once: true });
    try {
      const response = await this.settings.fetch(this.settings.endpoint, {
        method: 'POST',
        headers: this.settings.headers,
        body,
        signal: controller.signal,
      });
      // Reading the body stays under the same timer: a server that stalls mid-body is as stuck as a silent one.
      const text = await response.text();
      return { status: response.status, text };
    } catch (error) {
      if (timedOut) {
        throw new ClientError('TIMEOUT', `${label} got no answer within ${timeoutMs} ms`, {
          cause: error,
          data: { timeoutMs },
        });
      }
      if (signal?.aborted) {
        throw new ClientError('ABORTED', `${label} was aborted; the server may still execute it`, {
          cause: signal.reason,
        });
      }
      this.settings.logger.debug(
        { err: error, endpoint: this.settings.endpoint },
        'http client request failed',
      );
      throw new ClientError(
        'CONNECT_FAILED',
        `could not reach ${this.settings.endpoint}: ${String((error as Error)?.message ?? error)}`,
        {
          cause: error,
        },
      );
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', forwardAbort);
    }
  }
}

/**
 * Creates a JSON-RPC client over agentd's HTTP endpoint (`POST <url>/rpc`).
 * Stateless: no connection to open or close, no notifications from the server.
 *
 * @throws {ClientError} `INVALID_OPTIONS` when the options cannot be used.
 */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  return new HttpConnection(options);
}
