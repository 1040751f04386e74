import {
  type ChannelsService,
  discordActionSchema,
  isChannelsError,
  type OutboundOperation,
  slackActionSchema,
  telegramActionSchema,
  whatsappActionSchema,
} from '@agentd/channels';
import { type ParamIssue, RpcError } from '@agentd/rpc-core';
import { z } from 'zod';
import { methodsOf } from './define.js';

/** `-32012`: the channel cannot take the call (platform not configured, operation it lacks). */
export const CHANNEL_UNAVAILABLE = -32012;
/** `-32013`: the platform refused a call made outside the queue (`fetch`, `<platform>.action`). */
export const PLATFORM_FAILED = -32013;

/** Maps the channels package's errors to the wire (docs/decisions.md). */
export function channelsRpcError(error: unknown): unknown {
  if (!isChannelsError(error)) return error;
  switch (error.code) {
    case 'INVALID_OPTIONS':
      return RpcError.invalidParams(error.message, (error.data?.issues ?? []) as ParamIssue[]);
    case 'UNKNOWN_CHANNEL':
      return RpcError.invalidParams(`Invalid params: channel_type: ${error.message}`, [
        { path: ['channel_type'], code: 'custom', message: error.message },
      ]);
    case 'UNCONFIGURED':
    case 'UNSUPPORTED':
      return new RpcError(CHANNEL_UNAVAILABLE, error.message, {
        data: { reason: error.code.toLowerCase(), channelType: error.data?.channelType },
      });
    case 'PLATFORM_ERROR':
      return new RpcError(PLATFORM_FAILED, error.message, {
        data: { channelType: error.data?.channelType, status: error.data?.status },
      });
    case 'NOT_FOUND':
      return RpcError.notFound('Delivery', error.message);
    default:
      return error;
  }
}

const channelType = z.enum(['telegram', 'discord', 'slack', 'whatsapp', 'webchat']);
/**
 * An id a platform is addressed by: printable text, no control characters and no lone surrogates
 * (which the database could not store as given, so the entry would no longer name its chat).
 */
const platformId = z
  .string()
  .min(1)
  .max(256)
  .refine((value) => !/[\p{Cc}\p{Cs}]/u.test(value), 'printable text without control characters');
const target = {
  channel_type: channelType,
  channel_id: platformId,
};
const messageId = platformId;
const text = z.string().min(1).max(40_000);
/**
 * Exactly-once across restarts: a caller (an autonomy run's step) that repeats a key gets the
 * first delivery's answer; `rootRunId` marks a run's send, never repeated when in doubt.
 */
const once = {
  idempotencyKey: z.string().min(1).max(256).optional(),
  rootRunId: z.string().min(1).max(128).optional(),
};

type Once = { idempotencyKey?: string | undefined; rootRunId?: string | undefined };
const onceOf = (params: Once) => ({ idempotencyKey: params.idempotencyKey, rootRunId: params.rootRunId });

/**
 * message.*, channels.*, the platform actions, notification.send and delivery.queue.status:
 * each one call into the channels service. Outbound messages go through the delivery queue
 * and answer `{messageId, deliveryId, status}` once settled (or `queued` while it retries).
 */
