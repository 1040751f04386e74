import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorKind } from '@agentd/contracts';
import { z } from 'zod';
import { planWebhookAction, type WebhookActionPlan } from './action.js';
import { DEFAULT_MAX_BODY_BYTES, strictPayloadSchema } from './config.js';
import { type HeaderSource, headerMap, readHeader } from './internal/headers.js';
import { type BodyResult, readNodeBodyInto, readWebBody } from './internal/read-body.js';
import { parseWith } from './internal/validate.js';
import { noopLogger, type WebhookLogger } from './logger.js';
import {
  normalizeHookPath,
  type WebhookMapping,
  type WebhookMappingInput,
  webhookMappingListSchema,
  webhookMappingSchema,
} from './mapping.js';
import { resolvePresets, type WebhookPreset } from './presets.js';
import type { TemplateContext } from './template.js';
import { createVerifier, hmacSettingsSchema, type Verifier, type VerifyFailureReason } from './signature.js';

/** The path segment of the strict endpoint under the base path. */
export const STRICT_PATH = 'webhook';

/** The contract's delivery id header. */
export const DEFAULT_DELIVERY_HEADER = 'x-webhook-id';

/**
 * What a strict event runs when no mapping takes it (mappings see strict events as path
 * `webhook` with the payload's `source`): an agent turn in session `hook:webhook:<source>`.
 */
export const STRICT_DEFAULT_MAPPING: Readonly<WebhookMapping> = Object.freeze(
  webhookMappingSchema.parse({
    id: 'webhook',
    name: 'Strict webhook',
    sessionKey: 'hook:webhook:{{payload.source}}',
    messageTemplate: 'Webhook event {{payload.event}} from {{payload.source}}\n{{payload.data}}',
  }),
);

/** One accepted request, handed to {@link WebhookHandlerOptions.onWebhook}. */
export interface WebhookEvent {
  /** `strict` for `<base>/webhook`, `mapped` for every other `<base>/<path>`. */
  endpoint: 'strict' | 'mapped';
  /** The mapping that took the request (for strict events without one, {@link STRICT_DEFAULT_MAPPING}). */
  mapping: WebhookMapping;
  /** The mapping's templates rendered against this request. */
  plan: WebhookActionPlan;
  /** The parsed JSON body. */
  payload: unknown;
  /** Lowercase header names; values as sent (the signature header included). */
  headers: Record<string, string>;
  query: Record<string, string>;
  /** Normalised path after the base path. */
  path: string;
  /** The delivery id header (`x-webhook-id`, or the matched preset's), when sent. */
  deliveryId: string | undefined;
  /** Size of the raw body in bytes. */
  bodyBytes: number;
  /** When the request arrived, in milliseconds. */
  receivedAt: number;
}

/** What the host did with an event; `duplicate` means an earlier delivery with the same id ran already. */
export type WebhookEventResult = { duplicate?: boolean } | undefined;

/** Why a request was not accepted. */
export type WebhookRejectReason =
  | VerifyFailureReason
  | 'no_secret'
  | 'not_found'
  | 'method_not_allowed'
  | 'body_too_large'
  | 'body_aborted'
  | 'invalid_json'
  | 'invalid_payload'
  | 'no_mapping'
  | 'handler_error';

/** One line of observability per request: counted and logged, never holding body content. */
export interface WebhookOutcome {
  endpoint: 'strict' | 'mapped' | 'none';
  /** `accepted` ran the callback; `duplicate` was acknowledged without running it again. */
  outcome: 'accepted' | 'duplicate' | 'rejected' | 'failed';
  /** `ok`, `duplicate` or a {@link WebhookRejectReason}. */
  reason: 'ok' | 'duplicate' | WebhookRejectReason;
  status: number;
  mappingId: string | undefined;
  deliveryId: string | undefined;
  path: string;
  bodyBytes: number;
  durationMs: number;
}

