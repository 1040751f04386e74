import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { TerminalError } from './errors.js';
import { resolveCommand } from './internal/command.js';
import { DriveRegistry } from './internal/drive-registry.js';
import { keyBytes } from './internal/keys.js';
import { loadLibraries } from './internal/loader.js';
import { DriveSession, type DriveExit, type ScreenText } from './internal/session.js';
import { driveEnv, parseServiceOptions } from './internal/settings.js';
import type { TerminalSection, TerminalServiceOptions } from './options.js';

export type { DriveExit, ScreenText } from './internal/session.js';

export type { EvictionReason } from './internal/drive-registry.js';

/** What a drive call knows of the turn that made it. */
export interface DriveContext {
  /** The session of the agent turn, carried on the evidence events. */
  sessionKey?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** One open drive as `list` answers it. */
export interface DriveInfo {
  sessionId: string;
  command: string;
  pid: number;
  openedAt: number;
  interactions: number;
  exit?: DriveExit;
}

/** A screen answer: the text and how the program is doing. */
export interface DriveScreen extends ScreenText {
  sessionId: string;
  exit?: DriveExit;
}

/** Agents' terminal drives, with their limits. */
export interface TerminalService {
  /** Starts `command` in a pseudo-terminal in the agent's directory; `input` is typed right away. */
  open(
    agentId: string,
    params: { command: string; args?: string[]; input?: string; cols?: number; rows?: number },
    context?: DriveContext,
  ): Promise<{ sessionId: string; pid: number; evicted?: string }>;
  /** Types `text` (then `keys`, then Enter when `enter`); text counts as task text. */
  send(
    agentId: string,
    sessionId: string,
    params: { text?: string; keys?: string[]; enter?: boolean },
    context?: DriveContext,
  ): Promise<{ sessionId: string; bytes: number }>;
  /** The screen as text (`scrollback` lines above it too). */
  read(agentId: string, sessionId: string, params?: { scrollback?: number }): Promise<DriveScreen>;
  /** Waits until output is quiet for `quietMs` (or the program exits, or `timeoutMs`), then reads. */
  wait(
    agentId: string,
    sessionId: string,
    params?: { quietMs?: number; timeoutMs?: number },
    context?: DriveContext,
  ): Promise<DriveScreen & { quiet: boolean }>;
  /** Ends the drive and its whole process group. */
  close(agentId: string, sessionId: string): Promise<{ sessionId: string; closed: true; exit?: DriveExit }>;
  list(agentId: string): DriveInfo[];
  applyConfig(section: unknown): void;
  /** Ends every drive; later opens fail with `CLOSED`. */
  shutdown(): Promise<void>;
}

/** Creates the terminal service. Nothing is loaded or spawned until the first `open`. */
export function createTerminalService(options: TerminalServiceOptions): TerminalService {
  const parsed = parseServiceOptions(options);
  let settings: TerminalSection = parsed.section;
  const { cwd, agentEnv, logger, now, baseEnv } = parsed;
  const registry = new DriveRegistry(() => settings, parsed.events, logger, now);
  let closed = false;

  async function screenOf(drive: DriveSession, scrollback = 0): Promise<DriveScreen> {
    const screen = await drive.screen(Math.min(scrollback, settings.scrollback));
    return { sessionId: drive.id, ...screen, ...(drive.exit ? { exit: drive.exit } : {}) };
  }

  async function open(
    agentId: string,
    params: { command: string; args?: string[]; input?: string; cols?: number; rows?: number },
    context: DriveContext = {},
  ) {
    if (closed) throw new TerminalError('CLOSED', 'The terminal service is shut down');
    if (!settings.enabled)
      throw new TerminalError('CLOSED', 'Terminal drives are disabled (terminal.enabled is false)');
    const [libraries, directory] = await Promise.all([loadLibraries(), cwd(agentId)]);
    let displaced: string | undefined;
    const own = registry.ownedBy(agentId);
    if (own.length >= settings.maxSessionsPerAgent) {
      const oldest = own.reduce((a, b) => (b.lastInteractionAt < a.lastInteractionAt ? b : a));
      displaced = oldest.id;
      void registry.evict(oldest, 'max_sessions');
    }
    const env = driveEnv(baseEnv, agentEnv(agentId), settings.env);
    const executable = await resolveCommand(params.command, directory, env.PATH);
    let drive: DriveSession;
    try {
      drive = new DriveSession(libraries, {
        id: `term_${randomBytes(8).toString('hex')}`,
        agentId,
        sessionKey: context.sessionKey,
        command: executable,
        args: params.args ?? [],
        cwd: directory,
        env,
        cols: params.cols ?? settings.cols,
        rows: params.rows ?? settings.rows,
        scrollback: settings.scrollback,
        now,
      });
    } catch (error) {
      throw new TerminalError('SPAWN_FAILED', `Could not start ${basename(params.command)} in a terminal`, {
        cause: error,
      });
    }
    registry.add(drive);
    if (params.input) {
      drive.write(params.input);
      registry.taskSent(drive);
    }
    logger.info({ agentId, sessionId: drive.id }, 'terminal: drive opened');
    return { sessionId: drive.id, pid: drive.pid, ...(displaced ? { evicted: displaced } : {}) };
  }

  return {
    open,
    async send(agentId, sessionId, params) {
      const keys = (params.keys ?? []).map(keyBytes);
      const text = params.text ?? '';
      if (text === '' && keys.length === 0 && !params.enter) {
        throw new TerminalError('INVALID_PARAMS', 'Nothing to send: give text, keys or enter', {
          data: { field: 'text' },
        });
      }
      const drive = registry.touch(agentId, sessionId);
      const bytes = `${text}${keys.join('')}${params.enter ? '\r' : ''}`;
      drive.write(bytes);
      // Keys alone (Enter, C-c) are not a task; text that says something is.
      if (text.trim() !== '') registry.taskSent(drive);
      return { sessionId, bytes: Buffer.byteLength(bytes) };
    },
    read: async (agentId, sessionId, params = {}) =>
      screenOf(registry.touch(agentId, sessionId), params.scrollback),
    async wait(agentId, sessionId, params = {}, context = {}) {
      const drive = registry.touch(agentId, sessionId);
      const { quiet } = await drive.waitQuiet(
        params.quietMs ?? settings.quietMs,
        Math.min(params.timeoutMs ?? settings.maxWaitMs, settings.maxWaitMs),
        context.signal,
      );
      // A long wait is the agent paying attention, not idling.
      drive.lastInteractionAt = now();
      return { ...(await screenOf(drive)), quiet };
    },
    async close(agentId, sessionId) {
      const drive = registry.find(agentId, sessionId);
      await registry.end(drive);
      return { sessionId, closed: true as const, ...(drive.exit ? { exit: drive.exit } : {}) };
    },
    list: (agentId) =>
      registry.ownedBy(agentId).map((drive) => ({
        sessionId: drive.id,
        command: basename(drive.command),
        pid: drive.pid,
        openedAt: drive.openedAt,
        interactions: drive.interactions,
        ...(drive.exit ? { exit: drive.exit } : {}),
      })),
    applyConfig(section) {
      settings = parseServiceOptions({ ...(section as object), cwd, agentEnv }).section;
      registry.stopSweeper();
      registry.startSweeper();
    },
    async shutdown() {
      closed = true;
      await registry.shutdown();
    },
  };
}
