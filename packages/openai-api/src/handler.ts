import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@agentd/contracts';
import { z } from 'zod';
import {
  agentOfModel,
  type ChatRequest,
  chatRequestSchema,
  chunkBody,
  type CompletionIds,
  completionBody,
  MODEL_PREFIX,
  mapFinishReason,
  turnMessage,
  usageOf,
} from './chat.js';
import { embeddingsBody, embeddingsRequestSchema } from './embeddings.js';
import { OpenAiApiError } from './errors.js';
import { toApiError } from './internal/failure.js';
import { createChunkStream } from './internal/chunk-stream.js';
import { readJsonBody, sendError, sendJson } from './internal/http.js';
import {
  closingEvents,
  openingEvents,
  type ResponseIds,
  responseBody,
  responseId,
  responsesRequestSchema,
  responseTurnMessage,
  sessionOfResponseId,
} from './responses.js';
import { fromZodError } from './internal/zod-error.js';
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
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      ['listModels', 'session', 'chat', 'embed'].every(
        (name) => typeof (value as Record<string, unknown>)[name] === 'function',
      ),
    { message: 'backend must have listModels, session, chat and embed' },
  ),
  callerKey: z.function(),
  maxBodyBytes: z.number().int().min(1).default(1_048_576),
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
      if (path === '/v1/responses') return responses(request, response, caller, body, signal);
      return chat(request, response, caller, body, signal);
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
    const checked = embeddingsRequestSchema.safeParse(body);
    if (!checked.success) throw fromZodError(checked.error);
    const input = typeof checked.data.input === 'string' ? [checked.data.input] : checked.data.input;
    const result = await backend.embed(caller, input, signal);
    sendJson(response, 200, embeddingsBody(checked.data, input, result));
  };

  const chat = async (
    request: IncomingMessage,
    response: ServerResponse,
    caller: C,
    body: unknown,
    signal: AbortSignal,
  ): Promise<void> => {
    const checked = chatRequestSchema.safeParse(body);
    if (!checked.success) throw fromZodError(checked.error);
    const chatRequest = checked.data;
    const message = turnMessage(chatRequest);
    const header = request.headers['x-agentd-session'];
    const sessionKey = await backend.session(caller, {
      header: typeof header === 'string' && header !== '' ? header : undefined,
      user: chatRequest.user ?? undefined,
    });
    const ids: CompletionIds = {
      id: `chatcmpl-${randomId()}`,
      created: Math.floor(now() / 1000),
      model: chatRequest.model,
    };
    const turn = { agentId: agentOfModel(chatRequest.model), message, sessionKey, signal };
    if (!chatRequest.stream) {
      const result = await backend.chat(caller, turn);
      sendJson(response, 200, completionBody(ids, result), { 'x-agentd-session': result.sessionKey });
      return;
    }
    await streamChat(response, caller, chatRequest, ids, turn);
  };

  /**
   * `POST /v1/responses`: one agent turn as a Response. The session is the one the
   * `previous_response_id` carries, else as for chat completions; streamed, the events run
   * `response.created` … `response.output_text.delta` … `response.completed`.
   */
  const responses = async (
    request: IncomingMessage,
    response: ServerResponse,
    caller: C,
    body: unknown,
    signal: AbortSignal,
  ): Promise<void> => {
    const checked = responsesRequestSchema.safeParse(body);
    if (!checked.success) throw fromZodError(checked.error);
    const asked = checked.data;
    const message = responseTurnMessage(asked);
    const header = request.headers['x-agentd-session'];
    const named =
      asked.previous_response_id != null
        ? sessionOfResponseId(asked.previous_response_id)
        : typeof header === 'string' && header !== ''
          ? header
          : undefined;
    const sessionKey = await backend.session(caller, { header: named, user: asked.user ?? undefined });
    const ids: ResponseIds = {
      id: responseId(randomId(), sessionKey),
      messageId: `msg_${randomId().replace(/[^A-Za-z0-9]/g, '')}`,
      createdAt: Math.floor(now() / 1000),
      model: asked.model,
    };
    const turn = { agentId: agentOfModel(asked.model), message, sessionKey, signal };
    if (!asked.stream) {
      const result = await backend.chat(caller, turn);
      sendJson(response, 200, responseBody(ids, result), { 'x-agentd-session': result.sessionKey });
      return;
    }
    const controller = new AbortController();
    const stream = createChunkStream(response, {
      headers: { 'x-agentd-session': sessionKey },
      maxBufferedBytes: parsed.maxBufferedBytes,
      onOverflow: () => controller.abort(),
    });
    let sequence = 0;
    const send = (event: Record<string, unknown>) =>
      stream.send({ ...event, sequence_number: sequence++ }, String(event.type));
    const opening = () => {
      if (!stream.opened) for (const event of openingEvents(ids)) send(event);
    };
    try {
      const result = await backend.chat(caller, {
        ...turn,
        signal: AbortSignal.any([signal, controller.signal]),
        onDelta: (text) => {
          if (text === '') return;
          opening();
          const item = { item_id: ids.messageId, output_index: 0, content_index: 0 };
          send({ type: 'response.output_text.delta', ...item, delta: text, logprobs: [] });
        },
      });
      opening();
      for (const event of closingEvents(ids, result)) send(event);
      stream.end();
    } catch (error) {
      if (!stream.opened) throw error;
      const failure = toApiError(error, logger).toBody().error;
      send({ type: 'error', code: failure.code, message: failure.message, param: failure.param });
      stream.end();
    }
  };

  /**
   * The streamed answer: a role chunk, one chunk per text delta, the finish chunk, the usage
   * chunk when asked for, then `[DONE]`. The stream opens with the first delta, so a turn that
   * fails before producing text (an unknown agent) still gets its HTTP status.
   */
  const streamChat = async (
    response: ServerResponse,
    caller: C,
    chatRequest: ChatRequest,
    ids: CompletionIds,
    turn: { agentId: string; message: string; sessionKey: string; signal: AbortSignal },
  ): Promise<void> => {
    const include = chatRequest.stream_options?.include_usage === true;
    const controller = new AbortController();
    const stream = createChunkStream(response, {
      headers: { 'x-agentd-session': turn.sessionKey },
      maxBufferedBytes: parsed.maxBufferedBytes,
      onOverflow: () => controller.abort(),
    });
    const opening = () => {
      if (!stream.opened) {
        stream.send(
          chunkBody(ids, { delta: { role: 'assistant', content: '' }, finish_reason: null }, { include }),
        );
      }
    };
    try {
      const result = await backend.chat(caller, {
        ...turn,
        signal: AbortSignal.any([turn.signal, controller.signal]),
        onDelta: (text) => {
          if (text === '') return;
          opening();
          stream.send(chunkBody(ids, { delta: { content: text }, finish_reason: null }, { include }));
        },
      });
      opening();
      const finish = { delta: {}, finish_reason: mapFinishReason(result.finishReason) };
      stream.send(chunkBody(ids, finish, { include }, result));
      if (include) stream.send(chunkBody(ids, undefined, { include, value: usageOf(result) }));
      stream.done();
    } catch (error) {
      if (!stream.opened) throw error;
      // Once the stream is open the status is sent; OpenAI then sends the error as an event.
      stream.send(toApiError(error, logger).toBody());
      stream.done();
    }
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
