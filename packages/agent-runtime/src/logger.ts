/**
 * The subset of a pino logger this package calls. Declared here so the package does not
 * depend on pino. Warn and error lines always carry `hint` and `errorKind`.
 */
export interface AgentRuntimeLogger {
  debug(fields: Record<string, unknown>, message?: string): void;
  info(fields: Record<string, unknown>, message?: string): void;
  warn(fields: Record<string, unknown> & { hint: string; errorKind: string }, message?: string): void;
  error(fields: Record<string, unknown> & { hint: string; errorKind: string }, message?: string): void;
}

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: AgentRuntimeLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