export function channelsMethods(deps: { channels: ChannelsService }) {
  const { channels } = deps;
  const message = methodsOf('message', channelsRpcError).adminMethod;
  const deliver = (type: string, operation: OutboundOperation, request: Once = {}) =>
    channels.deliver(type, operation, onceOf(request));
  return [
    message('send', {
      description: 'Send a text message to a chat through the delivery queue.',
      params: z.object({ ...target, text, ...once }).strict(),
      handler: (p) => deliver(p.channel_type, { op: 'send', channelId: p.channel_id, text: p.text }, p),
    }),
    message('reply', {
      description: 'Reply to a message (kept in its thread where the platform has threads).',
      params: z.object({ ...target, message_id: messageId, text, ...once }).strict(),
      handler: (p) =>
        deliver(
          p.channel_type,
          { op: 'send', channelId: p.channel_id, text: p.text, replyTo: p.message_id },
          p,
        ),
    }),
    message('edit', {
      description: 'Replace the text of a message the bot sent.',
      params: z.object({ ...target, message_id: messageId, text }).strict(),
      handler: (p) =>
        deliver(p.channel_type, {
          op: 'edit',
          channelId: p.channel_id,
          messageId: p.message_id,
          text: p.text,
        }),
    }),
    message('delete', {
      description: 'Delete a message.',
      params: z.object({ ...target, message_id: messageId }).strict(),
      handler: (p) =>
        deliver(p.channel_type, { op: 'delete', channelId: p.channel_id, messageId: p.message_id }),
    }),
    message('react', {
      description: 'Add a reaction (an emoji) to a message.',
      params: z
        .object({ ...target, message_id: messageId, emoji: z.string().min(1).max(64), ...once })
        .strict(),
      handler: (p) =>
        deliver(
          p.channel_type,
          { op: 'react', channelId: p.channel_id, messageId: p.message_id, emoji: p.emoji },
          p,
        ),
    }),
    message('fetch', {
      description: 'Recent messages of a chat, newest first, where the platform lets a bot read them.',
      params: z.object({ ...target, limit: z.number().int().min(1).max(100).optional() }).strict(),
      handler: async (p) => ({ messages: await channels.fetch(p.channel_type, p.channel_id, p.limit ?? 20) }),
    }),
    message('attach', {
      description: 'Send a file (base64 `data`) with an optional caption.',
      params: z
        .object({
          ...target,
          // Plain base64 of up to about 1 MB (the gateway's default request limit); the platform's
          // own limit judges the decoded file.
          data: z
            .string()
            .min(1)
            .max(1_400_000)
            .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'base64'),
          mimeType: z
            .string()
            .regex(/^[\w.+-]+\/[\w.+-]+$/, 'a MIME type')
            .max(128),
          filename: z
            .string()
            .min(1)
            .max(255)
            .refine(
              (name) => !/[/\\]/.test(name) && !name.includes(String.fromCharCode(0)),
              'a file name without a path',
            )
            .optional(),
          caption: z.string().min(1).max(4096).optional(),
        })
        .strict(),
      handler: (p) =>
        deliver(p.channel_type, {
          op: 'attach',
          channelId: p.channel_id,
          data: p.data,
          mimeType: p.mimeType,
          filename: p.filename,
          caption: p.caption,
        }),
    }),
    ...platformMethods(channels),
  ];
}

/** channels.*, `<platform>.action`, notification.send, delivery.queue.status. */
function platformMethods(channels: ChannelsService) {
  const channelsNs = methodsOf('channels', channelsRpcError).adminMethod;
  // `<platform>.action`: the platform's own schema of the operations it has beyond the common seven.
  const action = <TParams extends z.ZodType<{ action: string } & Record<string, unknown>>>(
    platform: 'telegram' | 'discord' | 'slack' | 'whatsapp',
    params: TParams,
    description: string,
  ) =>
    methodsOf(platform, channelsRpcError).adminMethod('action', {
      description,
      params,
      handler: (p) => channels.action(platform, p),
    });
  return [
    channelsNs('list', {
      description:
        'Every channel type with its status (`unconfigured`, `disabled`, `configured`, `connected`, …).',
      handler: () => ({ channels: channels.list() }),
    }),
    channelsNs('status', {
      description: 'Health, queue counts by stage and refused inbound senders, per channel type.',
      params: z.object({ channel_type: channelType.optional() }).strict(),
      handler: async (p) => ({ channels: await channels.status(p.channel_type) }),
    }),
    action(
      'telegram',
      telegramActionSchema,
      'Telegram operations beyond the common seven: pin, unpin, chatInfo, poll.',
    ),
    action(
      'discord',
      discordActionSchema,
      'Discord operations beyond the common seven: threadCreate, channelInfo, pin.',
    ),
    action(
      'slack',
      slackActionSchema,
      'Slack operations beyond the common seven: pin, unpin, topic, userInfo.',
    ),
    action(
      'whatsapp',
      whatsappActionSchema,
      'WhatsApp operations beyond the common seven: template, markRead.',
    ),
    methodsOf('notification', channelsRpcError).adminMethod('send', {
      description: 'Deliver a notification through notifications.channel to notifications.to.',
      params: z
        .object({
          message: z.string().min(1).max(4000),
          priority: z.enum(['low', 'normal', 'high']).optional(),
        })
        .strict(),
      handler: (p) => channels.notify(p.message, p.priority ?? 'normal'),
    }),
    methodsOf('delivery', channelsRpcError).adminMethod('queue.status', {
      description: 'Messages at each stage of the delivery queue, optionally of one channel type.',
      params: z.object({ channelType: channelType.optional() }).strict(),
      handler: (p) => channels.queueStatus(p.channelType),
    }),
  ];
}
