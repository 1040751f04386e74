import { createHmac, timingSafeEqual } from 'node:crypto';
import { ErrorCode, LogLevel, WebClient } from '@slack/web-api';
import { z } from 'zod';
import { slackActionSchema } from './action-schemas.js';
import type { ChannelAdapter, ChannelHealth, OutboundOperation, OutboundResult } from '../adapter.js';
import { platformError } from '../errors.js';
import { inboundSlots, type InboundSink } from '../internal/inbound.js';
import { guardPlatformCalls, type PlatformFailure } from '../internal/platform-call.js';
import { secretScrubber } from '../internal/redact.js';
import { header, jsonBody, text, type WebhookRequest, type WebhookResponse } from '../internal/webhook.js';
import { type ChannelsLogger, noopLogger } from '../logger.js';
import { connectSocketMode, type SocketModeHandle } from './slack-socket.js';

/** Options of {@link createSlackAdapter}. */
export interface SlackAdapterOptions {
  botToken: string;
  /** Checks the `X-Slack-Signature` of Events API callbacks; without it callbacks are refused. */
  signingSecret?: string | undefined;
  /** The Web API root (`https://slack.com/api/` by default; tests point it at a fake). */
  apiBaseUrl?: string | undefined;
  /** Take inbound messages over Socket Mode (needs `appToken`) instead of Events API callbacks. */
  socketMode?: boolean | undefined;
  /** The app-level token (`xapp-…`) Socket Mode connects with. */
  appToken?: string | undefined;
  /** Connect inbound at all (only when an agent takes the messages). @default false */
  inbound?: boolean | undefined;
  logger?: ChannelsLogger | undefined;
  now?: () => number;
}

/** The metadata event type every message the queue posts carries (its delivery id in the payload). */
export const SLACK_DELIVERY_EVENT = 'agentd_delivery';

/** Web API errors a retry may cure; any other `error` string is the platform's permanent refusal. */
const TRANSIENT = new Set([
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'ratelimited',
]);

/**
 * The Slack adapter: the Web API through `@slack/web-api` (at `apiBaseUrl`). Every posted
 * message carries `metadata {event_type: agentd_delivery, event_payload: {deliveryId}}`, so a
 * post cut off by a crash is reconciled by reading the channel's history for that metadata.
 */
