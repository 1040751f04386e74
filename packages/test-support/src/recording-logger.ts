import type { Logger } from '@agentd/contracts';

/** One call of a {@link recordingLogger}. */
export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string | undefined;
}

/** A logger that keeps every call in `entries`, in order, for assertions on what was logged. */
export function recordingLogger(): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at =
    (level: LogEntry['level']) =>
    (fields: Record<string, unknown>, message?: string): void => {
      entries.push({ level, fields, message });
    };
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
