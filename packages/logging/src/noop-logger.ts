import type { AgentdLogger } from './fields.js';

const ignore = (): void => {};

/**
 * A logger that writes nothing, for package defaults when no logger is injected.
 * Satisfies {@link AgentdLogger} and the minimal `Logger` shape; `child()` returns itself.
 */
export const noopLogger: AgentdLogger = Object.freeze({
  fatal: ignore,
  error: ignore,
  warn: ignore,
  audit: ignore,
  info: ignore,
  debug: ignore,
  trace: ignore,
  child: (): AgentdLogger => noopLogger,
  isLevelEnabled: (): boolean => false,
  level: 'silent',
});
