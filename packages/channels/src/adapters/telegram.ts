import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Api, Bot, GrammyError, HttpError, InputFile } from 'grammy';
import type { ReactionTypeEmoji } from 'grammy/types';
import { z } from 'zod';
import type {
  ChannelAdapter,
  ChannelHealth,
  FetchedMessage,
  InboundMessage,
  OutboundOperation,
  OutboundResult,
} from '../adapter.js';
import { ChannelsError, platformError } from '../errors.js';
import { scrubbedMessage, secretScrubber } from '../internal/redact.js';
import { header, jsonBody, text, type WebhookRequest, type WebhookResponse } from '../internal/webhook.js';
import type { ChannelsLogger } from '../logger.js';
import { noopLogger } from '../logger.js';

/** Options of {@link createTelegramAdapter}. */
export interface TelegramAdapterOptions {
  botToken: string;
  /** The Bot API root (`https://api.telegram.org` by default; tests point it at a fake). */
  apiBaseUrl?: string | undefined;
  /** Take inbound messages (only when an agent takes them). @default false */
  inbound?: boolean | undefined;
  /** How inbound updates arrive. @default 'polling' */
  mode?: 'polling' | 'webhook' | undefined;
  /** Webhook mode: the public URL given to `setWebhook` (routed to `/channels/telegram/webhook`). */
  webhookUrl?: string | undefined;
  /** Webhook mode: the `secret_token`; by default {@link defaultWebhookSecret} of the bot token. */
  webhookSecret?: string | undefined;
  /** Webhook mode: wait between failed `setWebhook` calls. @default 30000 */
  webhookRetryMs?: number | undefined;
  logger?: ChannelsLogger | undefined;
  now?: () => number;
}

const chatId = z.union([z.string().min(1).max(128), z.number().int()]);
const messageId = z.union([z.string().regex(/^\d{1,15}$/), z.number().int().positive()]);

/** `telegram.action` params: the Bot API operations beyond the common seven. */
export const telegramActionSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('pin'), channel_id: chatId, message_id: messageId }).strict(),
  z.object({ action: z.literal('unpin'), channel_id: chatId, message_id: messageId.optional() }).strict(),
  z.object({ action: z.literal('chatInfo'), channel_id: chatId }).strict(),
  z
    .object({
      action: z.literal('poll'),
      channel_id: chatId,
      question: z.string().min(1).max(300),
      options: z.array(z.string().min(1).max(100)).min(2).max(10),
    })
    .strict(),
]);

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

/**
 * The Telegram adapter: the Bot API through grammy's `Api` (at `apiBaseUrl`), and inbound
 * messages through grammy's long polling or, in webhook mode, `setWebhook` and the updates
 * Telegram posts to `/channels/telegram/webhook`. Telegram has no idempotency key and bots cannot
 * read chat history, so a send cut off by a crash cannot be reconciled (no `reconcile`).
 */
