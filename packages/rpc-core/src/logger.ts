/**
 * The subset of a pino logger this package calls. Declared here so the package
 * does not depend on pino; a pino instance (or a child of one) satisfies it.
 */
export interface RpcLogger {
  debug(fields: Record<string, unknown>, message?: string): void;
  info(fields: Record<string, unknown>, message?: string): void;
  warn(fields: Record<string, unknown>, message?: string): void;
  error(fields: Record<string, unknown>, message?: string): void;
  /** When present, consulted before building debug lines on the hot path. */
  isLevelEnabled?(level: string): boolean;
  /** When present, used to give each handler a logger bound to its request's fields. */
  child?(bindings: Record<string, unknown>): RpcLogger;
}

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: RpcLogger = {
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
  isLevelEnabled: () => false,
};
