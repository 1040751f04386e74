import type { AgentdErrorOptions } from '@agentd/contracts';

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
export class WebhookError extends Error {
  override readonly name = 'WebhookError';
  /** What went wrong, as a stable string. */
  readonly code: WebhookErrorCode;
  /** Structured detail, safe to log. */
  readonly data: Record<string, unknown> | undefined;

  constructor(code: WebhookErrorCode, message: string, options: WebhookErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.data = options.data;
  }
}

/** True when `error` is a {@link WebhookError}, optionally with the given code. */
export function isWebhookError(error: unknown, code?: WebhookErrorCode): error is WebhookError {
  return error instanceof WebhookError && (code === undefined || error.code === code);
}
