import type { AgentdErrorOptions, FieldIssuesData } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link CronWakegateError} can carry.
 *
 * - `INVALID_OPTIONS`: a factory was given options that fail validation.
 * - `INVALID_SCHEDULE`: a schedule cannot be used (bad expression, unknown time zone,
 *   `everyMs` below 1000, `at` in the past, an expression that never fires). `data.issues`
 *   names the field.
 * - `INVALID_JOB`: another job field cannot be used (`data.issues` names it).
 * - `JOB_EXISTS`: a job with that name already exists.
 * - `JOB_NOT_FOUND`: no job has that name.
 * - `CLOSED`: the service was used after `close()`.
 */
export type CronWakegateErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_SCHEDULE'
  | 'INVALID_JOB'
  | 'JOB_EXISTS'
  | 'JOB_NOT_FOUND'
  | 'CLOSED';

/**
 * Options accepted by the {@link CronWakegateError} constructor. `data`: structured detail: `issues`
 * for validation codes, `name` for job codes.
 */
export type CronWakegateErrorOptions = AgentdErrorOptions<FieldIssuesData>;

/** The one error class thrown by this package; switch on `code`, not on the message. */
export class CronWakegateError extends AgentdError<CronWakegateErrorCode, FieldIssuesData> {
  override readonly name = 'CronWakegateError';

  /** A validation error naming one field. */
  static field(code: 'INVALID_SCHEDULE' | 'INVALID_JOB', path: string[], message: string): CronWakegateError {
    return new CronWakegateError(code, `${path.join('.')}: ${message}`, {
      data: { issues: [{ path, message }] },
    });
  }
}

/** True when `error` is a {@link CronWakegateError}, optionally with the given code. */
export const isCronWakegateError = errorGuard(CronWakegateError);
