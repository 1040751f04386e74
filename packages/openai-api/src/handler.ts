import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@agentd/contracts';
import { BODY_LIMIT, hasMethods } from '@agentd/input-guards';
import { z } from 'zod';
import { agentOfModel, MODEL_PREFIX } from './chat.js';
import { embeddingsBody, embeddingsRequestSchema, refuseTokenInput } from './embeddings.js';
import { OpenAiApiError } from './errors.js';
import type { ApiContext } from './internal/context.js';
import { toApiError } from './internal/failure.js';
import { readJsonBody, sendError, sendJson } from './internal/http.js';
import { serveChat } from './internal/serve-chat.js';
import { serveResponses } from './internal/serve-responses.js';
import { parseBody } from './internal/zod-error.js';
import type { OpenAiBackend, RateLimiter } from './types.js';

/** Options of {@link createOpenAiApiHandler}. */
export interface OpenAiApiHandlerOptions<C> {
  /** The caller of a request from its `Authorization: Bearer` header; `null` answers 401. */
  authenticate(request: IncomingMessage): C | null | Promise<C | null>;
  /** What the API runs on. */
  backend: OpenAiBackend<C>;
  /** The key a caller's requests are counted under (its token id). */
  callerKey(caller: C): string;
  /** Largest request body in bytes. @default 1048576 */
  maxBodyBytes?: number | undefined;
  /** A fresh per-caller request limiter; none means no limit. @default undefined */
  createRateLimiter?: (() => RateLimiter) | undefined;
  /** Seconds a limited caller is told to wait (`retry-after`). @default 60 */
  retryAfterSeconds?: number | undefined;
  /** Bytes a streamed answer may hold for a client that stopped reading. @default 1048576 */
  maxBufferedBytes?: number | undefined;
  /** Logs internal failures (never bodies or tokens). @default a no-op logger */
  logger?: Logger | undefined;
  /** Clock. @default Date.now */
  now?: (() => number) | undefined;
  /** Ids of completions. @default crypto.randomUUID */
  randomId?: (() => string) | undefined;
}

const optionsSchema = z.object({
  authenticate: z.function(),
  backend: z.custom<OpenAiBackend<unknown>>(
    (value) => hasMethods(value, ['listModels', 'session', 'chat', 'embed']),
    { message: 'backend must have listModels, session, chat and embed' },
  ),
  callerKey: z.function(),
  maxBodyBytes: z.number().int().min(1).default(BODY_LIMIT.default),
  createRateLimiter: z.function().optional(),
  retryAfterSeconds: z.number().int().min(1).default(60),
  maxBufferedBytes: z.number().int().min(0).default(1_048_576),
  logger: z.custom<Logger>((value) => typeof value === 'object' && value !== null).optional(),
  now: z.function().optional(),
  randomId: z.function().optional(),
});

/** A `node:http` request listener for `/v1/*`; never rejects. */
export type OpenAiApiHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

/** Most callers whose limiters are kept; the oldest is dropped past it. */
const MAX_LIMITERS = 10_000;

const noop = (): void => {};
const noopLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/**
 * Serves the OpenAI API over an agent backend: `GET /v1/models`, `POST /v1/chat/completions`
 * and `POST /v1/responses` (streamed and not) and `POST /v1/embeddings`. Every request is authenticated (401), counted
 * against its caller's rate (429) and size-capped (413); failures are OpenAI error bodies.
 * The path is read from `request.url`; the caller mounts the handler under `/v1`.
 *
 * @throws {Error} when the options fail validation.
 */
