import type { AgentdErrorOptions, FieldIssue, FieldIssuesData } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` an {@link OrchestrateError} can carry.
 *
 * - `INVALID_OPTIONS`: a factory or a call was given input that fails validation (`data.issues`).
 * - `CLOSED`: the service was used after `close()`.
 */
export type OrchestrateErrorCode = 'INVALID_OPTIONS' | 'CLOSED';

export type { FieldIssue };

/** Options of the {@link OrchestrateError} constructor. */
export type OrchestrateErrorOptions = AgentdErrorOptions<FieldIssuesData>;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class OrchestrateError extends AgentdError<OrchestrateErrorCode, FieldIssuesData> {
  override readonly name = 'OrchestrateError';
}

/** True when `error` is an {@link OrchestrateError}, optionally with the given code. */
export const isOrchestrateError = errorGuard(OrchestrateError);
