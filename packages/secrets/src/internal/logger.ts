import type { Logger } from '@agentd/contracts';

/** The default logger: drops every line. */
export const noopLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
