import { AgentdError } from '@agentd/errors';

/** Codes carried by {@link LoggingError}. */
export type LoggingErrorCode =
  | 'INVALID_OPTIONS'
  | 'INVALID_LEVEL'
  | 'INVALID_SIZE'
  | 'FILE_OPEN_FAILED'
  | 'FILE_WRITE_FAILED'
  | 'ROTATION_FAILED'
  | 'SWEEP_FAILED';

/**
 * The one error class of `@agentd/logging`. `code` says what went wrong, `cause`
 * keeps the underlying error (a zod issue list, an `fs` error) and `data` any
 * detail worth logging (the offending value, the file path).
 */
export class LoggingError extends AgentdError<LoggingErrorCode> {
  override name = 'LoggingError';
}
