import type { IncomingMessage, ServerResponse } from 'node:http';
import { type BoundedBody, readBoundedBody } from '@agentd/input-guards';
import { z } from 'zod';
import type { DispatchConnection, Dispatcher } from './dispatcher.js';
import type { JsonRpcFailure } from './envelope.js';
import { RpcError } from './errors.js';
import { authenticateHttp } from './internal/http-auth.js';
import { defaultRandomId, fn, loggerSchema, parseOptions } from './internal/options.js';
import { failure } from './internal/wire.js';
import { noopLogger, type RpcLogger } from './logger.js';
import type { Identity } from './method.js';
import type { Authenticate } from './websocket-transport.js';

/** Options of {@link createHttpRpcHandler}. */
export interface HttpRpcHandlerOptions {
  /** Handles the parsed body. */
  dispatcher: Dispatcher;
  /** Called once per request; `null` or `undefined` answers HTTP 401. */
  authenticate: Authenticate;
  /**
   * Largest request body in bytes; a larger one is answered with HTTP 413 and a `-32600` body.
   * @default dispatcher.maxMessageBytes
   */
  maxBodyBytes?: number | undefined;
  /**
   * Logger for authentication and body failures.
   * @default a no-op logger
   */
  logger?: RpcLogger | undefined;
  /**
   * Source of per-request connection ids.
   * @default crypto.randomUUID
   */
  randomId?: (() => string) | undefined;
}

/** A `node:http` request listener for `POST /rpc`. Never rejects; every failure becomes an HTTP answer. */
export type HttpRpcHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

const optionsSchema = z.object({
  dispatcher: z.custom<Dispatcher>(
    (value) => typeof (value as { dispatch?: unknown } | null)?.dispatch === 'function',
    { message: 'dispatcher must come from createDispatcher' },
  ),
  authenticate: fn<Authenticate>('authenticate'),
  maxBodyBytes: z.number().int().positive().optional(),
  logger: loggerSchema.optional(),
  randomId: fn<() => string>('randomId').optional(),
});

/**
 * Creates the HTTP JSON-RPC endpoint: one request object or a batch array per `POST`.
 *
 * Answers: 200 with the JSON-RPC response (errors included), 204 when there is nothing to answer
 * (notifications), 401 when authentication fails, 405 for any method but `POST`, 413 when the body is over
 * `maxBodyBytes`, 500 when `authenticate` throws. Routing by path is left to the caller.
 *
 * @throws {RpcCoreError} `INVALID_OPTIONS` when the options fail validation.
 */
export function createHttpRpcHandler(options: HttpRpcHandlerOptions): HttpRpcHandler {
  const parsed = parseOptions(optionsSchema, options, 'createHttpRpcHandler');
  const { dispatcher, authenticate } = parsed;
  const maxBodyBytes = parsed.maxBodyBytes ?? dispatcher.maxMessageBytes;
  const logger = parsed.logger ?? noopLogger;
  const randomId = parsed.randomId ?? defaultRandomId;

  function reply(
    response: ServerResponse,
    status: number,
    body: string | undefined,
    headers: Record<string, string> = {},
  ) {
    if (response.headersSent) return;
    response.statusCode = status;
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    if (body === undefined) {
      response.end();
      return;
    }
    response.setHeader('content-type', 'application/json; charset=utf-8');
    response.setHeader('content-length', Buffer.byteLength(body));
    response.end(body);
  }

  function replyError(
    response: ServerResponse,
    status: number,
    error: JsonRpcFailure,
    headers?: Record<string, string>,
  ) {
    reply(response, status, JSON.stringify(error), headers);
  }

  return async function handleHttpRpc(request, response) {
    if (request.method !== 'POST') {
      replyError(
        response,
        405,
        failure(null, RpcError.invalidRequest('Method not allowed: use POST').toJSON()),
        {
          allow: 'POST',
        },
      );
      return;
    }
    const pending = authenticateHttp(authenticate, request, logger, 'http rpc');
    const auth = pending instanceof Promise ? await pending : pending;
    if (!auth.identity) {
      replyError(response, auth.status, failure(null, auth.error.toJSON()), auth.headers);
      return;
    }
    const { identity } = auth;
    let body: BoundedBody;
    try {
      body = await readBoundedBody(request, maxBodyBytes);
    } catch (error) {
      logger.warn(
        { err: error, errorKind: 'network', hint: 'The client went away while sending the body.' },
        'http rpc body read failed',
      );
      return;
    }
    if (!body.ok) {
      const received = body.declaredBytes;
      const message =
        received === undefined
          ? `Request body too large: more than ${maxBodyBytes} bytes`
          : `Request body too large: ${received} bytes, maximum is ${maxBodyBytes}`;
      // The rest of the body is not read, so the connection cannot be reused.
      replyError(
        response,
        413,
        failure(
          null,
          RpcError.invalidRequest(message, { received: received ?? null, maximum: maxBodyBytes }).toJSON(),
        ),
        { connection: 'close' },
      );
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(body.text);
    } catch {
      replyError(response, 200, failure(null, RpcError.parseError().toJSON()));
      return;
    }
    const connection = new HttpConnection(identity, randomId(), response);
    const answer = dispatcher.answer(message, connection);
    const answerText = answer instanceof Promise ? await answer : answer;
    if (answerText === undefined) reply(response, 204, undefined);
    else reply(response, 200, answerText);
  };
}

/**
 * The dispatch connection of one HTTP request. Its abort signal (aborted when the client goes
 * away before the answer is written) is made only when a handler reads it: most calls never
 * do, and a controller plus a close listener per request is measurable.
 */
class HttpConnection implements DispatchConnection {
  readonly transport = 'http' as const;
  #controller: AbortController | undefined;

  constructor(
    readonly identity: Identity,
    readonly connectionId: string,
    private readonly response: ServerResponse,
  ) {}

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const controller = new AbortController();
      this.#controller = controller;
      const response = this.response;
      if (!response.writableFinished && (response.socket === null || response.socket.destroyed)) {
        controller.abort();
      } else {
        response.once('close', () => {
          if (!response.writableFinished) controller.abort();
        });
      }
    }
    return this.#controller.signal;
  }
}
