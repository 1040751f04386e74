import type { Logger } from '@agentd/contracts';

/** The logger this package takes: agentd's pino-compatible `Logger` (warn/error need `hint` and `errorKind`). */
export type ChannelsLogger = Logger;

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