export function createSlackAdapter(options: SlackAdapterOptions): ChannelAdapter {
  const root = options.apiBaseUrl ? `${options.apiBaseUrl.replace(/\/+$/, '')}/` : undefined;
  const client = new WebClient(options.botToken, {
    ...(root ? { slackApiUrl: root } : {}),
    // The delivery queue owns retries and backoff; the client reports a 429 at once.
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: 30_000,
    logLevel: LogLevel.ERROR,
  });
  const scrub = secretScrubber([options.botToken, options.signingSecret, options.appToken]);
  const inbound = inboundSlots();
  let socket: SocketModeHandle | undefined;
  const now = options.now ?? Date.now;
  const health: ChannelHealth = { state: 'configured' };

  const call = guardPlatformCalls({
    health,
    scrub,
    now,
    onOk: () => {
      // Socket Mode's connection state is the WebSocket's, not the last Web API call's.
      if (!socket) health.state = 'configured';
    },
    classify: slackFailure,
  });

  const deliver = async (operation: OutboundOperation, deliveryId: string): Promise<OutboundResult> => {
    const channelId = operation.channelId;
    switch (operation.op) {
      case 'send': {
        const posted = await call(() =>
          client.chat.postMessage({
            channel: channelId,
            text: operation.text,
            ...(operation.replyTo ? { thread_ts: operation.replyTo } : {}),
            metadata: { event_type: SLACK_DELIVERY_EVENT, event_payload: { deliveryId } },
          }),
        );
        return { messageId: String(posted.ts) };
      }
      case 'edit':
        await call(() =>
          client.chat.update({ channel: channelId, ts: operation.messageId, text: operation.text }),
        );
        return { messageId: operation.messageId };
      case 'delete':
        await call(() => client.chat.delete({ channel: channelId, ts: operation.messageId }));
        return { messageId: operation.messageId };
      case 'react':
        await call(() =>
          client.reactions.add({
            channel: channelId,
            timestamp: operation.messageId,
            name: operation.emoji.replace(/^:|:$/g, ''),
          }),
        );
        return { messageId: operation.messageId };
      case 'attach': {
        await call(() =>
          client.files.uploadV2({
            channel_id: channelId,
            file: Buffer.from(operation.data, 'base64'),
            filename: operation.filename ?? 'file',
            ...(operation.caption ? { initial_comment: operation.caption } : {}),
          }),
        );
        return { messageId: deliveryId };
      }
    }
  };

  return {
    type: 'slack',
    actionSchema: slackActionSchema,
    // A Socket Mode session is one per app here; Events API callbacks are taken on any instance.
    exclusive: options.socketMode === true,
    // Inbound arrives through the Events API (HTTP), which the daemon routes, or over Socket Mode.
    async start(handler, reactionHandler) {
      inbound.attach(handler, reactionHandler);
      if (!options.socketMode || !options.inbound || !options.appToken || socket) return;
      socket = connectSocketMode({
        appToken: options.appToken,
        apiRoot: root,
        health,
        scrub,
        logger: options.logger ?? noopLogger,
        now,
        onEventCallback: (payload) => routeEvent(payload, inbound),
      });
    },
    async stop() {
      inbound.detach();
      const running = socket;
      socket = undefined;
      await running?.stop();
      health.state = 'stopped';
    },
    webhook: async (request) => eventsApi(request, options.signingSecret, now, inbound),
    deliver: (operation, attempt) => deliver(operation, attempt.deliveryId),
    async reconcile(operation, attempt) {
      if (operation.op !== 'send') return undefined;
      const history = await call(() =>
        client.conversations.history({
          channel: operation.channelId,
          limit: 100,
          include_all_metadata: true,
        }),
      );
      const found = (history.messages ?? []).find(
        (message) =>
          message.metadata?.event_type === SLACK_DELIVERY_EVENT &&
          (message.metadata.event_payload as Record<string, unknown> | undefined)?.deliveryId ===
            attempt.deliveryId,
      );
      return found?.ts ? { messageId: found.ts } : null;
    },
    async fetch(channelId, limit) {
      const history = await call(() => client.conversations.history({ channel: channelId, limit }));
      return (history.messages ?? []).map((message) => ({
        messageId: String(message.ts),
        text: message.text ?? '',
        from: message.user,
        ts: message.ts ? Math.round(Number(message.ts) * 1000) : undefined,
      }));
    },
    async action(params) {
      const input = slackActionSchema.parse(params);
      switch (input.action) {
        case 'pin':
          await call(() => client.pins.add({ channel: input.channel_id, timestamp: input.message_id }));
          return { ok: true };
        case 'unpin':
          await call(() => client.pins.remove({ channel: input.channel_id, timestamp: input.message_id }));
          return { ok: true };
        case 'topic': {
          const result = await call(() =>
            client.conversations.setTopic({ channel: input.channel_id, topic: input.topic }),
          );
          return { ok: true, channel: result.channel };
        }
        case 'userInfo': {
          const result = await call(() => client.users.info({ user: input.user }));
          return { user: result.user };
        }
      }
    },
    health: () => ({ ...health }),
  };
}

/**
 * The Events API callback: the signature over `v0:<timestamp>:<body>` with the signing secret
 * (and a timestamp within five minutes, against replays), the `url_verification` handshake,
 * `message` events from people (bots and edits are ignored) and `reaction_added` on messages.
 */
