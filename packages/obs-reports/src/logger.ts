/**
 * How a warning or error is classified in the log: the contract's closed list,
 * declared here so the package stays free of @agentd/logging.
 */
export type ErrorKind =
  | 'config'
  | 'network'
  | 'auth'
  | 'validation'
  | 'timeout'
  | 'resource'
  | 'dependency'
  | 'internal'
  | 'platform';

/**
 * Fields of a warn or error line: the contract demands an operator `hint` and an
 * `errorKind` on every such line, and the error itself under `err`.
 */
export type ProblemFields = { hint: string; errorKind: ErrorKind; err?: unknown } & Record<
  string,
  unknown
> & {
    /** Refused: the contract puts the error under `err`. */
    error?: never;
  };

/** The subset of a pino logger this package calls; a pino logger or an @agentd/logging module logger fits. */
export interface ObsLogger {
  debug(fields: Record<string, unknown>, message?: string): void;
  info(fields: Record<string, unknown>, message?: string): void;
  /** Something degraded but the report or the write went on; `hint` and `errorKind` are required. */
  warn(fields: ProblemFields, message?: string): void;
  /** An operation failed; `hint` and `errorKind` are required. */
  error(fields: ProblemFields, message?: string): void;
}

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: ObsLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
