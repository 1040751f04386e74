export type {
  ChannelAdapter,
  ChannelHealth,
  DeliveryAttempt,
  FetchedMessage,
  InboundMessage,
  InboundReaction,
  OutboundOperation,
  OutboundResult,
  WebhookRequest,
  WebhookResponse,
} from './adapter.js';
export { discordActionSchema, slackActionSchema, telegramActionSchema } from './adapters/action-schemas.js';
// The SDK-backed adapters are type-only here: importing their modules loads grammy,
// `@discordjs/*` or `@slack/web-api`, so `defaultAdapterFactories` imports each one when its
// platform is first configured (an embedder replaces an adapter through `factories`).
export type { DiscordAdapterOptions } from './adapters/discord.js';
export type { SlackAdapterOptions } from './adapters/slack.js';
export type { TelegramAdapterOptions } from './adapters/telegram.js';
export {
  createWhatsAppAdapter,
  type WhatsAppAdapterOptions,
  whatsappActionSchema,
} from './adapters/whatsapp.js';
export {
  createWebchatAdapter,
  WEBCHAT_NOTIFICATION,
  type WebchatAdapterOptions,
} from './adapters/webchat.js';
export {
  type ChannelsSection,
  channelsSectionSchema,
  deliverySectionSchema,
  discordSectionSchema,
  hasCredentials,
  isConfigured,
  type NotificationsSection,
  notificationsSectionSchema,
  PLATFORMS,
  type Platform,
  resolvePlatformSecrets,
  slackSectionSchema,
  telegramSectionSchema,
  whatsappSectionSchema,
} from './config.js';
export {
  type AttemptOutcome,
  createDeliveryQueue,
  type DeliveryQueue,
  type DeliveryQueueOptions,
  type EnqueueRequest,
  type StageCounts,
} from './delivery-queue.js';
export {
  ChannelsError,
  type ChannelsErrorCode,
  type ChannelsErrorData,
  type ChannelsErrorOptions,
  isChannelsError,
  platformError,
} from './errors.js';
export { type ChannelsHttpHandler, createChannelsHttpHandler } from './http-handler.js';
export { inboundSessionKey, isAllowed } from './internal/inbound.js';
export {
  type ChannelsDatabase,
  type ChannelsMigration,
  type ChannelsSqlResult,
  type ChannelsSqlValue,
  type ChannelsStatement,
  channelsMigrationSet,
  channelsMigrations,
  channelsPgMigrations,
  DELIVERY_STAGES,
  type DeliveryEntry,
  type DeliveryStage,
} from './internal/queue-store.js';
export { type ChannelsLogger, noopLogger } from './logger.js';
export {
  type AdapterFactory,
  type ChannelListing,
  type ChannelsService,
  type ChannelsServiceOptions,
  createChannelsService,
  defaultAdapterFactories,
  type DeliveryAnswer,
} from './service.js';
export {
  type ChannelCredentials,
  type CredentialCheck,
  type CredentialCheckOptions,
  checkChannelCredentials,
} from './credential-check.js';
