import type { Logger } from '@agentd/contracts';

export type { ErrorKind, ProblemFields } from '@agentd/contracts';

/** The logger this package takes: agentd's shared `Logger` (warn and error demand `hint` and `errorKind`). */
export type AutonomyLogger = Logger;

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
