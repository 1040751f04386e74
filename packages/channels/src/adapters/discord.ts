import { DiscordAPIError, HTTPError, RateLimitError, REST } from '@discordjs/rest';
import { WebSocketManager, WebSocketShardEvents } from '@discordjs/ws';
import { discordActionSchema } from './action-schemas.js';
import type {
  ChannelAdapter,
  ChannelHealth,
  DeliveryAttempt,
  InboundMessage,
  InboundReaction,
  OutboundOperation,
  OutboundResult,
} from '../adapter.js';
import { platformError } from '../errors.js';
import { guardPlatformCalls, markDown, type PlatformFailure } from '../internal/platform-call.js';
import { scrubbedMessage, secretScrubber } from '../internal/redact.js';

/** Options of {@link createDiscordAdapter}. */
export interface DiscordAdapterOptions {
  botToken: string;
  /** The REST root without version (`https://discord.com/api` by default; tests point it at a fake). */
  apiBaseUrl?: string | undefined;
  /** Connect the Gateway for inbound messages (only when an agent takes them). @default false */
  inbound?: boolean | undefined;
  /** The Gateway URL; by default the one `GET /gateway/bot` names. */
  gatewayUrl?: string | undefined;
  now?: () => number;
}

/**
 * GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT: what reading chat messages needs; and
 * GUILD_MESSAGE_REACTIONS | DIRECT_MESSAGE_REACTIONS, for the reactions learning reads.
 */
const INBOUND_INTENTS = (1 << 9) | (1 << 12) | (1 << 15) | (1 << 10) | (1 << 13);

/** Discord's message nonce (at most 25 characters) derived from the delivery id. */
export function discordNonce(deliveryId: string): string {
  return deliveryId.replace(/-/g, '').slice(0, 25);
}

type Route = `/${string}`;

/** Discord's global limit on a bot's requests, per second, across all its clients. */
export const DISCORD_GLOBAL_PER_SECOND = 50;

/** The longest rate-limit wait the REST client sits out itself (a second and its 50 ms offset). */
const SHORT_RATE_LIMIT_MS = 1_100;

/**
 * The Discord adapter: the REST API through `@discordjs/rest` (at `apiBaseUrl`). Every message
 * is posted with the delivery's `nonce` and `enforce_nonce: true`, so Discord itself answers
 * the first message for a repeated nonce (within its few-minute window) instead of posting
 * again: reconciling a post cut off by a crash is posting it again.
 */
