/**
 * How a warning or error is classified in the log: the contract's closed list
 * ("Log error classification"). Every warn and error line carries one.
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
 * The subset of a pino logger that agentd packages call. Packages accept it by
 * injection (with a no-op default of their own), so none depends on pino: a pino
 * instance, a child of one and an `@agentd/logging` module logger all satisfy it.
 * warn and error refuse lines without `hint` and `errorKind` at compile time.
 */
export interface Logger {
  /** Detail for diagnosing a module. */
  debug(fields: Record<string, unknown>, message?: string): void;
  /** Normal operation worth recording. */
  info(fields: Record<string, unknown>, message?: string): void;
  /** Something degraded but the operation went on; `hint` and `errorKind` are required. */
  warn(fields: ProblemFields, message?: string): void;
  /** An operation failed; `hint` and `errorKind` are required. */
  error(fields: ProblemFields, message?: string): void;
  /** When present, consulted before building costly lines on a hot path (pino's `isLevelEnabled`). */
  isLevelEnabled?(level: string): boolean;
  /** When present, gives a logger whose lines all carry `bindings` (pino's `child`). */
  child?(bindings: Record<string, unknown>): Logger;
}
