import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { type ApiClientOptions, Bot } from 'grammy';
import type { ChannelHealth, InboundMessage, InboundReaction } from '../adapter.js';
import { markDown } from '../internal/platform-call.js';
import { scrubbedMessage } from '../internal/redact.js';
import { header, jsonBody, text, type WebhookRequest, type WebhookResponse } from '../internal/webhook.js';
import type { ChannelsLogger } from '../logger.js';

/**
 * The webhook `secret_token` used when none is configured: an HMAC of the bot token, so it is
 * stable across restarts, unguessable without the token, and in Telegram's alphabet (hex).
 */
export function defaultWebhookSecret(botToken: string): string {
  return createHmac('sha256', botToken).update('agentd telegram webhook secret_token').digest('hex');
}

/** Compares two secrets in constant time (hashing first makes unequal lengths safe too). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Options of {@link createTelegramInbound}. */
export interface TelegramInboundOptions {
  botToken: string;
  client: ApiClientOptions;
  /** Whether an agent takes inbound messages at all; without, `start` connects nothing. */
  enabled: boolean;
  mode: 'polling' | 'webhook';
  webhookUrl?: string | undefined;
  /** The `secret_token` (already defaulted). */
  webhookSecret: string;
  /** Wait between failed `setWebhook` calls. */
  webhookRetryMs: number;
  health: ChannelHealth;
  scrub: (text: string) => string;
  logger: ChannelsLogger;
  now: () => number;
}

/** Telegram's inbound side: long polling, or a registered webhook and its route. */
export interface TelegramInbound {
  start(
    onInbound: (message: InboundMessage) => void | Promise<void>,
    onReaction?: (reaction: InboundReaction) => void,
  ): Promise<void>;
  stop(): Promise<void>;
  /** `POST /channels/telegram/webhook`; 404 unless webhook mode runs. */
  webhook(request: WebhookRequest): Promise<WebhookResponse>;
  /** Whether inbound runs (a bot exists). */
  running(): boolean;
}

/**
 * Inbound Telegram messages through grammy: `getUpdates` long polling (grammy retries failed
 * polls with its own backoff), or in webhook mode `getMe` + `setWebhook` with the secret (retried
 * until it succeeds or inbound stops) and the updates Telegram posts, each checked for the
 * `X-Telegram-Bot-Api-Secret-Token` in constant time before grammy handles it.
 */
export function createTelegramInbound(options: TelegramInboundOptions): TelegramInbound {
  const { health, scrub, logger } = options;
  let bot: Bot | undefined;
  let webhookReady = false;
  let retryTimer: NodeJS.Timeout | undefined;
  /** Messages being recorded: a stop waits for them before grammy confirms the last offset. */
  const recording = new Set<Promise<unknown>>();
  /** The connection to the Bot API failed: the health says so and the log says what to check. */
  const down = (err: unknown, hint: string, message: string): void =>
    logger.error({ err: markDown(health, scrub, err), errorKind: 'network', hint }, message);

  const startPolling = (running: Bot): void => {
    void running
      .start({
        allowed_updates: ALLOWED_UPDATES,
        onStart: () => {
          health.state = 'connected';
        },
      })
      .catch((err: unknown) =>
        down(err, 'check channels.telegram.botToken and apiBaseUrl', 'telegram polling stopped'),
      );
  };

  const registerWebhook = async (running: Bot): Promise<void> => {
    try {
      await running.init();
      await running.api.setWebhook(options.webhookUrl ?? '', {
        secret_token: options.webhookSecret,
        allowed_updates: ALLOWED_UPDATES,
      });
      if (bot !== running) return;
      webhookReady = true;
      health.state = 'connected';
      health.lastOkAt = options.now();
    } catch (err) {
      if (bot !== running) return;
      down(
        err,
        'check channels.telegram.webhookUrl, botToken and apiBaseUrl',
        'telegram setWebhook failed; retrying',
      );
      retryTimer = setTimeout(() => void registerWebhook(running), options.webhookRetryMs);
      retryTimer.unref();
    }
  };

  return {
    async start(onInbound, onReaction) {
      if (!options.enabled || bot) return;
      const running = new Bot(options.botToken, { client: options.client });
      bot = running;
      // grammy asks for the next updates (confirming these by the offset) only once this resolves:
      // the message is recorded first. A failure to record throws, so the webhook answers 503.
      running.on('message', async (ctx) => {
        const recorded = Promise.resolve(onInbound(toInbound(ctx.message)));
        recording.add(recorded);
        try {
          await recorded;
        } finally {
          recording.delete(recorded);
        }
      });
      running.on('message_reaction', (ctx) => {
        for (const reaction of addedReactions(ctx.messageReaction)) onReaction?.(reaction);
      });
      running.catch((err) =>
        logger.error(
          { err: scrubbedMessage(err.error, scrub), errorKind: 'network', hint: 'check channels.telegram' },
          'telegram update handling failed',
        ),
      );
      health.state = 'reconnecting';
      if (options.mode === 'webhook') void registerWebhook(running);
      else startPolling(running);
    },
    async stop() {
      const running = bot;
      bot = undefined;
      webhookReady = false;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = undefined;
      // grammy's stop confirms the last update it began; that one is recorded first.
      await Promise.allSettled([...recording]);
      // A webhook stays registered: Telegram keeps undelivered updates and retries them after a restart.
      if (running?.isRunning()) await running.stop().catch(() => undefined);
      health.state = 'stopped';
    },
    async webhook(request) {
      const running = bot;
      if (options.mode !== 'webhook' || !running || request.path !== '/webhook')
        return text(404, 'not found');
      if (request.method !== 'POST') return text(405, 'method not allowed');
      const given = header(request, 'x-telegram-bot-api-secret-token');
      if (given === undefined || !sameSecret(given, options.webhookSecret))
        return text(401, 'secret token mismatch');
      // Until setWebhook (and getMe) succeeded grammy cannot handle updates; Telegram retries a 503.
      if (!webhookReady) return text(503, 'webhook not registered yet');
      const update = jsonBody(request.body);
      if (!update || typeof update.update_id !== 'number') return text(400, 'not a Telegram update');
      try {
        await running.handleUpdate(update as unknown as Parameters<Bot['handleUpdate']>[0]);
      } catch (err) {
        // The handler only records the message (its turn runs after): a failure is the store's,
        // and Telegram delivers the update again after a 503.
        logger.error(
          { err: scrubbedMessage(err, scrub), errorKind: 'resource', hint: 'Telegram retries the update' },
          'telegram update not recorded',
        );
        return text(503, 'not recorded; retry');
      }
      return text(200, 'ok');
    },
    running: () => bot !== undefined,
  };
}

