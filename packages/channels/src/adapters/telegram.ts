import { Api, GrammyError, HttpError, InputFile } from 'grammy';
import { telegramActionSchema } from './action-schemas.js';
import type { ReactionTypeEmoji } from 'grammy/types';
import type {
  ChannelAdapter,
  ChannelHealth,
  FetchedMessage,
  OutboundOperation,
  OutboundResult,
} from '../adapter.js';
import { ChannelsError, platformError } from '../errors.js';
import { guardPlatformCalls, type PlatformFailure } from '../internal/platform-call.js';
import { secretScrubber } from '../internal/redact.js';
import type { ChannelsLogger } from '../logger.js';
import { noopLogger } from '../logger.js';
import { createTelegramInbound, defaultWebhookSecret } from './telegram-inbound.js';

export { defaultWebhookSecret } from './telegram-inbound.js';

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

/**
 * The Telegram adapter: the Bot API through grammy's `Api` (at `apiBaseUrl`), and inbound
 * messages through grammy's long polling or, in webhook mode, `setWebhook` and the updates
 * Telegram posts to `/channels/telegram/webhook` (`telegram-inbound.ts`). Telegram has no idempotency key and bots cannot
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
  const inbound = createTelegramInbound({
    botToken: options.botToken,
    client,
    enabled: options.inbound === true,
    mode: options.mode ?? 'polling',
    webhookUrl: options.webhookUrl,
    webhookSecret: options.webhookSecret ?? defaultWebhookSecret(options.botToken),
    webhookRetryMs: options.webhookRetryMs ?? 30_000,
    health,
    scrub,
    logger,
    now,
  });

  const call = guardPlatformCalls({
    health,
    scrub,
    now,
    onOk: () => {
      if (health.state === 'error') health.state = inbound.running() ? 'connected' : 'configured';
    },
    classify: telegramFailure,
  });

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

  return {
    type: 'telegram',
    actionSchema: telegramActionSchema,
    // Two getUpdates callers of one bot make Telegram answer 409; webhook mode takes posts anywhere.
    exclusive: (options.mode ?? 'polling') === 'polling',
    start: (onInbound, onReaction) => inbound.start(onInbound, onReaction),
    stop: () => inbound.stop(),
    webhook: (request) => inbound.webhook(request),
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

/** A grammy failure as a `PLATFORM_ERROR`: 429 and 5xx and network errors are retryable. */
function telegramFailure(error: unknown, message: string, scrub: (text: string) => string): PlatformFailure {
  if (error instanceof GrammyError) {
    const retryAfter = error.parameters?.retry_after;
    const status = error.error_code;
    const retryable = status === 429 || status >= 500;
    return {
      error: platformError('telegram', scrub(error.description), {
        retryable,
        status,
        retryAfterMs: retryAfter === undefined ? undefined : retryAfter * 1000,
      }),
      down: retryable,
    };
  }
  const said = error instanceof HttpError ? 'network request failed' : message;
  return { error: platformError('telegram', said, { retryable: true }), down: true };
}
