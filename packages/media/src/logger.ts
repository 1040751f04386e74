import type { Logger } from '@agentd/contracts';

/**
 * The logger this package takes: agentd's shared pino-compatible `Logger` (warn and error
 * demand `hint` and `errorKind`). A pino logger or an `@agentd/logging` module logger satisfies it.
 */
export type MediaLogger = Logger;

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
