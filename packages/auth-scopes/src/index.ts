export { AuthScopesError, type AuthScopesErrorCode, type AuthScopesErrorOptions } from './errors.js';
export type { AuthScopesLogger, ErrorKind, ProblemFields } from './logger.js';
export {
  hasScope,
  isLastAdminToken,
  type MethodScope,
  type Scope,
  scopeError,
  scopeSchema,
} from './scopes.js';
export { generateTokenSecret, hashToken, TOKEN_HASH_PREFIX, TOKEN_SECRET_PREFIX } from './token-secret.js';
export { gatewayTokensSchema, type TokenConfig, tokenConfigSchema, tokenIdSchema } from './token-config.js';
export { type BearerRequest, type ExtractBearerOptions, extractBearer } from './bearer.js';
export {
  type CreatedToken,
  type CreateTokenRequest,
  createTokenRequestSchema,
  createTokenStore,
  type Identity,
  type ReplaceResult,
  type RevokeListener,
  type TokenSource,
  type TokenStore,
  type TokenStoreOptions,
  type TokenSummary,
} from './token-store.js';
export { allowsSession, bindingIssues, bindingOf, type TenantBinding, tenantSchema } from './tenancy.js';
export {
  SLIDING_WINDOW_MAX_EVENTS,
  SlidingWindowLimiter,
  type SlidingWindowLimiterOptions,
} from './sliding-window-limiter.js';
export { TokenBucketLimiter, type TokenBucketLimiterOptions } from './token-bucket-limiter.js';
export {
  ADMIN_TOKEN_ENV,
  BOOTSTRAP_TOKEN_ID,
  type BootstrapResult,
  type EnsureBootstrapTokenOptions,
  ensureBootstrapToken,
} from './bootstrap.js';
export {
  AUTH_TOKENS_MIGRATION_PACKAGE,
  authTokensMigrations,
  openTokenTable,
  type TokenTable,
  type TokenTableChange,
} from './token-table.js';
