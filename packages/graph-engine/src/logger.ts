/**
 * The subset of a pino logger this package calls. Declared here so the package does not
 * depend on pino; an agentd module logger satisfies it. warn and error lines carry `hint`
 * and `errorKind`, as every agentd problem line does.
 */
export interface GraphLogger {
  debug(fields: Record<string, unknown>, message?: string): void;
  info(fields: Record<string, unknown>, message?: string): void;
  warn(fields: Record<string, unknown> & { hint: string; errorKind: string }, message?: string): void;
  error(fields: Record<string, unknown> & { hint: string; errorKind: string }, message?: string): void;
}

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: GraphLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