export function createOpenAiApiHandler<C>(options: OpenAiApiHandlerOptions<C>): OpenAiApiHandler {
  const parsed = optionsSchema.parse(options);
  const { backend } = options;
  const logger = options.logger ?? noopLogger;
  const now = options.now ?? Date.now;
  const randomId = options.randomId ?? randomUUID;
  const limiters = new Map<string, RateLimiter>();
  const ctx: ApiContext<C> = { backend, logger, now, randomId, maxBufferedBytes: parsed.maxBufferedBytes };

  const admit = (caller: C): boolean => {
    const create = options.createRateLimiter;
    if (!create) return true;
    const key = options.callerKey(caller);
    let limiter = limiters.get(key);
    if (!limiter) {
      if (limiters.size >= MAX_LIMITERS) limiters.delete(limiters.keys().next().value as string);
      limiter = create();
      limiters.set(key, limiter);
    }
    return limiter.tryAcquire();
  };

  const route = async (request: IncomingMessage, response: ServerResponse, caller: C): Promise<void> => {
    const path = (request.url ?? '/').split('?', 1)[0];
    const method = request.method ?? 'GET';
    if (path === '/v1/models' && method === 'GET') return listModels(response, caller);
    if (path?.startsWith('/v1/models/') && method === 'GET') {
      return getModel(response, caller, decodeURIComponent(path.slice('/v1/models/'.length)));
    }
    if (path === '/v1/chat/completions' || path === '/v1/embeddings' || path === '/v1/responses') {
      if (method !== 'POST') throw notAllowed(method, path);
      const body = await readJsonBody(request, parsed.maxBodyBytes);
      const signal = abortOnClose(request, response);
      if (path === '/v1/embeddings') return embeddings(response, caller, body, signal);
      if (path === '/v1/responses') return serveResponses(ctx, request, response, caller, body, signal);
      return serveChat(ctx, request, response, caller, body, signal);
    }
    throw new OpenAiApiError(
      404,
      'invalid_request_error',
      'unknown_url',
      `Unknown request URL: ${method} ${path}`,
    );
  };

  const listModels = async (response: ServerResponse, caller: C): Promise<void> => {
    const models = await backend.listModels(caller);
    sendJson(response, 200, { object: 'list', data: models.map(modelEntry) });
  };

  const getModel = async (response: ServerResponse, caller: C, id: string): Promise<void> => {
    const found = (await backend.listModels(caller)).find((model) => model.agentId === agentOfModel(id));
    if (!found) throw modelNotFound(id);
    sendJson(response, 200, modelEntry(found));
  };

  const embeddings = async (response: ServerResponse, caller: C, body: unknown, signal: AbortSignal) => {
    refuseTokenInput(body);
    const asked = parseBody(embeddingsRequestSchema, body);
    const input = typeof asked.input === 'string' ? [asked.input] : asked.input;
    const dimensions = asked.dimensions ?? undefined;
    const result = await backend.embed(caller, input, signal, dimensions === undefined ? {} : { dimensions });
    sendJson(response, 200, embeddingsBody(asked, input, result));
  };

  return async function handleOpenAi(request, response) {
    try {
      const caller = await options.authenticate(request);
      if (caller === null || caller === undefined) {
        request.resume();
        throw new OpenAiApiError(
          401,
          'invalid_request_error',
          'invalid_api_key',
          'Incorrect or missing API key: send a daemon token with scope rpc as Authorization: Bearer <token>',
        );
      }
      if (!admit(caller)) {
        request.resume();
        sendError(
          response,
          new OpenAiApiError(
            429,
            'rate_limit_error',
            'rate_limit_exceeded',
            'Rate limit reached for this token',
          ),
          { 'retry-after': String(parsed.retryAfterSeconds) },
        );
        return;
      }
      await route(request, response, caller);
    } catch (error) {
      sendError(response, toApiError(error, logger));
    }
  };
}

function modelEntry(model: { agentId: string; createdMs?: number | undefined }) {
  return {
    id: `${MODEL_PREFIX}${model.agentId}`,
    object: 'model',
    created: Math.floor((model.createdMs ?? 0) / 1000),
    owned_by: 'agentd',
  };
}

/** 404 `model_not_found` for a model that names no agent. */
export function modelNotFound(model: string): OpenAiApiError {
  return new OpenAiApiError(
    404,
    'invalid_request_error',
    'model_not_found',
    `The model '${model}' does not exist: list them with GET /v1/models`,
    { param: 'model' },
  );
}

function notAllowed(method: string, path: string): OpenAiApiError {
  return new OpenAiApiError(
    405,
    'invalid_request_error',
    'method_not_allowed',
    `${method} is not allowed on ${path}`,
  );
}

/** Aborted when the client goes away before the answer is complete. */
function abortOnClose(request: IncomingMessage, response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) controller.abort();
  });
  request.once('aborted', () => controller.abort());
  return controller.signal;
}
