import { z } from 'zod';

// The platforms' `<platform>.action` params live apart from their adapters so that the daemon can
// register the methods without loading the platform SDKs (grammy, @discordjs/*, @slack/web-api):
// an adapter module, and its SDK, is imported only when a platform is configured.

const telegramChat = z.union([z.string().min(1).max(128), z.number().int()]);
const telegramMessage = z.union([z.string().regex(/^\d{1,15}$/), z.number().int().positive()]);

/** `telegram.action` params: the Bot API operations beyond the common seven. */
export const telegramActionSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('pin'), channel_id: telegramChat, message_id: telegramMessage }).strict(),
  z
    .object({ action: z.literal('unpin'), channel_id: telegramChat, message_id: telegramMessage.optional() })
    .strict(),
  z.object({ action: z.literal('chatInfo'), channel_id: telegramChat }).strict(),
  z
    .object({
      action: z.literal('poll'),
      channel_id: telegramChat,
      question: z.string().min(1).max(300),
      options: z.array(z.string().min(1).max(100)).min(2).max(10),
    })
    .strict(),
]);

const snowflake = z.string().regex(/^\d{1,25}$/, 'a Discord id');

/** `discord.action` params: REST operations beyond the common seven. */
export const discordActionSchema = z.discriminatedUnion('action', [
  z
    .object({
      action: z.literal('threadCreate'),
      channel_id: snowflake,
      name: z.string().min(1).max(100),
      message_id: snowflake.optional(),
    })
    .strict(),
  z.object({ action: z.literal('channelInfo'), channel_id: snowflake }).strict(),
  z.object({ action: z.literal('pin'), channel_id: snowflake, message_id: snowflake }).strict(),
]);

const slackChannel = z.string().min(1).max(64);
const slackTs = z.string().regex(/^\d{1,12}\.\d{1,8}$/, 'a Slack message ts');

/** `slack.action` params: Web API operations beyond the common seven. */
export const slackActionSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('pin'), channel_id: slackChannel, message_id: slackTs }).strict(),
  z.object({ action: z.literal('unpin'), channel_id: slackChannel, message_id: slackTs }).strict(),
  z.object({ action: z.literal('topic'), channel_id: slackChannel, topic: z.string().max(250) }).strict(),
  z.object({ action: z.literal('userInfo'), user: z.string().min(1).max(64) }).strict(),
]);