/** An answer, ready to write. */
export interface WebhookResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Options of {@link createWebhookHandler}. */
export interface WebhookHandlerOptions {
  /** Base path; requests outside it answer 404. @default '/hooks' */
  basePath?: string;
  /**
   * HMAC secret(s). The strict endpoint always requires a valid signature (and refuses
   * everything when no secret is set); mapped endpoints verify only when one is set.
   */
  secret?: string | readonly string[] | undefined;
  /** Header names, algorithm and freshness window. @default the contract's HMAC defaults */
  hmac?: Partial<z.input<typeof hmacSettingsSchema>>;
  /** Largest body in bytes; a larger one answers 400 and is not kept. @default 262144 */
  maxBodyBytes?: number;
  /** Mappings, tried in order before the presets. @default [] */
  mappings?: readonly WebhookMappingInput[];
  /** Preset ids to enable; unknown ones are ignored with a warn line. @default [] */
  presets?: readonly string[];
  /** Header carrying a delivery id for idempotency. @default 'x-webhook-id' */
  deliveryHeaderName?: string;
  /**
   * Runs for every accepted request, after verification, parsing and matching; the
   * answer (200) waits for it, and a throw answers 500. Return `{ duplicate: true }` when
   * the delivery id was seen before and nothing ran.
   */
  onWebhook(event: WebhookEvent): unknown;
  /** Called once per request with what happened (counters, metrics). Must not throw. */
  onOutcome?: (outcome: WebhookOutcome) => void;
  /** Logger (module `webhooks` in agentd); lines never carry body content or signatures. */
  logger?: WebhookLogger;
  /** Clock in milliseconds. @default Date.now */
  now?: () => number;
}

const handlerOptionsSchema = z.object({
  basePath: z
    .string()
    .regex(/^\/[^?#]*$/, { message: 'Expected an absolute path such as /hooks' })
    .transform((path) => path.replace(/\/+$/, ''))
    .default('/hooks'),
  secret: z.union([z.string().min(1), z.array(z.string().min(1))]).optional(),
  hmac: hmacSettingsSchema.partial().default({}),
  maxBodyBytes: z.number().int().positive().default(DEFAULT_MAX_BODY_BYTES),
  mappings: webhookMappingListSchema.default([]),
  presets: z.array(z.string()).default([]),
  deliveryHeaderName: z
    .string()
    .min(1)
    .transform((name) => name.toLowerCase())
    .default(DEFAULT_DELIVERY_HEADER),
});

/** A framework-free webhook endpoint for node:http and for fetch-style servers. */
export interface WebhookHandler {
  /** Handles a node:http request completely (reads, answers, ends the response). */
  node(request: IncomingMessage, response: ServerResponse): Promise<void>;
  /** Handles a Web `Request` (Deno, Bun, undici, service workers) and returns the `Response`. */
  fetch(request: Request): Promise<Response>;
  /** Every mapping in match order: the configured ones, then the enabled presets. */
  readonly mappings: readonly WebhookMapping[];
}

/** What one request has revealed so far; the outcome record is built from it. */
interface RequestState {
  began: number;
  url: string;
  queryStart: number;
  endpoint: WebhookOutcome['endpoint'];
  path: string;
  bodyBytes: number;
  deliveryId: string | undefined;
  mappingId: string | undefined;
}

/** An answer with its serialised body, when that is known ahead (the 200 answers). */
interface PreparedResponse extends WebhookResponse {
  text?: string;
}

/** The 200 answer of one mapping, serialised once at construction. */
interface OkAnswer {
  body: Record<string, unknown>;
  text: string;
}

/** A mapping with its match path normalised once, so matching a request is plain comparisons. */
interface Matcher {
  mapping: WebhookPreset;
  all: boolean;
  path: string | undefined;
  source: string | undefined;
}

/** The template context of one request; `now` is a method so no closure is made per request. */
class RequestTemplateContext implements TemplateContext {
  constructor(
    readonly payload: unknown,
    readonly headers: Record<string, string>,
    readonly query: Record<string, string>,
    readonly path: string,
    private readonly receivedAt: number,
  ) {}

  now(): string {
    return new Date(this.receivedAt).toISOString();
  }
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'content-type': JSON_CONTENT_TYPE });
const NOT_ALLOWED_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...JSON_HEADERS,
  allow: 'POST',
});
const STRICT_OK: OkAnswer = okAnswer({ received: true });

function okAnswer(body: Record<string, unknown>): OkAnswer {
  return { body: Object.freeze(body), text: JSON.stringify(body) };
}

