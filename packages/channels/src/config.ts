import { z } from 'zod';

/** A credential: a literal or a `${secret:NAME}` reference the daemon resolves before use. */
const credential = z.string().min(1).max(4096);
/** A platform API root; tests point it at a local fake. */
const baseUrl = z.url({ protocol: /^https?$/ }).max(2048);
const agentId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, 'an agent id');
/**
 * Senders whose messages become agent turns, by platform user id; `*` admits everyone.
 * Empty (the default) admits nobody: a bot token alone must not open an agent to the world.
 */
const allowFrom = z.array(z.string().min(1).max(128)).max(10_000).default([]);

/**
 * Telegram's `secret_token` alphabet (1-256 of `A-Z a-z 0-9 _ -`), or a `${secret:NAME}`
 * reference the daemon resolves first.
 */
const telegramSecret = z
  .string()
  .max(256)
  .regex(
    /^(?:[A-Za-z0-9_-]{1,256}|\$\{secret:[^}]+\})$/,
    'Telegram secret_token characters (A-Z a-z 0-9 _ -)',
  );

/**
 * Whether a platform takes inbound messages: it names an agent, or `allowFrom` admits someone
 * (their turns then go to the default agent). A bot token alone only sends.
 */
export function takesInbound(section: {
  agentId?: string | undefined;
  allowFrom: readonly string[];
}): boolean {
  return section.agentId !== undefined || section.allowFrom.length > 0;
}

/** The agent a platform's inbound turns go to (`undefined`: it takes no inbound). */
export function inboundAgent(
  section: { agentId?: string | undefined; allowFrom: readonly string[] },
  defaultAgentId: string,
): string | undefined {
  return section.agentId ?? (section.allowFrom.length > 0 ? defaultAgentId : undefined);
}

/** `channels.telegram`. */
export const telegramSectionSchema = z
  .object({
    enabled: z.boolean().default(false),
    botToken: credential.optional(),
    apiBaseUrl: baseUrl.optional(),
    /** The agent inbound messages go to; the default agent when `allowFrom` admits anyone. */
    agentId: agentId.optional(),
    allowFrom,
    /** How inbound updates arrive: `getUpdates` long polling, or Telegram posting to `webhookUrl`. */
    mode: z.enum(['polling', 'webhook']).default('polling'),
    /** The public URL Telegram posts updates to (it routes to `/channels/telegram/webhook`). */
    webhookUrl: baseUrl.optional(),
    /**
     * The `X-Telegram-Bot-Api-Secret-Token` every update must carry; by default one derived
     * from the bot token, so a webhook is never open without a secret.
     */
    webhookSecret: telegramSecret.optional(),
  })
  .strict()
  .refine((section) => section.mode !== 'webhook' || !takesInbound(section) || section.webhookUrl, {
    message: 'webhook mode needs the public URL Telegram posts to',
    path: ['webhookUrl'],
  });

/** `channels.discord`. */
export const discordSectionSchema = z
  .object({
    enabled: z.boolean().default(false),
    botToken: credential.optional(),
    apiBaseUrl: baseUrl.optional(),
    gatewayUrl: z
      .url({ protocol: /^wss?$/ })
      .max(2048)
      .optional(),
    agentId: agentId.optional(),
    allowFrom,
  })
  .strict();

/** `channels.slack`. */
export const slackSectionSchema = z
  .object({
    enabled: z.boolean().default(false),
    botToken: credential.optional(),
    signingSecret: credential.optional(),
    apiBaseUrl: baseUrl.optional(),
    agentId: agentId.optional(),
    allowFrom,
    /** Inbound over Socket Mode (a WebSocket the daemon opens) instead of Events API callbacks. */
    socketMode: z.boolean().default(false),
    /** The app-level token (`xapp-…`) Socket Mode connects with. */
    appToken: credential.optional(),
  })
  .strict()
  .refine((section) => !section.socketMode || !takesInbound(section) || section.appToken, {
    message: 'socket mode needs the app-level token (xapp-…)',
    path: ['appToken'],
  });