/**
 * The updates asked of Telegram. `message_reaction` is not among the Bot API's defaults, so it is
 * requested by name (for polling and for the webhook alike); Telegram sends it for chats where
 * the bot is an administrator and for private chats.
 */
const ALLOWED_UPDATES: ['message', 'message_reaction'] = ['message', 'message_reaction'];

/**
 * The emoji a person added in a `message_reaction` update (those in `new_reaction` that were
 * not in `old_reaction`); custom emoji and anonymous (chat-sent) reactions are skipped.
 */
export function addedReactions(update: {
  chat: { id: number };
  message_id: number;
  user?: { id: number } | undefined;
  old_reaction: ReadonlyArray<{ type: string; emoji?: string }>;
  new_reaction: ReadonlyArray<{ type: string; emoji?: string }>;
}): InboundReaction[] {
  if (!update.user) return [];
  const emojiOf = (list: ReadonlyArray<{ type: string; emoji?: string }>) =>
    list.flatMap((entry) => (entry.type === 'emoji' && typeof entry.emoji === 'string' ? [entry.emoji] : []));
  const before = new Set(emojiOf(update.old_reaction));
  const userId = String(update.user.id);
  return emojiOf(update.new_reaction)
    .filter((emoji) => !before.has(emoji))
    .map((emoji) => ({
      channelType: 'telegram',
      channelId: String(update.chat.id),
      userId,
      messageId: String(update.message_id),
      emoji,
    }));
}

/** A Bot API message as an {@link InboundMessage}. */
function toInbound(message: {
  message_id: number;
  chat: { id: number };
  from?: { id: number } | undefined;
  text?: string | undefined;
  caption?: string | undefined;
  document?: { file_name?: string | undefined; mime_type?: string | undefined } | undefined;
  voice?: { mime_type?: string | undefined } | undefined;
  photo?: unknown[] | undefined;
}): InboundMessage {
  const attachments: NonNullable<InboundMessage['attachments']> = [];
  if (message.document)
    attachments.push({
      kind: 'document',
      name: message.document.file_name,
      mimeType: message.document.mime_type,
    });
  if (message.voice) attachments.push({ kind: 'voice', mimeType: message.voice.mime_type });
  if (message.photo) attachments.push({ kind: 'photo' });
  return {
    channelType: 'telegram',
    channelId: String(message.chat.id),
    userId: String(message.from?.id ?? message.chat.id),
    messageId: String(message.message_id),
    text: message.text ?? message.caption ?? '',
    ...(attachments.length > 0 ? { attachments } : {}),
  };
}
