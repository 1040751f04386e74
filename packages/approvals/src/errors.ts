import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` an {@link ApprovalsError} can carry.
 *
 * - `INVALID_OPTIONS`: `createApprovalService` was given options that fail validation.
 * - `REQUEST_NOT_FOUND`: no approval request has that id (`data.id`).
 */
export type ApprovalsErrorCode = 'INVALID_OPTIONS' | 'REQUEST_NOT_FOUND';

/** Options accepted by the {@link ApprovalsError} constructor. */
export type ApprovalsErrorOptions = AgentdErrorOptions<Record<string, unknown>>;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class ApprovalsError extends AgentdError<ApprovalsErrorCode, Record<string, unknown>> {
  override readonly name = 'ApprovalsError';
}

/** True when `error` is an {@link ApprovalsError}, optionally with the given code. */
export const isApprovalsError = errorGuard(ApprovalsError);
