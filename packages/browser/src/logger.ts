/**
 * The subset of a pino logger this package calls. Declared here so the package does not
 * depend on pino; a pino instance (or a child of one) satisfies it. Warnings and errors
 * carry `hint` and `errorKind`, as agentd's log contract demands.
 */
export interface BrowserLogger {
  debug(fields: Record<string, unknown>, message?: string): void;
  info(fields: Record<string, unknown>, message?: string): void;
  warn(fields: Record<string, unknown>, message?: string): void;
  error(fields: Record<string, unknown>, message?: string): void;
}

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: BrowserLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
