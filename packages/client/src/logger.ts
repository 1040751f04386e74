/**
 * The logging surface the client uses: a subset of pino's `Logger`, so a pino
 * logger (or a child of one) can be passed as is.
 */
export interface ClientLogger {
  debug(fields: Record<string, unknown>, message?: string): void;
  info(fields: Record<string, unknown>, message?: string): void;
  warn(fields: Record<string, unknown>, message?: string): void;
  error(fields: Record<string, unknown>, message?: string): void;
}

const ignore = (): void => {};

/** A logger that drops everything; the default, because only applications decide where logs go. */
export const silentLogger: ClientLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