export function createDiscordAdapter(options: DiscordAdapterOptions): ChannelAdapter {
  const rest = new REST({
    version: '10',
    ...(options.apiBaseUrl ? { api: options.apiBaseUrl.replace(/\/+$/, '') } : {}),
    // The delivery queue owns retries and backoff.
    retries: 0,
    globalRequestsPerSecond: DISCORD_GLOBAL_PER_SECOND,
    // A limit that clears within about a second is waited out here: the client's own count of
    // Discord's global 50 requests per second (reset every second), or a 429 with a short
    // `retry_after` (Discord did not carry that request out). Handing those back to the queue
    // would let the chat's next message overtake the one waiting for its retry. Longer waits go
    // back to the queue as `rate_limit` with their wait.
    rejectOnRateLimit: (limit) => Math.max(limit.timeToReset, limit.retryAfter) > SHORT_RATE_LIMIT_MS,
  }).setToken(options.botToken);
  const scrub = secretScrubber([options.botToken]);
  const now = options.now ?? Date.now;
  const health: ChannelHealth = { state: 'configured' };
  let gateway: WebSocketManager | undefined;

  const guard = guardPlatformCalls({
    health,
    scrub,
    now,
    onOk: () => {
      health.state = 'configured';
    },
    classify: discordFailure,
  });
  const call = <T>(run: () => Promise<unknown>): Promise<T> => guard(run) as Promise<T>;
  const messages = (channelId: string): Route => `/channels/${encodeURIComponent(channelId)}/messages`;
  const message = (channelId: string, id: string): Route =>
    `${messages(channelId)}/${encodeURIComponent(id)}`;

  const deliver = async (operation: OutboundOperation, attempt: DeliveryAttempt): Promise<OutboundResult> => {
    const nonce = { nonce: discordNonce(attempt.deliveryId), enforce_nonce: true };
    switch (operation.op) {
      case 'send': {
        const reply = operation.replyTo ? { message_reference: { message_id: operation.replyTo } } : {};
        const posted = await call<{ id: string }>(() =>
          rest.post(messages(operation.channelId), { body: { content: operation.text, ...nonce, ...reply } }),
        );
        return { messageId: posted.id };
      }
      case 'edit':
        await call(() =>
          rest.patch(message(operation.channelId, operation.messageId), {
            body: { content: operation.text },
          }),
        );
        return { messageId: operation.messageId };
      case 'delete':
        await call(() => rest.delete(message(operation.channelId, operation.messageId)));
        return { messageId: operation.messageId };
      case 'react':
        await call(() =>
          rest.put(
            `${message(operation.channelId, operation.messageId)}/reactions/${encodeURIComponent(operation.emoji)}/@me`,
          ),
        );
        return { messageId: operation.messageId };
      case 'attach': {
        const filename = operation.filename ?? 'file';
        const posted = await call<{ id: string }>(() =>
          rest.post(messages(operation.channelId), {
            body: {
              ...(operation.caption ? { content: operation.caption } : {}),
              ...nonce,
              attachments: [{ id: 0, filename }],
            },
            files: [
              {
                name: filename,
                data: Buffer.from(operation.data, 'base64'),
                contentType: operation.mimeType,
              },
            ],
          }),
        );
        return { messageId: posted.id };
      }
    }
  };

  return {
    type: 'discord',
    actionSchema: discordActionSchema,
    // One Gateway session per bot: a second one would hand every message to both.
    exclusive: true,
    async start(onInbound, onReaction) {
      if (!options.inbound || gateway) return;
      gateway = connectGateway(rest, options, health, { onInbound, onReaction }, scrub);
      health.state = 'reconnecting';
      await gateway.connect().catch((err: unknown) => markDown(health, scrub, err));
    },
    async stop() {
      const running = gateway;
      gateway = undefined;
      await Promise.resolve(running?.destroy()).catch(() => undefined);
      health.state = 'stopped';
    },
    // The client counts only this process's requests against the global limit: with N
    // instances sending for one bot, each keeps to its share.
    shareRateLimit(instances) {
      rest.options.globalRequestsPerSecond = Math.max(1, Math.floor(DISCORD_GLOBAL_PER_SECOND / instances));
    },
    deliver,
    async reconcile(operation, attempt) {
      // Posting again with the same enforced nonce is answered with the message already posted.
      if (operation.op === 'send' || operation.op === 'attach') return deliver(operation, attempt);
      return undefined;
    },
    async fetch(channelId, limit) {
      const list = await call<
        Array<{ id: string; content: string; author?: { id: string }; timestamp?: string }>
      >(() => rest.get(messages(channelId), { query: new URLSearchParams({ limit: String(limit) }) }));
      return list.map((item) => ({
        messageId: item.id,
        text: item.content,
        from: item.author?.id,
        ts: item.timestamp ? Date.parse(item.timestamp) : undefined,
      }));
    },
    async action(params) {
      const input = discordActionSchema.parse(params);
      switch (input.action) {
        case 'threadCreate': {
          const route: Route = input.message_id
            ? `${message(input.channel_id, input.message_id)}/threads`
            : `/channels/${input.channel_id}/threads`;
          const thread = await call<{ id: string; name: string }>(() =>
            rest.post(route, { body: { name: input.name, ...(input.message_id ? {} : { type: 11 }) } }),
          );
          return { threadId: thread.id, name: thread.name };
        }
        case 'channelInfo':
          return { channel: await call(() => rest.get(`/channels/${input.channel_id}`)) };
        case 'pin':
          await call(() => rest.put(`/channels/${input.channel_id}/pins/${input.message_id}`));
          return { ok: true };
      }
    },
    health: () => ({ ...health }),
  };
}

/**
 * The Gateway connection (`@discordjs/ws`): HELLO, IDENTIFY with the message intents, READY,
 * then `MESSAGE_CREATE` from people becomes inbound. The library heartbeats, resumes and
 * reconnects with its own backoff; health follows its events.
 */