export function createTelegramAdapter(options: TelegramAdapterOptions): ChannelAdapter {
  // grammy's default request timeout is 500 s; a stuck call must not hold a queue lane that long
  // (60 s stays above the 30 s long-poll of getUpdates).
  const client = {
    timeoutSeconds: 60,
    ...(options.apiBaseUrl ? { apiRoot: options.apiBaseUrl.replace(/\/+$/, '') } : {}),
  };
  const api = new Api(options.botToken, client);
  const scrub = secretScrubber([
    options.botToken,
    options.webhookSecret ?? defaultWebhookSecret(options.botToken),
  ]);
  const logger = options.logger ?? noopLogger;
  const now = options.now ?? Date.now;
  const health: ChannelHealth = { state: 'configured' };
  let bot: Bot | undefined;

  const call = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      const result = await run();
      health.lastOkAt = now();
      if (health.state === 'error') health.state = bot ? 'connected' : 'configured';
      return result;
    } catch (error) {
      throw toChannelsError(error, scrub, health);
    }
  };

  const deliver = async (operation: OutboundOperation): Promise<OutboundResult> => {
    const chat = operation.channelId;
    switch (operation.op) {
      case 'send': {
        const reply = operation.replyTo
          ? { reply_parameters: { message_id: Number(operation.replyTo) } }
          : {};
        const sent = await call(() => api.sendMessage(chat, operation.text, reply));
        return { messageId: String(sent.message_id) };
      }
      case 'edit':
        await call(() => api.editMessageText(chat, Number(operation.messageId), operation.text));
        return { messageId: operation.messageId };
      case 'delete':
        await call(() => api.deleteMessage(chat, Number(operation.messageId)));
        return { messageId: operation.messageId };
      case 'react':
        await call(() =>
          api.setMessageReaction(chat, Number(operation.messageId), [
            // The Bot API accepts only its own emoji list; anything else is its 400.
            { type: 'emoji', emoji: operation.emoji as ReactionTypeEmoji['emoji'] },
          ]),
        );
        return { messageId: operation.messageId };
      case 'attach': {
        const file = new InputFile(Buffer.from(operation.data, 'base64'), operation.filename ?? 'file');
        const sent = await call(() =>
          api.sendDocument(chat, file, operation.caption ? { caption: operation.caption } : {}),
        );
        return { messageId: String(sent.message_id) };
      }
    }
  };

  const webhookMode = options.mode === 'webhook';
  const webhookSecret = options.webhookSecret ?? defaultWebhookSecret(options.botToken);
  let webhookReady = false;
  let retryTimer: NodeJS.Timeout | undefined;

  // grammy's polling retries failed getUpdates calls with its own backoff.
  const startPolling = (running: Bot): void => {
    void running
      .start({
        onStart: () => {
          health.state = 'connected';
        },
      })
      .catch((err: unknown) => {
        health.state = 'error';
        health.lastError = scrubbedMessage(err, scrub);
        logger.error(
          {
            err: health.lastError,
            errorKind: 'network',
            hint: 'check channels.telegram.botToken and apiBaseUrl',
          },
          'telegram polling stopped',
        );
      });
  };

  /**
   * Webhook mode: `getMe` (grammy needs the bot's identity to handle updates), then `setWebhook`
   * with the secret; a failure is retried until it succeeds or the adapter stops.
   */
  const registerWebhook = async (running: Bot): Promise<void> => {
    try {
      await running.init();
      await running.api.setWebhook(options.webhookUrl ?? '', {
        secret_token: webhookSecret,
        allowed_updates: ['message'],
      });
      if (bot !== running) return;
      webhookReady = true;
      health.state = 'connected';
      health.lastOkAt = now();
    } catch (err) {
      if (bot !== running) return;
      health.state = 'error';
      health.lastError = scrubbedMessage(err, scrub);
      logger.error(
        {
          err: health.lastError,
          errorKind: 'network',
          hint: 'check channels.telegram.webhookUrl, botToken and apiBaseUrl',
        },
        'telegram setWebhook failed; retrying',
      );
      retryTimer = setTimeout(() => void registerWebhook(running), options.webhookRetryMs ?? 30_000);
      retryTimer.unref();
    }
  };

  /** `POST /channels/telegram/webhook`: the secret header checked in constant time, then the update. */
  const telegramWebhook = async (request: WebhookRequest): Promise<WebhookResponse> => {
    const running = bot;
    if (!webhookMode || !running || request.path !== '/webhook') return text(404, 'not found');
    if (request.method !== 'POST') return text(405, 'method not allowed');
    const given = header(request, 'x-telegram-bot-api-secret-token');
    if (given === undefined || !sameSecret(given, webhookSecret)) return text(401, 'secret token mismatch');
    // Until setWebhook (and getMe) succeeded grammy cannot handle updates; Telegram retries a 503.
    if (!webhookReady) return text(503, 'webhook not registered yet');
    const update = jsonBody(request.body);
    if (!update || typeof update.update_id !== 'number') return text(400, 'not a Telegram update');
    try {
      await running.handleUpdate(update as unknown as Parameters<Bot['handleUpdate']>[0]);
    } catch (err) {
      // A failing handler must not make Telegram redeliver forever; the failure is logged.
      logger.error(
        { err: scrubbedMessage(err, scrub), errorKind: 'internal', hint: 'see the inbound handler error' },
        'telegram update handling failed',
      );
    }
    return text(200, 'ok');
  };

  return {
    type: 'telegram',
    actionSchema: telegramActionSchema,
    async start(onInbound) {
      if (!options.inbound || bot) return;
      const running = new Bot(options.botToken, { client });
      bot = running;
      running.on('message', (ctx) => {
        onInbound(toInbound(ctx.message));
      });
      running.catch((err) =>
        logger.error(
          { err: scrubbedMessage(err.error, scrub), errorKind: 'network', hint: 'check channels.telegram' },
          'telegram update handling failed',
        ),
      );
      health.state = 'reconnecting';
      if (webhookMode) void registerWebhook(running);
      else startPolling(running);
    },
    async stop() {
      const running = bot;
      bot = undefined;
      webhookReady = false;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = undefined;
      // A webhook stays registered: Telegram keeps undelivered updates and retries them after a restart.
      if (running?.isRunning()) await running.stop().catch(() => undefined);
      health.state = 'stopped';
    },
    webhook: (request) => telegramWebhook(request),
    deliver: (operation) => deliver(operation),
    async fetch(): Promise<FetchedMessage[]> {
      throw new ChannelsError('UNSUPPORTED', 'telegram: the Bot API cannot read chat history', {
        data: { channelType: 'telegram' },
      });
    },
    async action(params) {
      const input = telegramActionSchema.parse(params);
      switch (input.action) {
        case 'pin':
          return { ok: await call(() => api.pinChatMessage(input.channel_id, Number(input.message_id))) };
        case 'unpin':
          return {
            ok: await call(() =>
              api.unpinChatMessage(
                input.channel_id,
                input.message_id === undefined ? undefined : Number(input.message_id),
              ),
            ),
          };
        case 'chatInfo':
          return { chat: await call(() => api.getChat(input.channel_id)) };
        case 'poll': {
          const sent = await call(() => api.sendPoll(input.channel_id, input.question, input.options));
          return { messageId: String(sent.message_id) };
        }
      }
    },
    health: () => ({ ...health }),
  };
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

/** A grammy failure as a `PLATFORM_ERROR`: 429 and 5xx and network errors are retryable. */
function toChannelsError(
  error: unknown,
  scrub: (text: string) => string,
  health: ChannelHealth,
): ChannelsError {
  health.lastError = scrubbedMessage(error, scrub);
  if (error instanceof GrammyError) {
    const retryAfter = error.parameters?.retry_after;
    const status = error.error_code;
    const retryable = status === 429 || status >= 500;
    if (retryable) health.state = 'error';
    return platformError('telegram', scrub(error.description), {
      retryable,
      status,
      retryAfterMs: retryAfter === undefined ? undefined : retryAfter * 1000,
    });
  }
  health.state = 'error';
  if (error instanceof HttpError)
    return platformError('telegram', 'network request failed', { retryable: true });
  return platformError('telegram', scrubbedMessage(error, scrub), { retryable: true });
}
