import { createHmac, timingSafeEqual } from 'node:crypto';
import { parseRetryAfter } from '@agentd/async-control';
import { z } from 'zod';
import type {
  ChannelAdapter,
  ChannelHealth,
  InboundMessage,
  InboundReaction,
  OutboundOperation,
  OutboundResult,
} from '../adapter.js';
import { ChannelsError, platformError } from '../errors.js';
import { inboundSlots, type InboundSink } from '../internal/inbound.js';
import { scrubbedMessage, secretScrubber } from '../internal/redact.js';
import { header, jsonBody, text, type WebhookRequest, type WebhookResponse } from '../internal/webhook.js';

/** Options of {@link createWhatsAppAdapter}. */
export interface WhatsAppAdapterOptions {
  accessToken: string;
  phoneNumberId: string;
  /** Checks `X-Hub-Signature-256` of webhook events; without it events are refused. */
  appSecret?: string | undefined;
  /** Answers the `hub.challenge` subscription handshake when `hub.verify_token` matches. */
  verifyToken?: string | undefined;
  /** The Graph API root (`https://graph.facebook.com` by default; tests point it at a fake). */
  apiBaseUrl?: string | undefined;
  /** Graph API version. @default 'v21.0' */
  apiVersion?: string | undefined;
  now?: () => number;
}

const waId = z.string().regex(/^\d{5,20}$/, 'a phone number in international format, digits only');
const wamid = z.string().min(1).max(256);

/** `whatsapp.action` params: Cloud API operations beyond the common seven. */
export const whatsappActionSchema = z.discriminatedUnion('action', [
  z
    .object({
      action: z.literal('template'),
      to: waId,
      name: z.string().regex(/^[a-z0-9_]{1,512}$/, 'a template name'),
      language: z.string().regex(/^[a-z]{2,3}(_[A-Z]{2})?$/, 'a language code such as en_US'),
      components: z.array(z.record(z.string(), z.unknown())).max(20).optional(),
    })
    .strict(),
  z.object({ action: z.literal('markRead'), message_id: wamid }).strict(),
]);

/** The media kind a MIME type is sent as. */
function mediaKind(mimeType: string): 'image' | 'audio' | 'video' | 'document' {
  if (mimeType.startsWith('image/')) return 'image';
  if (mimeType.startsWith('audio/')) return 'audio';
  if (mimeType.startsWith('video/')) return 'video';
  return 'document';
}

/**
 * The WhatsApp adapter: the Cloud API over `fetch` (no maintained client library covers it), and
 * its webhook: the `hub.challenge` handshake and `X-Hub-Signature-256`-signed message events.
 * The Cloud API has no idempotency key and no history: sends are at-least-once across a crash,
 * and edit, delete and fetch are not available.
 */
export function createWhatsAppAdapter(options: WhatsAppAdapterOptions): ChannelAdapter {
  const root = `${(options.apiBaseUrl ?? 'https://graph.facebook.com').replace(/\/+$/, '')}/${options.apiVersion ?? 'v21.0'}`;
  const scrub = secretScrubber([options.accessToken, options.appSecret, options.verifyToken]);
  const now = options.now ?? Date.now;
  const health: ChannelHealth = { state: 'configured' };
  const inbound = inboundSlots();

  const graph = async <T>(path: string, body: Record<string, unknown> | FormData): Promise<T> => {
    let response: Response;
    try {
      response = await fetch(`${root}/${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${options.accessToken}`,
          ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }),
        },
        body: body instanceof FormData ? body : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (error) {
      health.state = 'error';
      health.lastError = scrubbedMessage(error, scrub);
      throw platformError('whatsapp', 'network request failed', { retryable: true, cause: error });
    }
    const answer = (await response.json().catch(() => ({}))) as {
      error?: { message?: string; code?: number };
    } & T;
    if (response.ok) {
      health.lastOkAt = now();
      health.state = 'configured';
      return answer;
    }
    const code = answer.error?.code;
    // 130429 / 80007 / 4 are the Cloud API's throughput and rate limits.
    const limited = response.status === 429 || code === 130429 || code === 80007 || code === 4;
    const retryable = limited || response.status >= 500;
    // Seconds or an HTTP date; absent or unreadable leaves the wait to the queue's backoff.
    const retryAfterMs = limited ? parseRetryAfter(response.headers.get('retry-after'), now()) : undefined;
    health.lastError = scrub(answer.error?.message ?? `HTTP ${response.status}`);
    if (retryable) health.state = 'error';
    throw platformError('whatsapp', health.lastError, {
      retryable,
      status: response.status,
      retryAfterMs,
    });
  };
  const message = async (to: string, body: Record<string, unknown>): Promise<OutboundResult> => {
    const sent = await graph<{ messages?: Array<{ id: string }> }>(`${options.phoneNumberId}/messages`, {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to,
      ...body,
    });
    const id = sent.messages?.[0]?.id;
    if (!id) throw platformError('whatsapp', 'the Cloud API answered no message id', { retryable: false });
    return { messageId: id };
  };

  const deliver = async (operation: OutboundOperation): Promise<OutboundResult> => {
    switch (operation.op) {
      case 'send':
        return message(operation.channelId, {
          type: 'text',
          text: { body: operation.text },
          ...(operation.replyTo ? { context: { message_id: operation.replyTo } } : {}),
        });
      case 'react':
        await message(operation.channelId, {
          type: 'reaction',
          reaction: { message_id: operation.messageId, emoji: operation.emoji },
        });
        return { messageId: operation.messageId };
      case 'attach': {
        const form = new FormData();
        form.set('messaging_product', 'whatsapp');
        form.set('type', operation.mimeType);
        form.set(
          'file',
          new Blob([Buffer.from(operation.data, 'base64')], { type: operation.mimeType }),
          operation.filename ?? 'file',
        );
        const media = await graph<{ id: string }>(`${options.phoneNumberId}/media`, form);
        const kind = mediaKind(operation.mimeType);
        return message(operation.channelId, {
          type: kind,
          [kind]: {
            id: media.id,
            ...(operation.caption && kind !== 'audio' ? { caption: operation.caption } : {}),
            ...(kind === 'document' && operation.filename ? { filename: operation.filename } : {}),
          },
        });
      }
      case 'edit':
      case 'delete':
        throw unsupported(`${operation.op} a message`);
    }
  };

  return {
    type: 'whatsapp',
    actionSchema: whatsappActionSchema,
    supports: (op) => op !== 'edit' && op !== 'delete',
    async start(handler, reactionHandler) {
      inbound.attach(handler, reactionHandler);
    },
    async stop() {
      inbound.detach();
      health.state = 'stopped';
    },
    deliver,
    async fetch() {
      throw unsupported('read chat history');
    },
    async action(params) {
      const input = whatsappActionSchema.parse(params);
      switch (input.action) {
        case 'template':
          return message(input.to, {
            type: 'template',
            template: {
              name: input.name,
              language: { code: input.language },
              ...(input.components ? { components: input.components } : {}),
            },
          });
        case 'markRead':
          await graph(`${options.phoneNumberId}/messages`, {
            messaging_product: 'whatsapp',
            status: 'read',
            message_id: input.message_id,
          });
          return { ok: true };
      }
    },
    webhook: (request) => webhook(request, options, inbound),
    health: () => ({ ...health }),
  };
}