function connectGateway(
  rest: REST,
  options: DiscordAdapterOptions,
  health: ChannelHealth,
  handlers: {
    onInbound: (message: InboundMessage) => void | Promise<void>;
    onReaction?: ((reaction: InboundReaction) => void) | undefined;
  },
  scrub: (text: string) => string,
): WebSocketManager {
  const { onInbound, onReaction } = handlers;
  const manager = new WebSocketManager({
    token: options.botToken,
    intents: INBOUND_INTENTS,
    rest,
    shardCount: 1,
  });
  if (options.gatewayUrl) {
    const url = options.gatewayUrl;
    manager.fetchGatewayInformation = async () => ({
      url,
      shards: 1,
      session_start_limit: { total: 1000, remaining: 1000, reset_after: 0, max_concurrency: 1 },
    });
  }
  manager.on(WebSocketShardEvents.Ready, () => {
    health.state = 'connected';
  });
  manager.on(WebSocketShardEvents.Resumed, () => {
    health.state = 'connected';
  });
  manager.on(WebSocketShardEvents.Closed, () => {
    health.state = 'reconnecting';
  });
  manager.on(WebSocketShardEvents.Error, (error) => {
    health.lastError = scrubbedMessage(error, scrub);
  });
  manager.on(WebSocketShardEvents.Dispatch, (payload) => {
    if (payload.t === 'MESSAGE_REACTION_ADD') {
      const reaction = reactionOf(payload.d as unknown as Record<string, unknown>);
      if (reaction) onReaction?.(reaction);
      return;
    }
    if (payload.t !== 'MESSAGE_CREATE') return;
    const data = payload.d as unknown as {
      id: string;
      channel_id: string;
      content?: string;
      author?: { id: string; bot?: boolean };
      attachments?: Array<{ filename?: string; content_type?: string }>;
    };
    if (!data.author || data.author.bot) return;
    const attachments = (data.attachments ?? []).map((item) => ({
      kind: item.content_type?.startsWith('audio/') ? 'voice' : 'file',
      name: item.filename,
      mimeType: item.content_type,
    }));
    // The Gateway has no acknowledgement to hold back; a message not recorded is logged.
    void Promise.resolve(
      onInbound({
        channelType: 'discord',
        channelId: data.channel_id,
        userId: data.author.id,
        messageId: data.id,
        text: data.content ?? '',
        ...(attachments.length > 0 ? { attachments } : {}),
      }),
    ).catch(() => undefined);
  });
  return manager;
}

/** A REST failure as a `PLATFORM_ERROR`: 429 (with its wait), 5xx and the network are retryable. */
function discordFailure(error: unknown, message: string, scrub: (text: string) => string): PlatformFailure {
  if (error instanceof RateLimitError)
    return {
      error: platformError('discord', 'rate limited', {
        retryable: true,
        status: 429,
        retryAfterMs: error.retryAfter,
      }),
      down: false,
    };
  if (error instanceof DiscordAPIError || error instanceof HTTPError) {
    const retryable = error.status === 429 || error.status >= 500;
    return {
      error: platformError('discord', scrub(error.message), { retryable, status: error.status }),
      down: retryable,
    };
  }
  return { error: platformError('discord', message, { retryable: true }), down: true };
}

/** A person's `MESSAGE_REACTION_ADD` (a unicode emoji; custom emoji carry only a name and are skipped). */
function reactionOf(data: Record<string, unknown>): InboundReaction | undefined {
  const emoji = data.emoji as { id?: unknown; name?: unknown } | undefined;
  const member = data.member as { user?: { bot?: unknown } } | undefined;
  if (
    typeof data.user_id !== 'string' ||
    typeof data.channel_id !== 'string' ||
    typeof data.message_id !== 'string' ||
    typeof emoji?.name !== 'string' ||
    (emoji.id !== null && emoji.id !== undefined) ||
    member?.user?.bot === true
  )
    return undefined;
  return {
    channelType: 'discord',
    channelId: data.channel_id,
    userId: data.user_id,
    messageId: data.message_id,
    emoji: emoji.name,
  };
}
