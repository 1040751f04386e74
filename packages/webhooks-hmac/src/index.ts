export {
  type AgentActionPlan,
  planWebhookAction,
  type WakeActionPlan,
  type WebhookActionPlan,
} from './action.js';
export {
  DEFAULT_MAX_BODY_BYTES,
  isSecretReference,
  MIN_TOKEN_LENGTH,
  type StrictPayload,
  strictPayloadSchema,
  type WebhooksSection,
  webhooksSectionSchema,
  webhookTokenSchema,
} from './config.js';
export { QUEUE_TOPIC, type WebhookCoordinator, type WebhookOwnedRows } from './cluster.js';
export { isWebhookError, WebhookError, type WebhookErrorCode, type WebhookErrorOptions } from './errors.js';
export {
  createWebhookHandler,
  DEFAULT_DELIVERY_HEADER,
  STRICT_DEFAULT_MAPPING,
  STRICT_PATH,
  type WebhookEvent,
  type WebhookEventResult,
  type WebhookHandler,
  type WebhookHandlerOptions,
  type WebhookOutcome,
  type WebhookRejectReason,
  type WebhookResponse,
} from './handler.js';
export type { HeaderSource } from './internal/headers.js';
export type { ClaimWhere } from './internal/job-claims.js';
export { noopLogger, type WebhookLogger } from './logger.js';
export {
  findMapping,
  type MatchInput,
  normalizeHookPath,
  type WebhookMapping,
  type WebhookMappingInput,
  webhookMappingListSchema,
  webhookMappingSchema,
  webhookMatchSchema,
} from './mapping.js';
export { resolvePresets, WEBHOOK_PRESETS, type WebhookPreset } from './presets.js';
export {
  type AgentTurnRunner,
  createQueueDrainer,
  type HookResponseDeliverer,
  type QueueDrainer,
  type QueueDrainerOptions,
} from './queue-drainer.js';
export {
  createVerifier,
  HMAC_ALGORITHMS,
  HMAC_DEFAULTS,
  type HmacAlgorithm,
  type HmacSettings,
  hmacSettingsSchema,
  type SignatureHeadersOptions,
  type SignOptions,
  sign,
  signatureHeaders,
  type Verifier,
  type VerifierOptions,
  type VerifyFailureReason,
  type VerifyOptions,
  type VerifyResult,
  verify,
} from './signature.js';
export {
  type AcceptRequest,
  type AcceptResult,
  type AgentJob,
  createWebhookStore,
  IDEMPOTENCY_WINDOW_MS,
  type JobCompletion,
  type PendingWake,
  type QueueStats,
  type WebhookCounter,
  type WebhookDatabase,
  type WebhookDialect,
  type WebhookMigration,
  type WebhookMigrationSet,
  webhookMigrationSet,
  webhookMigrations,
  webhookPgMigrations,
  type WebhookQueryable,
  type WebhookSqlValue,
  type WebhookStore,
  type WebhookStoreOptions,
} from './store.js';
export {
  createWebhookService,
  type WebhookOutcomeContext,
  type WebhookRefusal,
  type WebhookSecretFields,
  type WebhookService,
  type WebhookServiceDatabase,
  type WebhookServiceOptions,
} from './service.js';
export { renderTemplate, resolveTemplateExpression, type TemplateContext } from './template.js';
export { deliverPendingWakes, type WakeTarget } from './wake.js';