/**
 * Creates the handler: base-path routing, body cap, HMAC verification, JSON parsing,
 * strict schema or mapping match, template rendering, then `onWebhook`. Answers exactly
 * the contract's statuses: 200, 400, 401, 404, 422 (strict), 500; and 405 for a method
 * other than POST.
 * @throws {WebhookError} `INVALID_OPTIONS` naming the offending option.
 */
export function createWebhookHandler(options: WebhookHandlerOptions): WebhookHandler {
  const { onWebhook, onOutcome, logger = noopLogger, now = Date.now, ...rest } = options;
  if (typeof onWebhook !== 'function') {
    parseWith(z.object({ onWebhook: z.function() }), { onWebhook }, 'webhook handler options');
  }
  const settings = parseWith(handlerOptionsSchema, rest, 'webhook handler options');
  const presets = resolvePresets(settings.presets, logger);
  const mappings: WebhookPreset[] = [...settings.mappings, ...presets];
  const verifier = buildVerifier(settings, presets, now);
  const prefix = `${settings.basePath}/`;
  // Mapped 200 answers name the mapping; both forms are fixed per mapping, so they are serialised once.
  const mappedOk = new Map<WebhookMapping, OkAnswer>(
    mappings.map((mapping) => [mapping, okAnswer({ received: true, mapping: mapping.id })]),
  );
  // With the default logger and no onOutcome nobody reads the outcome, so it is not built.
  const reporting = onOutcome !== undefined || logger !== noopLogger;

  const match = mappingMatcher(mappings);

  const answer = (
    state: RequestState,
    status: number,
    body: Record<string, unknown>,
    outcome: WebhookOutcome['outcome'],
    reason: WebhookOutcome['reason'],
    headers: Readonly<Record<string, string>> = JSON_HEADERS,
    text?: string,
  ): PreparedResponse => {
    if (reporting) {
      reportOutcome(logger, onOutcome, {
        endpoint: state.endpoint,
        outcome,
        reason,
        status,
        mappingId: state.mappingId,
        deliveryId: state.deliveryId,
        path: state.path,
        bodyBytes: state.bodyBytes,
        durationMs: now() - state.began,
      });
    }
    return text === undefined ? { status, headers, body } : { status, headers, body, text };
  };

  /** Routing and method: an early answer, or the state to read the body with. */
  const begin = (method: string, url: string): RequestState | PreparedResponse => {
    const queryStart = url.indexOf('?');
    const state: RequestState = {
      began: now(),
      url,
      queryStart,
      endpoint: 'none',
      path: '',
      bodyBytes: 0,
      deliveryId: undefined,
      mappingId: undefined,
    };
    const rawPath = queryStart < 0 ? url : url.slice(0, queryStart);
    if (!rawPath.startsWith(prefix)) {
      return answer(state, 404, { error: 'Not found' }, 'rejected', 'not_found');
    }
    state.path = normalizeHookPath(safeDecode(rawPath.slice(prefix.length)));
    if (state.path === '') return answer(state, 404, { error: 'Not found' }, 'rejected', 'not_found');
    state.endpoint = state.path === STRICT_PATH ? 'strict' : 'mapped';
    if (method !== 'POST') {
      return answer(
        state,
        405,
        { error: 'Method not allowed' },
        'rejected',
        'method_not_allowed',
        NOT_ALLOWED_HEADERS,
      );
    }
    return state;
  };

  /** Everything after the body arrived; a promise only when `onWebhook` returned one. */
  const ingest = (
    state: RequestState,
    read: BodyResult,
    headerSource: HeaderSource,
  ): PreparedResponse | Promise<PreparedResponse> => {
    if (!read.ok) {
      if (read.reason === 'too_large') {
        return answer(
          state,
          400,
          { error: `Payload too large (maximum ${settings.maxBodyBytes} bytes)` },
          'rejected',
          'body_too_large',
        );
      }
      return answer(state, 400, { error: 'Request body could not be read' }, 'rejected', 'body_aborted');
    }
    const body = read.body;
    state.bodyBytes = body.length;
    // begin() settled the endpoint before any body is read.
    const endpoint = state.endpoint as 'strict' | 'mapped';

    if (endpoint === 'strict' && !verifier) {
      return answer(state, 401, { error: 'Webhook signing secret not configured' }, 'rejected', 'no_secret');
    }
    if (verifier) {
      const verdict = verifier.verify(body, headerSource);
      if (!verdict.ok) return answer(state, 401, { error: verdict.message }, 'rejected', verdict.reason);
    }

    let payload: unknown;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      return answer(state, 400, { error: 'Invalid JSON' }, 'rejected', 'invalid_json');
    }

    const headers = headerMap(headerSource);
    const query = queryMap(state.queryStart < 0 ? '' : state.url.slice(state.queryStart + 1));
    const source = payloadSource(payload);

    let mapping: WebhookPreset | undefined;
    if (endpoint === 'strict') {
      const issues = strictPayloadIssues(payload);
      if (issues) {
        return answer(state, 422, { error: 'Invalid payload', issues }, 'rejected', 'invalid_payload');
      }
      mapping = match(state.path, source) ?? STRICT_DEFAULT_MAPPING;
    } else {
      mapping = match(state.path, source);
      if (!mapping) return answer(state, 404, { error: 'No mapping matched' }, 'rejected', 'no_mapping');
    }
    state.mappingId = mapping.id;
    state.deliveryId = readDeliveryId(headerSource, mapping, settings.deliveryHeaderName);

    const receivedAt = state.began;
    const plan = planWebhookAction(
      mapping,
      new RequestTemplateContext(payload, headers, query, state.path, receivedAt),
    );
    const ok = endpoint === 'strict' ? STRICT_OK : (mappedOk.get(mapping) as OkAnswer);
    let result: unknown;
    try {
      result = onWebhook({
        endpoint,
        mapping,
        plan,
        payload,
        headers,
        query,
        path: state.path,
        deliveryId: state.deliveryId,
        bodyBytes: state.bodyBytes,
        receivedAt,
      });
      if (isThenable(result)) {
        // Only an asynchronous callback pays for a promise; a synchronous one answers at once.
        return Promise.resolve(result).then(
          (settled) => accepted(state, ok, settled),
          (error: unknown) => failed(state, error),
        );
      }
    } catch (error) {
      return failed(state, error);
    }
    return accepted(state, ok, result);
  };

  const accepted = (state: RequestState, ok: OkAnswer, result: unknown): PreparedResponse =>
    isDuplicate(result)
      ? answer(state, 200, ok.body, 'duplicate', 'duplicate', JSON_HEADERS, ok.text)
      : answer(state, 200, ok.body, 'accepted', 'ok', JSON_HEADERS, ok.text);

  const failed = (state: RequestState, error: unknown): PreparedResponse => {
    logger.error(
      {
        err: error,
        endpoint: state.endpoint,
        mapping: state.mappingId,
        hint: 'the webhook was not recorded; the sender may retry it',
        errorKind: 'internal',
      },
      'webhook callback threw',
    );
    return answer(state, 500, { error: 'Internal error' }, 'failed', 'handler_error');
  };

  // Runs from the body reader's end event: a throw here must reject node()'s promise, not escape.
  const onNodeBody = (exchange: NodeExchange, read: BodyResult): void => {
    try {
      const result = ingest(exchange.state, read, exchange.request.headers);
      if (isPrepared(result)) {
        writeNodeResponse(exchange.response, result);
        exchange.resolve();
        return;
      }
      result
        .then((prepared) => {
          writeNodeResponse(exchange.response, prepared);
          exchange.resolve();
        })
        .catch(exchange.reject);
    } catch (error) {
      exchange.reject(error);
    }
  };

  return {
    mappings,
    node(request, response) {
      let state: RequestState | PreparedResponse;
      try {
        state = begin(request.method ?? 'GET', request.url ?? '/');
        if (isPrepared(state)) {
          writeNodeResponse(response, state);
          return DONE;
        }
      } catch (error) {
        // The contract of node() is a promise: failures reject it rather than throw.
        return Promise.reject(error);
      }
      const pending = state;
      return new Promise<void>((resolve, reject) => {
        readNodeBodyInto(
          request,
          settings.maxBodyBytes,
          { state: pending, request, response, resolve, reject },
          onNodeBody,
        );
      });
    },
    async fetch(request) {
      const url = new URL(request.url);
      const state = begin(request.method, `${url.pathname}${url.search}`);
      let prepared: PreparedResponse;
      if (isPrepared(state)) {
        prepared = state;
      } else {
        const read = await readWebBody(request, settings.maxBodyBytes);
        prepared = await ingest(state, read, request.headers);
      }
      return new Response(prepared.text ?? JSON.stringify(prepared.body), {
        status: prepared.status,
        headers: { ...prepared.headers },
      });
    },
  };
}

