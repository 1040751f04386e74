import { firstIssueText } from '@agentd/errors';
import type { EventSink, Logger } from '@agentd/contracts';
import { TerminalError } from '../errors.js';
import { type TerminalSection, type TerminalServiceOptions, terminalSectionSchema } from '../options.js';

const ignore = (): void => {};

/** A logger that drops everything; the default when none is injected. */
export const noopLogger: Logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };

/** Splits and validates service options: the config section and the injected parts. */
export function parseServiceOptions(options: TerminalServiceOptions): {
  section: TerminalSection;
  cwd: (agentId: string) => Promise<string>;
  agentEnv: (agentId: string) => Record<string, string>;
  events: EventSink | undefined;
  logger: Logger;
  now: () => number;
  baseEnv: NodeJS.ProcessEnv;
} {
  const { cwd, agentEnv, events, logger, now, baseEnv, ...rest } = options ?? ({} as TerminalServiceOptions);
  if (typeof cwd !== 'function') {
    throw new TerminalError(
      'INVALID_OPTIONS',
      'createTerminalService: cwd must be a function of the agent id',
    );
  }
  const parsed = terminalSectionSchema.safeParse(rest);
  if (!parsed.success) {
    throw new TerminalError(
      'INVALID_OPTIONS',
      firstIssueText('createTerminalService: ', parsed.error.issues, 'options'),
      {
        data: { issues: parsed.error.issues },
      },
    );
  }
  return {
    section: parsed.data,
    cwd,
    agentEnv: agentEnv ?? (() => ({})),
    events,
    logger: logger ?? noopLogger,
    now: now ?? Date.now,
    baseEnv: baseEnv ?? process.env,
  };
}

/** The variables a drive inherits; everything else of the daemon's environment (tokens, keys) stays out. */
const INHERITED = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ'];

/** A drive's environment: the inherited few, the terminal type, the agent's, then the configured extras. */
export function driveEnv(
  base: NodeJS.ProcessEnv,
  agent: Record<string, string>,
  extra: Record<string, string>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  env.TERM = 'xterm-256color';
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  for (const [name, value] of Object.entries(agent)) env[name] = value;
  for (const [name, value] of Object.entries(extra)) env[name] = value;
  return env;
}
