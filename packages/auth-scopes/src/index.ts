export { AuthScopesError } from './errors.js';
export type { AuthScopesErrorCode, AuthScopesErrorOptions } from './errors.js';
export type { AuthScopesLogger, ErrorKind, ProblemFields } from './logger.js';
export { hasScope, isLastAdminToken, scopeError, scopeSchema } from './scopes.js';
export type { MethodScope, Scope } from './scopes.js';
export { generateTokenSecret, hashToken, TOKEN_HASH_PREFIX, TOKEN_SECRET_PREFIX } from './token-secret.js';
export { gatewayTokensSchema, tokenConfigSchema, tokenIdSchema } from './token-config.js';
export type { TokenConfig } from './token-config.js';
export { extractBearer } from './bearer.js';
export type { BearerRequest, ExtractBearerOptions } from './bearer.js';
export { createTokenRequestSchema, createTokenStore } from './token-store.js';
export { allowsSession, bindingIssues, bindingOf, type TenantBinding, tenantSchema } from './tenancy.js';
export type {
  CreatedToken,
  CreateTokenRequest,
  Identity,
  ReplaceResult,
  RevokeListener,
  TokenSource,
  TokenStore,
  TokenStoreOptions,
  TokenSummary,
} from './token-store.js';
export { SLIDING_WINDOW_MAX_EVENTS, SlidingWindowLimiter } from './sliding-window-limiter.js';
export type { SlidingWindowLimiterOptions } from './sliding-window-limiter.js';
export { TokenBucketLimiter } from './token-bucket-limiter.js';
export type { TokenBucketLimiterOptions } from './token-bucket-limiter.js';
export { ADMIN_TOKEN_ENV, BOOTSTRAP_TOKEN_ID, ensureBootstrapToken } from './bootstrap.js';
export type { BootstrapResult, EnsureBootstrapTokenOptions } from './bootstrap.js';
