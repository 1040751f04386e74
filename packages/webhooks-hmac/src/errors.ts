import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link WebhookError} can carry.
 *
 * - `INVALID_OPTIONS`: options given to a factory or to `sign`/`verify` failed validation.
 * - `INVALID_CONFIG`: a `webhooks` config section or a mapping list cannot be used as given.
 * - `STORE_CLOSED`: the durable store or the drainer was used after `close()`/`stop()`.
 */
export type WebhookErrorCode = 'INVALID_OPTIONS' | 'INVALID_CONFIG' | 'STORE_CLOSED';

/**
 * Options accepted by the {@link WebhookError} constructor. `data`: structured detail (for example zod
 * `issues`); never holds a secret or a request body.
 */
export type WebhookErrorOptions = AgentdErrorOptions;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class WebhookError extends AgentdError<WebhookErrorCode> {
  override readonly name = 'WebhookError';
}

/** True when `error` is a {@link WebhookError}, optionally with the given code. */
export const isWebhookError = errorGuard(WebhookError);
