/**
 * How a warning or error is classified in the log. The contract's closed list;
 * declared here rather than imported so the package stays free of @agentd/logging.
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
 * Fields of a warn or error line. The contract demands an operator `hint` and an
 * `errorKind` on every such line, and the error itself under `err` (never `error`),
 * so the type refuses lines that lack them.
 */
export type ProblemFields = { hint: string; errorKind: ErrorKind; err?: unknown } & Record<
  string,
  unknown
> & {
    /** Refused: the contract puts the error under `err`. */
    error?: never;
  };

/**
 * The logging surface the client uses: a subset of pino's `Logger`, so a pino
 * logger (or a child of one) can be passed as is.
 */
export interface ClientLogger {
  debug(fields: Record<string, unknown>, message?: string): void;
  info(fields: Record<string, unknown>, message?: string): void;
  /** Something degraded but the operation went on; `hint` and `errorKind` are required. */
  warn(fields: ProblemFields, message?: string): void;
  /** An operation failed; `hint` and `errorKind` are required. */
  error(fields: ProblemFields, message?: string): void;
}

const ignore = (): void => {};

/** A logger that drops everything; the default, because only applications decide where logs go. */
export const silentLogger: ClientLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
