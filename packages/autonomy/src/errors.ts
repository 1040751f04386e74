import type { AgentdErrorOptions, FieldIssue, FieldIssuesData } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` an {@link AutonomyError} can carry.
 *
 * - `INVALID_OPTIONS`: a factory or a call was given input that fails validation (`data.issues`).
 * - `RUN_NOT_FOUND`: no run has that id (or session key).
 * - `SESSION_NOT_FOUND`: the parent session of a spawn does not exist.
 * - `LIMIT_EXCEEDED`: a spawn would pass `maxDepth`, `maxChildrenPerParent` or
 *   `maxConcurrentRuns` (`data.limit` names it).
 * - `RATE_LIMITED`: a second steer of one target within 2 s.
 * - `NOT_RUNNING`: the run already ended (steering needs a running run).
 * - `LEASE_INVALID`: a lease secret is unknown, revoked or expired, or lacks the capability.
 * - `CLOSED`: the service was used after `close()`.
 */
export type AutonomyErrorCode =
  | 'INVALID_OPTIONS'
  | 'RUN_NOT_FOUND'
  | 'SESSION_NOT_FOUND'
  | 'LIMIT_EXCEEDED'
  | 'RATE_LIMITED'
  | 'NOT_RUNNING'
  | 'LEASE_INVALID'
  | 'CLOSED';

export type { FieldIssue };

/** Options of the {@link AutonomyError} constructor. */
export type AutonomyErrorOptions = AgentdErrorOptions<FieldIssuesData>;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class AutonomyError extends AgentdError<AutonomyErrorCode, FieldIssuesData> {
  override readonly name = 'AutonomyError';
}

/** True when `error` is an {@link AutonomyError}, optionally with the given code. */
export const isAutonomyError = errorGuard(AutonomyError);
