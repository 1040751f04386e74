/**
 * The subset of a pino logger this package calls, declared here so the package
 * does not depend on pino. Warn and error lines always carry `hint` and
 * `errorKind`, as agentd's log rules demand; a pino instance satisfies it.
 */
export interface WebhookLogger {
  debug(fields: Record<string, unknown>, message?: string): void;
  info(fields: Record<string, unknown>, message?: string): void;
  warn(fields: Record<string, unknown> & { hint: string; errorKind: string }, message?: string): void;
  error(fields: Record<string, unknown> & { hint: string; errorKind: string }, message?: string): void;
}

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: WebhookLogger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
