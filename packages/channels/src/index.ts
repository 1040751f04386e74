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
export {
  createDiscordAdapter,
  type DiscordAdapterOptions,
  discordActionSchema,
  discordNonce,
} from './adapters/discord.js';
export {
  createSlackAdapter,
  SLACK_DELIVERY_EVENT,
  type SlackAdapterOptions,
  slackActionSchema,
} from './adapters/slack.js';
export {
  createTelegramAdapter,
  type TelegramAdapterOptions,
  telegramActionSchema,
} from './adapters/telegram.js';
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
  type ChannelsSqlValue,
  channelsMigrations,
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
