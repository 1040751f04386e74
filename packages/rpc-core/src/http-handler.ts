import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectBoundedBody } from '@agentd/input-guards';
import { z } from 'zod';
import type { DispatchConnection, Dispatcher } from './dispatcher.js';
import type { JsonRpcFailure } from './envelope.js';
import { RpcError } from './errors.js';
import { authenticateHttp, type HttpAuthOutcome } from './internal/http-auth.js';
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

/**
 * A `node:http` request listener for `POST /rpc`. Never throws; every failure becomes an HTTP
 * answer, written once the body is read and the call has answered.
 */
export type HttpRpcHandler = (request: IncomingMessage, response: ServerResponse) => void;

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

  function tooLarge(response: ServerResponse, received: number | undefined): void {
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
  }

  /** Parses and dispatches a complete body, then writes the answer. */
  function answerBody(response: ServerResponse, identity: Identity, text: string): void | Promise<void> {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      replyError(response, 200, failure(null, RpcError.parseError().toJSON()));
      return;
    }
    const answer = dispatcher.answer(message, new HttpConnection(identity, randomId(), response));
    if (!(answer instanceof Promise)) return replyAnswer(response, answer);
    return answer.then((text) => replyAnswer(response, text));
  }

  function replyAnswer(response: ServerResponse, text: string | undefined): void {
    if (text === undefined) {
      reply(response, 204, undefined);
      return;
    }
    if (response.headersSent) return;
    // The raw header list: no header object to build and check name by name.
    response.writeHead(200, [
      'content-type',
      'application/json; charset=utf-8',
      'content-length',
      String(Buffer.byteLength(text)),
    ]);
    response.end(text);
  }

  /**
   * Reads the body with listeners rather than a promise per request (the daemon runs with
   * AsyncLocalStorage, whose hooks every promise pays for), then answers it.
   */
  function readAndAnswer(request: IncomingMessage, response: ServerResponse, identity: Identity): void {
    collectBoundedBody(
      request,
      maxBodyBytes,
      (body) => {
        if (body.ok) void answerBody(response, identity, body.text);
        else tooLarge(response, body.declaredBytes);
      },
      (error) =>
        logger.warn(
          { err: error, errorKind: 'network', hint: 'The client went away while sending the body.' },
          'http rpc body read failed',
        ),
    );
  }

  return function handleHttpRpc(request, response) {
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
    const afterAuth = (auth: HttpAuthOutcome): void => {
      if (auth.identity) readAndAnswer(request, response, auth.identity);
      else replyError(response, auth.status, failure(null, auth.error.toJSON()), auth.headers);
    };
    const pending = authenticateHttp(authenticate, request, logger, 'http rpc');
    if (pending instanceof Promise) void pending.then(afterAuth);
    else afterAuth(pending);
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
