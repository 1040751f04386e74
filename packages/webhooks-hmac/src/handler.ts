import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { planWebhookAction, type WebhookActionPlan } from './action.js';
import { DEFAULT_MAX_BODY_BYTES, strictPayloadSchema } from './config.js';
import { type HeaderSource, headerMap, readHeader } from './internal/headers.js';
import { type BodyResult, readNodeBody, readWebBody } from './internal/read-body.js';
import { parseWith } from './internal/validate.js';
import { noopLogger, type WebhookLogger } from './logger.js';
import {
  findMapping,
  normalizeHookPath,
  type WebhookMapping,
  type WebhookMappingInput,
  webhookMappingListSchema,
  webhookMappingSchema,
} from './mapping.js';
import { resolvePresets, type WebhookPreset } from './presets.js';
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

interface RequestView {
  method: string;
  url: string;
  headers: HeaderSource;
  readBody(maxBytes: number): Promise<BodyResult>;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

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
  const secrets = settings.secret === undefined ? [] : [settings.secret].flat();
  const verifier: Verifier | undefined =
    secrets.length > 0
      ? createVerifier({
          ...settings.hmac,
          secret: secrets,
          extraHeaderNames: presets.flatMap((preset) =>
            preset.signatureHeaderName ? [preset.signatureHeaderName] : [],
          ),
          now,
        })
      : undefined;
  const prefix = `${settings.basePath}/`;

  const report = (outcome: WebhookOutcome): void => {
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
  };

  const process = async (request: RequestView): Promise<WebhookResponse> => {
    const began = now();
    const queryStart = request.url.indexOf('?');
    const rawPath = queryStart < 0 ? request.url : request.url.slice(0, queryStart);
    let endpoint: WebhookOutcome['endpoint'] = 'none';
    let path = '';
    let bodyBytes = 0;
    let deliveryId: string | undefined;
    let mappingId: string | undefined;
    const answer = (
      status: number,
      body: Record<string, unknown>,
      outcome: WebhookOutcome['outcome'],
      reason: WebhookOutcome['reason'],
      headers: Record<string, string> = {},
    ): WebhookResponse => {
      report({
        endpoint,
        outcome,
        reason,
        status,
        mappingId,
        deliveryId,
        path,
        bodyBytes,
        durationMs: now() - began,
      });
      return { status, headers: { ...JSON_HEADERS, ...headers }, body };
    };

    if (!rawPath.startsWith(prefix)) return answer(404, { error: 'Not found' }, 'rejected', 'not_found');
    path = normalizeHookPath(safeDecode(rawPath.slice(prefix.length)));
    if (path === '') return answer(404, { error: 'Not found' }, 'rejected', 'not_found');
    endpoint = path === STRICT_PATH ? 'strict' : 'mapped';
    if (request.method !== 'POST') {
      return answer(405, { error: 'Method not allowed' }, 'rejected', 'method_not_allowed', {
        allow: 'POST',
      });
    }

    const read = await request.readBody(settings.maxBodyBytes);
    if (!read.ok) {
      if (read.reason === 'too_large') {
        return answer(
          400,
          { error: `Payload too large (maximum ${settings.maxBodyBytes} bytes)` },
          'rejected',
          'body_too_large',
        );
      }
      return answer(400, { error: 'Request body could not be read' }, 'rejected', 'body_aborted');
    }
    const body = read.body;
    bodyBytes = body.length;

    if (endpoint === 'strict' && !verifier) {
      return answer(401, { error: 'Webhook signing secret not configured' }, 'rejected', 'no_secret');
    }
    if (verifier) {
      const verdict = verifier.verify(body, request.headers);
      if (!verdict.ok) return answer(401, { error: verdict.message }, 'rejected', verdict.reason);
    }

    let payload: unknown;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      return answer(400, { error: 'Invalid JSON' }, 'rejected', 'invalid_json');
    }

    const headers = headerMap(request.headers);
    const query = queryMap(queryStart < 0 ? '' : request.url.slice(queryStart + 1));
    const source =
      payload !== null &&
      typeof payload === 'object' &&
      typeof (payload as { source?: unknown }).source === 'string'
        ? (payload as { source: string }).source
        : undefined;

    let mapping: WebhookPreset | undefined;
    if (endpoint === 'strict') {
      const checked = strictPayloadSchema.safeParse(payload);
      if (!checked.success) {
        return answer(
          422,
          { error: 'Invalid payload', issues: checked.error.issues.map(publicIssue) },
          'rejected',
          'invalid_payload',
        );
      }
      mapping = findMapping(mappings, { path, source }) ?? STRICT_DEFAULT_MAPPING;
    } else {
      mapping = findMapping(mappings, { path, source });
      if (!mapping) return answer(404, { error: 'No mapping matched' }, 'rejected', 'no_mapping');
    }
    mappingId = mapping.id;
    deliveryId = readDeliveryId(request.headers, mapping, settings.deliveryHeaderName);

    const receivedAt = began;
    const plan = planWebhookAction(mapping, {
      payload,
      headers,
      query,
      path,
      now: () => new Date(receivedAt).toISOString(),
    });
    let result: unknown;
    try {
      result = await onWebhook({
        endpoint,
        mapping,
        plan,
        payload,
        headers,
        query,
        path,
        deliveryId,
        bodyBytes,
        receivedAt,
      });
    } catch (error) {
      logger.error(
        {
          err: error,
          endpoint,
          mapping: mappingId,
          hint: 'the webhook was not recorded; the sender may retry it',
          errorKind: 'internal',
        },
        'webhook callback threw',
      );
      return answer(500, { error: 'Internal error' }, 'failed', 'handler_error');
    }
    const okBody: Record<string, unknown> =
      endpoint === 'strict' ? { received: true } : { received: true, mapping: mapping.id };
    return isDuplicate(result)
      ? answer(200, okBody, 'duplicate', 'duplicate')
      : answer(200, okBody, 'accepted', 'ok');
  };

  return {
    mappings,
    async node(request, response) {
      const answer = await process({
        method: request.method ?? 'GET',
        url: request.url ?? '/',
        headers: request.headers,
        readBody: (maxBytes) => readNodeBody(request, maxBytes),
      });
      const text = JSON.stringify(answer.body);
      response.writeHead(answer.status, {
        ...answer.headers,
        'content-length': String(Buffer.byteLength(text)),
      });
      response.end(text);
    },
    async fetch(request) {
      const url = new URL(request.url);
      const answer = await process({
        method: request.method,
        url: `${url.pathname}${url.search}`,
        headers: request.headers,
        readBody: (maxBytes) => readWebBody(request, maxBytes),
      });
      return new Response(JSON.stringify(answer.body), { status: answer.status, headers: answer.headers });
    },
  };
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

function rejectionHint(reason: WebhookOutcome['reason']): { hint: string; errorKind: string } {
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
