import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Dispatcher } from './dispatcher.js';
import { ErrorCodes, RpcError } from './errors.js';
import { authenticateHttp } from './internal/http-auth.js';
import { defaultRandomId, fn, loggerSchema, parseOptions } from './internal/options.js';
import { noopLogger, type RpcLogger } from './logger.js';
import type { AnyMethod } from './method.js';
import { createSseWriter, type SseWriter } from './sse-writer.js';
import type { Authenticate } from './websocket-transport.js';

/** Options of {@link createSseRpcHandler}. */
export interface SseRpcHandlerOptions {
  /** Runs the method: the scope check, params validation, `wrap` and failure logging of `/rpc`. */
  dispatcher: Dispatcher;
  /** Called once per request; `null` or `undefined` answers HTTP 401. */
  authenticate: Authenticate;
  /**
   * The method a request runs, built per request. Its params are the query parameters (all
   * strings); its handler calls `open()` once it will answer with events (the response then
   * turns into the stream), and its result is sent as the last event, `done`.
   */
  method(open: () => SseWriter): AnyMethod;
  /** Interval of keep-alive comments. @default 15000 */
  heartbeatMs?: number | undefined;
  /**
   * Bytes waiting for a client that stopped reading past which its stream is ended and the
   * method's work cancelled; `0` turns the cap off. @default 1048576
   */
  maxBufferedBytes?: number | undefined;
  /** Logger for authentication failures and streams ended for a client not reading. @default a no-op logger */
  logger?: RpcLogger | undefined;
  /** Source of per-request connection ids. @default crypto.randomUUID */
  randomId?: (() => string) | undefined;
}

/** A `node:http` request listener for `GET <path>?<params>`. Never rejects. */
export type SseRpcHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

const optionsSchema = z.object({
  dispatcher: z.custom<Dispatcher>(
    (value) => typeof (value as { invoke?: unknown } | null)?.invoke === 'function',
    { message: 'dispatcher must come from createDispatcher' },
  ),
  authenticate: fn<Authenticate>('authenticate'),
  method: fn<(open: () => SseWriter) => AnyMethod>('method'),
  heartbeatMs: z.number().int().nonnegative().default(15_000),
  maxBufferedBytes: z.number().int().nonnegative().default(1_048_576),
  logger: loggerSchema.optional(),
  randomId: fn<() => string>('randomId').optional(),
});

/** The HTTP status of a failure answered before the stream opened. */
function statusOf(error: RpcError): number {
  if (error.code === ErrorCodes.InvalidParams) return 400;
  if (error.code === ErrorCodes.NotFound) return 404;
  // The dispatcher's scope refusal is a -32603 whose message names the scope.
  if (error.code === ErrorCodes.InternalError && error.message.startsWith('Insufficient scope')) return 403;
  return error.code === ErrorCodes.InternalError ? 500 : 400;
}

function sendJson(response: ServerResponse, status: number, error: RpcError, headers = {}): void {
  if (response.headersSent) return;
  response
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
    .end(JSON.stringify({ error: error.toJSON() }));
}

/**
 * Serves one method as a server-sent event stream, through the same authentication, scope
 * check, params validation and error mapping as the JSON-RPC transports. Before the handler
 * opens the stream, failures are JSON answers `{ error }`: 405 for a method other than GET,
 * 401 without a valid token, 403 for a missing scope, 400 for bad params. Once it is open, a
 * failure is the last event, `error`, carrying the JSON-RPC error object; a success is `done`
 * carrying the result. The client going away aborts `context.signal`.
 *
 * @throws {RpcCoreError} `INVALID_OPTIONS` when the options fail validation.
 */
export function createSseRpcHandler(options: SseRpcHandlerOptions): SseRpcHandler {
  const parsed = parseOptions(optionsSchema, options, 'createSseRpcHandler');
  const { dispatcher, authenticate, heartbeatMs, maxBufferedBytes } = parsed;
  const logger = parsed.logger ?? noopLogger;
  const randomId = parsed.randomId ?? defaultRandomId;

  return async function handleSse(request, response) {
    if (request.method !== 'GET') {
      sendJson(response, 405, RpcError.invalidRequest('Method not allowed: use GET'), { allow: 'GET' });
      return;
    }
    const auth = await authenticateHttp(authenticate, request, logger, 'sse rpc');
    if (!auth.identity) {
      sendJson(response, auth.status, auth.error, auth.headers);
      return;
    }
    const { identity } = auth;
    const params = Object.fromEntries(new URL(request.url ?? '/', 'http://localhost').searchParams);
    const controller = new AbortController();
    let stream: SseWriter | undefined;
    const open = (): SseWriter => {
      if (!stream) {
        const opened = createSseWriter(response, { heartbeatMs, maxBufferedBytes });
        stream = opened;
        // What streamed so far stays with the handler; the client going away cancels the rest.
        opened.onClose(() => {
          controller.abort();
          if (opened.overflowed) {
            logger.warn(
              {
                connectionId: connection.connectionId,
                errorKind: 'resource',
                hint: 'The client stopped reading its event stream; the request was cancelled.',
                maxBufferedBytes,
              },
              'sse stream closed: client not reading',
            );
          }
        });
      }
      return stream;
    };
    const connection = {
      identity,
      connectionId: randomId(),
      transport: 'http' as const,
      signal: controller.signal,
    };
    const outcome = await Promise.resolve()
      .then(() => dispatcher.invoke(options.method(open), params, connection))
      .then(
        (result) => ({ event: 'done' as const, data: result }),
        (error: unknown) => {
          if (error instanceof RpcError) return { event: 'error' as const, error };
          // invoke only rejects with RpcErrors; this is the method factory failing.
          logger.error(
            { err: error, errorKind: 'internal', hint: 'The method factory threw; the request got -32603.' },
            'sse rpc method failed',
          );
          return { event: 'error' as const, error: RpcError.internal() };
        },
      );
    if (outcome.event === 'done') {
      open().send({ event: 'done', data: outcome.data });
      stream?.close();
    } else if (stream) {
      stream.send({ event: 'error', data: outcome.error.toJSON() });
      stream.close();
    } else {
      sendJson(response, statusOf(outcome.error), outcome.error);
    }
  };
}