/** `channels.whatsapp`. */
export const whatsappSectionSchema = z
  .object({
    enabled: z.boolean().default(false),
    accessToken: credential.optional(),
    phoneNumberId: z
      .string()
      .regex(/^\d{1,32}$/, 'digits')
      .optional(),
    appSecret: credential.optional(),
    verifyToken: credential.optional(),
    apiBaseUrl: baseUrl.optional(),
    agentId: agentId.optional(),
    allowFrom,
  })
  .strict();

/** `channels.delivery`: the queue's retry policy. */
export const deliverySectionSchema = z
  .object({
    maxAttempts: z.number().int().min(1).max(100).default(5),
    baseDelayMs: z.number().int().min(0).max(3_600_000).default(1000),
    maxDelayMs: z.number().int().min(0).max(86_400_000).default(300_000),
  })
  .strict();

/**
 * `schema` defaulting to what it makes of `{}`: a subsection the file leaves out reads as one
 * holding every default (and the JSON Schema shows that default).
 */
function filledIn<T extends z.ZodObject>(schema: T) {
  return schema.default(schema.parse({}) as z.util.NoUndefined<z.output<T>>);
}

/** The `channels` config section: one entry per platform plus the queue's policy. */
export const channelsSectionSchema = z
  .object({
    telegram: filledIn(telegramSectionSchema),
    discord: filledIn(discordSectionSchema),
    slack: filledIn(slackSectionSchema),
    whatsapp: filledIn(whatsappSectionSchema),
    delivery: filledIn(deliverySectionSchema),
  })
  .strict();
/** The parsed `channels` section. */
export type ChannelsSection = z.output<typeof channelsSectionSchema>;

/** The chat platforms a daemon can be configured for (beside the built-in `webchat`). */
export const PLATFORMS = ['telegram', 'discord', 'slack', 'whatsapp'] as const;
/** One configurable platform. */
export type Platform = (typeof PLATFORMS)[number];

/** The `notifications` section: where `notification.send` delivers. */
export const notificationsSectionSchema = z
  .object({
    /** A channel type (`telegram`, `webchat`, …); unset means notifications are not configured. */
    channel: z.enum(['telegram', 'discord', 'slack', 'whatsapp', 'webchat']).optional(),
    /** The chat (or webchat clientId) on that channel. */
    to: z.string().min(1).max(256).optional(),
  })
  .strict();
/** The parsed `notifications` section. */
export type NotificationsSection = z.output<typeof notificationsSectionSchema>;

/** Whether a platform section holds the credentials its adapter needs to send. */
export function hasCredentials(platform: Platform, section: ChannelsSection): boolean {
  switch (platform) {
    case 'telegram':
      return Boolean(section.telegram.botToken);
    case 'discord':
      return Boolean(section.discord.botToken);
    case 'slack':
      return Boolean(section.slack.botToken);
    case 'whatsapp':
      return Boolean(section.whatsapp.accessToken && section.whatsapp.phoneNumberId);
  }
}

/** Whether a platform is enabled and has its credentials: its adapter runs. */
export function isConfigured(platform: Platform, section: ChannelsSection): boolean {
  return section[platform].enabled && hasCredentials(platform, section);
}

/**
 * Resolves each platform's secret references on its own: a platform whose reference cannot be
 * resolved is switched off (`enabled: false`) and reported through `onFailure`, so one missing
 * secret neither stops the daemon nor takes the other platforms with it.
 */
export async function resolvePlatformSecrets(
  section: ChannelsSection,
  resolve: <T>(value: T) => Promise<T>,
  onFailure: (platform: Platform, error: unknown) => void,
): Promise<ChannelsSection> {
  const out = { ...section };
  for (const platform of PLATFORMS) {
    try {
      Object.assign(out, { [platform]: await resolve(section[platform]) });
    } catch (error) {
      onFailure(platform, error);
      Object.assign(out, { [platform]: { ...section[platform], enabled: false } });
    }
  }
  return out;
}
