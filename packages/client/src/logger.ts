import type { Logger } from '@agentd/contracts';

export type { ErrorKind, ProblemFields } from '@agentd/contracts';

/**
 * The logger this package takes: agentd's shared pino-compatible `Logger` from
 * `@agentd/contracts` (warn and error demand `hint` and `errorKind`). A pino logger
 * or an `@agentd/logging` module logger satisfies it.
 */
export type ClientLogger = Logger;

const ignore = (): void => {};

/** A logger that drops everything; the default, because only applications decide where logs go. */
export const silentLogger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
