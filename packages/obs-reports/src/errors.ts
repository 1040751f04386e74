import type { AgentdErrorOptions, FieldIssue, FieldIssuesData } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` an {@link ObsReportsError} can carry.
 *
 * - `INVALID_OPTIONS`: a factory was given options that fail validation.
 * - `INVALID_PARAMS`: a query or report request is invalid (`data.issues` names the field).
 * - `CLOSED`: the service was used after `close()`.
 */
export type ObsReportsErrorCode = 'INVALID_OPTIONS' | 'INVALID_PARAMS' | 'CLOSED';

/** One field problem, in the shape rpc-core turns into `-32602` `data.issues`. */
export type { FieldIssue };

/** Options accepted by the {@link ObsReportsError} constructor. `data`: `issues` for validation codes. */
export type ObsReportsErrorOptions = AgentdErrorOptions<FieldIssuesData>;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class ObsReportsError extends AgentdError<ObsReportsErrorCode, FieldIssuesData> {
  override readonly name = 'ObsReportsError';
}

/** Whether a value is an {@link ObsReportsError}, optionally with a given code. */
export const isObsReportsError = errorGuard(ObsReportsError);
