import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link LearningError} can carry.
 *
 * - `INVALID_OPTIONS`: options fail validation.
 * - `DISABLED`: `learning.enabled` is false.
 */
export type LearningErrorCode = 'INVALID_OPTIONS' | 'DISABLED';

/** Options accepted by the {@link LearningError} constructor. */
export type LearningErrorOptions = AgentdErrorOptions<Record<string, unknown>>;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class LearningError extends AgentdError<LearningErrorCode, Record<string, unknown>> {
  override readonly name = 'LearningError';
}

/** True when `error` is a {@link LearningError}, optionally with the given code. */
export const isLearningError = errorGuard(LearningError);
