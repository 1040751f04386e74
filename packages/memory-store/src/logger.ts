import type { ErrorKind, EventSink, Logger, ProblemFields } from '@agentd/contracts';

export type { EventSink } from '@agentd/contracts';

/** The `errorKind` values of the contract (`ErrorKind` from `@agentd/contracts`). */
export type MemoryErrorKind = ErrorKind;

/** Fields every warn and error line carries (`ProblemFields` from `@agentd/contracts`). */
export type MemoryProblemFields = ProblemFields;

/**
 * The logger this package takes: agentd's shared pino-compatible `Logger` from
 * `@agentd/contracts`; a pino instance (or a child) satisfies it.
 */
export type MemoryLogger = Logger;

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };

/**
 * An event sink that drops everything; the default when none is injected. The store
 * reports `memory:recalled`, `memory:reranked` and `memory:consolidated`.
 */
export const noopEventSink: EventSink = { emit: ignore };
