/** The `errorKind` values of the contract, required with `hint` on every warn and error line. */
export type MemoryErrorKind =
  | 'config'
  | 'network'
  | 'auth'
  | 'validation'
  | 'timeout'
  | 'resource'
  | 'dependency'
  | 'internal'
  | 'platform';

/** Fields every warn and error line carries, as the contract's log classification demands. */
export type MemoryProblemFields = Record<string, unknown> & { hint: string; errorKind: MemoryErrorKind };

/**
 * The subset of a pino logger this package calls, declared here so the package
 * does not depend on pino; a pino instance (or a child) satisfies it.
 */
export interface MemoryLogger {
  debug(fields: Record<string, unknown>, message?: string): void;
  info(fields: Record<string, unknown>, message?: string): void;
  warn(fields: MemoryProblemFields, message?: string): void;
  error(fields: MemoryProblemFields, message?: string): void;
}

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: MemoryLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };

/**
 * Receives the contract's internal events (`memory:recalled`, `memory:reranked`,
 * `memory:consolidated`). Payloads hold counts, ids and closed enums, never memory content.
 */
export interface EventSink {
  emit(event: string, payload: Record<string, unknown>): void;
}

/** An event sink that drops everything; the default when none is injected. */
export const noopEventSink: EventSink = { emit: ignore };