function eventsApi(
  request: WebhookRequest,
  signingSecret: string | undefined,
  now: () => number,
  inbound: InboundSink,
): Promise<WebhookResponse> | WebhookResponse {
  if (request.method !== 'POST') return text(405, 'method not allowed');
  if (!signingSecret) return text(403, 'slack.signingSecret is not configured');
  const timestamp = header(request, 'x-slack-request-timestamp') ?? '';
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now() / 1000 - Number(timestamp)) > 300)
    return text(401, 'stale or missing timestamp');
  const expected = `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(request.body).digest('hex')}`;
  const given = Buffer.from(header(request, 'x-slack-signature') ?? '');
  if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected)))
    return text(401, 'signature mismatch');
  const payload = jsonBody(request.body);
  if (payload?.type === 'url_verification')
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ challenge: payload.challenge }),
    };
  // The 200 only once the message is recorded: on a failure Slack retries the callback.
  if (!payload) return text(200, 'ok');
  return routeEvent(payload, inbound).then(
    () => text(200, 'ok'),
    () => text(503, 'not recorded; retry'),
  );
}

/** Where a Slack event happened: the chat, the message and who acted. */
const where = { user: z.string(), channel: z.string(), ts: z.string() };

/**
 * The `event_callback` events an adapter hands on (Events API or Socket Mode): `message` and
 * `app_mention` from people (bots, edits and other subtypes carry a `subtype` or `bot_id` and
 * are ignored) and `reaction_added` on a message.
 */
const eventCallback = z.object({
  type: z.literal('event_callback'),
  event: z.discriminatedUnion('type', [
    z.object({
      type: z.enum(['message', 'app_mention']),
      subtype: z.undefined().optional(),
      bot_id: z.undefined().optional(),
      ...where,
      text: z.string().catch(''),
      thread_ts: z.string().optional().catch(undefined),
    }),
    z.object({
      type: z.literal('reaction_added'),
      user: where.user,
      reaction: z.string(),
      item: z.object({ type: z.literal('message'), channel: where.channel, ts: where.ts }),
    }),
  ]),
});

/** Hands the message or reaction an `event_callback` payload carries (if any) to `inbound`. */
async function routeEvent(payload: Record<string, unknown>, inbound: InboundSink): Promise<void> {
  const parsed = eventCallback.safeParse(payload);
  if (!parsed.success) return;
  const { event } = parsed.data;
  const { channel, ts } = event.type === 'reaction_added' ? event.item : event;
  const origin = { channelType: 'slack', channelId: channel, userId: event.user, messageId: ts };
  if (event.type === 'reaction_added') inbound.reaction({ ...origin, emoji: event.reaction });
  else
    await inbound.message({
      ...origin,
      text: event.text,
      ...(event.thread_ts !== undefined ? { threadId: event.thread_ts } : {}),
    });
}

/** A Web API failure as a `PLATFORM_ERROR`: rate limits, 5xx, transient errors and the network are retryable. */
function slackFailure(error: unknown, message: string, scrub: (text: string) => string): PlatformFailure {
  const coded = error as {
    code?: string;
    data?: { error?: string };
    retryAfter?: number;
    statusCode?: number;
  };
  switch (coded.code) {
    case ErrorCode.RateLimitedError:
      return {
        error: platformError('slack', 'rate limited', {
          retryable: true,
          status: 429,
          retryAfterMs: (coded.retryAfter ?? 1) * 1000,
        }),
        down: false,
      };
    case ErrorCode.PlatformError: {
      const reason = scrub(String(coded.data?.error ?? 'unknown_error'));
      return { error: platformError('slack', reason, { retryable: TRANSIENT.has(reason) }), down: false };
    }
    case ErrorCode.HTTPError: {
      const status = coded.statusCode ?? 0;
      return {
        error: platformError('slack', `HTTP ${status}`, {
          retryable: status === 429 || status >= 500,
          status,
        }),
        down: true,
      };
    }
    default:
      return { error: platformError('slack', message, { retryable: true }), down: true };
  }
}
