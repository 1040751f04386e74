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
 * The subset of a pino logger this package calls. Declared here so the package
 * does not depend on pino; a pino instance (or a child of one) satisfies it.
 */
export interface RpcLogger {
  debug(fields: Record<string, unknown>, message?: string): void;
  info(fields: Record<string, unknown>, message?: string): void;
  /** Something degraded but the operation went on; `hint` and `errorKind` are required. */
  warn(fields: ProblemFields, message?: string): void;
  /** An operation failed; `hint` and `errorKind` are required. */
  error(fields: ProblemFields, message?: string): void;
  /** When present, consulted before building debug lines on the hot path. */
  isLevelEnabled?(level: string): boolean;
  /** When present, used to give each handler a logger bound to its request's fields. */
  child?(bindings: Record<string, unknown>): RpcLogger;
}

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: RpcLogger = {
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
  isLevelEnabled: () => false,
};