/** One node:http request waiting for its body. */
interface NodeExchange {
  state: RequestState;
  request: IncomingMessage;
  response: ServerResponse;
  resolve: () => void;
  reject: (error: unknown) => void;
}

const DONE: Promise<void> = Promise.resolve();

function writeNodeResponse(response: ServerResponse, prepared: PreparedResponse): void {
  const text = prepared.text ?? JSON.stringify(prepared.body);
  const length = String(Buffer.byteLength(text));
  response.writeHead(
    prepared.status,
    prepared.headers === JSON_HEADERS
      ? { 'content-type': JSON_CONTENT_TYPE, 'content-length': length }
      : { ...prepared.headers, 'content-length': length },
  );
  response.end(text);
}

function isPrepared(
  value: RequestState | PreparedResponse | Promise<PreparedResponse>,
): value is PreparedResponse {
  return typeof (value as PreparedResponse).status === 'number';
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

const STRICT_KEYS = new Set(['event', 'source', 'data']);

/**
 * True when `payload` certainly passes {@link strictPayloadSchema}: an object with only
 * `event`, `source` and `data`, non-empty strings and an object. Anything else (a
 * `timestamp`, which needs the date check, or any doubt) goes to the schema, which
 * also produces the issues of a rejection; this only spares the common valid case.
 */
function isPlainStrictPayload(payload: unknown): boolean {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return false;
  if (Object.getPrototypeOf(payload) !== Object.prototype) return false;
  let count = 0;
  for (const key in payload) {
    if (!STRICT_KEYS.has(key) || !Object.hasOwn(payload, key)) return false;
    count++;
  }
  if (count !== 3) return false;
  const { event, source, data } = payload as Record<string, unknown>;
  return (
    typeof event === 'string' &&
    event.length > 0 &&
    typeof source === 'string' &&
    source.length > 0 &&
    data !== null &&
    typeof data === 'object' &&
    !Array.isArray(data) &&
    Object.getPrototypeOf(data) === Object.prototype
  );
}

/** Why a payload is not a strict event, in the public issue shape; undefined when it is one. */
function strictPayloadIssues(
  payload: unknown,
): Array<{ path: PropertyKey[]; code: string; message: string }> | undefined {
  if (isPlainStrictPayload(payload)) return undefined;
  const checked = strictPayloadSchema.safeParse(payload);
  return checked.success ? undefined : checked.error.issues.map(publicIssue);
}

function isDuplicate(result: unknown): boolean {
  return (result as WebhookEventResult)?.duplicate === true;
}

function readDeliveryId(headers: HeaderSource, mapping: WebhookPreset, fallback: string): string | undefined {
  const value =
    (mapping.deliveryHeaderName ? readHeader(headers, mapping.deliveryHeaderName) : undefined) ??
    readHeader(headers, fallback);
  const trimmed = value?.trim();
  // Ids beyond 256 characters are not ids; they would only bloat the idempotency table.
  return trimmed ? trimmed.slice(0, 256) : undefined;
}

function queryMap(search: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  if (search === '') return out;
  for (const [key, value] of new URLSearchParams(search)) {
    if (!Object.hasOwn(out, key)) out[key] = value;
  }
  return out;
}

function safeDecode(path: string): string {
  // Without a percent sign there is nothing to decode, and decodeURIComponent would return it unchanged.
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

function publicIssue(issue: z.core.$ZodIssue): { path: PropertyKey[]; code: string; message: string } {
  // Only where and what: echoing received values back could reflect body content into logs of proxies.
  return { path: issue.path, code: issue.code, message: issue.message };
}

function rejectionHint(reason: WebhookOutcome['reason']): { hint: string; errorKind: ErrorKind } {
  switch (reason) {
    case 'no_secret':
      return { hint: 'set webhooks.token to accept strict webhooks', errorKind: 'config' };
    case 'signature_missing':
    case 'algorithm_mismatch':
    case 'length_mismatch':
    case 'signature_mismatch':
      return {
        hint: 'the sender must sign the raw body with the configured webhook secret',
        errorKind: 'auth',
      };
    case 'timestamp_missing':
    case 'timestamp_malformed':
    case 'timestamp_stale':
    case 'timestamp_future':
      return {
        hint: 'the sender must send its current time in Unix seconds; check clocks',
        errorKind: 'auth',
      };
    case 'no_mapping':
    case 'not_found':
      return { hint: 'add a mapping for this path or enable its preset', errorKind: 'validation' };
    default:
      return { hint: 'the sender must fix the request', errorKind: 'validation' };
  }
}

/** Logs an outcome at its level and hands it to `onOutcome` (whose throw is logged, never passed on). */
function reportOutcome(
  logger: WebhookLogger,
  onOutcome: ((outcome: WebhookOutcome) => void) | undefined,
  outcome: WebhookOutcome,
): void {
  const fields = {
    endpoint: outcome.endpoint,
    outcome: outcome.outcome,
    reason: outcome.reason,
    status: outcome.status,
    mapping: outcome.mappingId,
    deliveryId: outcome.deliveryId,
    hookPath: outcome.path,
    bodyBytes: outcome.bodyBytes,
    durationMs: outcome.durationMs,
  };
  if (outcome.outcome === 'accepted' || outcome.outcome === 'duplicate') {
    logger.info(
      fields,
      outcome.outcome === 'duplicate' ? 'webhook duplicate acknowledged' : 'webhook accepted',
    );
  } else if (outcome.outcome === 'failed') {
    logger.error(
      { ...fields, hint: 'see the preceding error line of the webhook callback', errorKind: 'internal' },
      'webhook failed',
    );
  } else {
    logger.warn({ ...fields, ...rejectionHint(outcome.reason) }, 'webhook rejected');
  }
  if (onOutcome) {
    try {
      onOutcome(outcome);
    } catch (error) {
      logger.error(
        { err: error, hint: 'the onOutcome callback must not throw', errorKind: 'internal' },
        'webhook outcome callback threw',
      );
    }
  }
}

/** The first-match rule of {@link findMapping}, over paths normalised once. */
function mappingMatcher(
  mappings: readonly WebhookPreset[],
): (path: string, source: string | undefined) => WebhookPreset | undefined {
  const matchers: Matcher[] = mappings.map((mapping) => ({
    mapping,
    all: !mapping.match,
    path: mapping.match?.path === undefined ? undefined : normalizeHookPath(mapping.match.path),
    source: mapping.match?.source,
  }));
  return (path, source) => {
    for (const matcher of matchers) {
      if (matcher.all) return matcher.mapping;
      if (matcher.path !== undefined && matcher.path !== path) continue;
      if (matcher.source !== undefined && matcher.source !== source) continue;
      return matcher.mapping;
    }
    return undefined;
  };
}

/** The payload's `source` field, when it is a string. */
function payloadSource(payload: unknown): string | undefined {
  return payload !== null &&
    typeof payload === 'object' &&
    typeof (payload as { source?: unknown }).source === 'string'
    ? (payload as { source: string }).source
    : undefined;
}

/** The HMAC verifier of the configured secrets (and the presets' signature headers); none without a secret. */
function buildVerifier(
  settings: z.output<typeof handlerOptionsSchema>,
  presets: readonly WebhookPreset[],
  now: () => number,
): Verifier | undefined {
  const secrets = settings.secret === undefined ? [] : [settings.secret].flat();
  return secrets.length > 0
    ? createVerifier({
        ...settings.hmac,
        secret: secrets,
        extraHeaderNames: presets.flatMap((preset) =>
          preset.signatureHeaderName ? [preset.signatureHeaderName] : [],
        ),
        now,
      })
    : undefined;
}