function unsupported(what: string): ChannelsError {
  return new ChannelsError('UNSUPPORTED', `whatsapp: the Cloud API cannot ${what}`, {
    data: { channelType: 'whatsapp' },
  });
}

/** The subscription handshake (GET) and signed message events (POST). */
async function webhook(
  request: WebhookRequest,
  options: WhatsAppAdapterOptions,
  inbound: InboundSink,
): Promise<WebhookResponse> {
  if (request.method === 'GET') {
    const ok =
      request.query.get('hub.mode') === 'subscribe' &&
      options.verifyToken !== undefined &&
      safeEqual(request.query.get('hub.verify_token') ?? '', options.verifyToken);
    return ok ? text(200, request.query.get('hub.challenge') ?? '') : text(403, 'verification failed');
  }
  if (request.method !== 'POST') return text(405, 'method not allowed');
  const signature = header(request, 'x-hub-signature-256') ?? '';
  if (!options.appSecret) return text(403, 'whatsapp.appSecret is not configured');
  const expected = `sha256=${createHmac('sha256', options.appSecret).update(request.body).digest('hex')}`;
  if (!safeEqual(signature, expected)) return text(401, 'signature mismatch');
  const payload = jsonBody(request.body);
  for (const entry of asArray(payload?.entry)) {
    for (const change of asArray((entry as { changes?: unknown }).changes)) {
      const value = (change as { value?: { messages?: unknown } }).value;
      for (const item of asArray(value?.messages)) {
        const message = item as WhatsAppMessage;
        // A reaction arrives as a message of its own; it is feedback, never an agent turn.
        if (message.type === 'reaction') {
          const reaction = reactionOf(message);
          if (reaction) inbound.reaction(reaction);
          continue;
        }
        const parsed = toInbound(message);
        // The 200 only once every message is recorded: on a failure the Cloud API retries.
        if (parsed)
          try {
            await inbound.message(parsed);
          } catch {
            return text(503, 'not recorded; retry');
          }
      }
    }
  }
  return text(200, 'ok');
}

interface WhatsAppMessage {
  from?: string;
  id?: string;
  type?: string;
  text?: { body?: string };
  context?: { id?: string };
  image?: { mime_type?: string; caption?: string };
  audio?: { mime_type?: string; voice?: boolean };
  document?: { mime_type?: string; filename?: string; caption?: string };
  reaction?: { message_id?: string; emoji?: string };
}

/** A `reaction` message; an empty emoji is a reaction taken back and is skipped. */
function reactionOf(item: WhatsAppMessage): InboundReaction | undefined {
  const { from, reaction } = item;
  if (typeof from !== 'string' || typeof reaction?.message_id !== 'string') return undefined;
  if (typeof reaction.emoji !== 'string' || reaction.emoji === '') return undefined;
  return {
    channelType: 'whatsapp',
    channelId: from,
    userId: from,
    messageId: reaction.message_id,
    emoji: reaction.emoji,
  };
}

function toInbound(item: WhatsAppMessage): InboundMessage | undefined {
  if (typeof item.from !== 'string' || typeof item.id !== 'string') return undefined;
  const attachments: NonNullable<InboundMessage['attachments']> = [];
  if (item.image) attachments.push({ kind: 'image', mimeType: item.image.mime_type });
  if (item.audio)
    attachments.push({ kind: item.audio.voice ? 'voice' : 'audio', mimeType: item.audio.mime_type });
  if (item.document)
    attachments.push({ kind: 'document', name: item.document.filename, mimeType: item.document.mime_type });
  return {
    channelType: 'whatsapp',
    channelId: item.from,
    userId: item.from,
    messageId: item.id,
    text: item.text?.body ?? item.image?.caption ?? item.document?.caption ?? '',
    ...(attachments.length > 0 ? { attachments } : {}),
  };
}

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
