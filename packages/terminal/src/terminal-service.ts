import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import type { EventSink, Logger } from '@agentd/contracts';
import { TerminalError } from './errors.js';
import { keyBytes } from './internal/keys.js';
import { loadLibraries } from './internal/loader.js';
import { DriveSession, type DriveExit, type ScreenText } from './internal/session.js';
import { driveEnv, parseServiceOptions } from './internal/settings.js';
import type { TerminalSection, TerminalServiceOptions } from './options.js';

export type { DriveExit, ScreenText } from './internal/session.js';

/** Why a drive was evicted: the contract's four reasons. */
export type EvictionReason = 'idle' | 'wall_clock' | 'max_sessions' | 'max_interactions';

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

/** Evicted ids remembered, so a call on one says why it is gone. */
const REMEMBERED_EVICTIONS = 500;

/** Creates the terminal service. Nothing is loaded or spawned until the first `open`. */
export function createTerminalService(options: TerminalServiceOptions): TerminalService {
  const parsed = parseServiceOptions(options);
  let settings: TerminalSection = parsed.section;
  const { cwd, events, logger, now, baseEnv } = parsed;
  const drives = new Map<string, DriveSession>();
  const evicted = new Map<string, EvictionReason>();
  const endings = new Set<Promise<void>>();
  let sweeper: NodeJS.Timeout | undefined;
  let closed = false;

  /** Emits `terminal.drive_promoted` once, as soon as whether task text was sent is known. */
  function promote(drive: DriveSession): void {
    if (drive.promoted) return;
    drive.promoted = true;
    events?.emit('terminal.drive_promoted', {
      agentId: drive.agentId,
      ...(drive.sessionKey ? { sessionKey: drive.sessionKey } : {}),
      sessionId: drive.id,
      taskSent: drive.taskSent,
    });
  }

  /** Removes a drive and kills its process group in the background (tracked for shutdown). */
  function end(drive: DriveSession): Promise<void> {
    drives.delete(drive.id);
    if (!drive.taskSent) promote(drive);
    const ending = drive.kill(settings.killGraceMs).catch((error: unknown) => {
      logger.warn(
        { errorKind: 'resource', hint: 'look for processes the drive left behind', err: error },
        'terminal: ending a drive failed',
      );
    });
    endings.add(ending);
    void ending.finally(() => endings.delete(ending));
    if (drives.size === 0) stopSweeper();
    return ending;
  }

  function evict(drive: DriveSession, reason: EvictionReason): Promise<void> {
    const at = now();
    // Producing: the program wrote output since the agent last looked, and still runs.
    const wasProducing = !drive.exit && drive.lastOutputAt > drive.lastInteractionAt;
    evicted.set(drive.id, reason);
    if (evicted.size > REMEMBERED_EVICTIONS) evicted.delete(evicted.keys().next().value as string);
    events?.emit('terminal.session_evicted', {
      agentId: drive.agentId,
      ...(drive.sessionKey ? { sessionKey: drive.sessionKey } : {}),
      sessionId: drive.id,
      reason,
      idleMs: Math.max(0, Math.round(at - drive.lastInteractionAt)),
      wasProducing,
    });
    logger.info({ agentId: drive.agentId, sessionId: drive.id, reason }, 'terminal: drive evicted');
    return end(drive);
  }

  function sweep(): void {
    const at = now();
    for (const drive of [...drives.values()]) {
      if (at - drive.openedAt >= settings.wallClockMs) void evict(drive, 'wall_clock');
      else if (at - drive.lastInteractionAt >= settings.idleTimeoutMs) void evict(drive, 'idle');
    }
  }

  function startSweeper(): void {
    if (sweeper) return;
    const every = Math.max(
      25,
      Math.min(1000, Math.floor(Math.min(settings.idleTimeoutMs, settings.wallClockMs) / 4)),
    );
    sweeper = setInterval(sweep, every);
    sweeper.unref();
  }

  function stopSweeper(): void {
    clearInterval(sweeper);
    sweeper = undefined;
  }

  function find(agentId: string, sessionId: string): DriveSession {
    const drive = drives.get(sessionId);
    if (drive && drive.agentId === agentId) return drive;
    const reason = drive ? undefined : evicted.get(sessionId);
    throw new TerminalError(
      'SESSION_NOT_FOUND',
      reason ? `Terminal session ${sessionId} was evicted (${reason})` : `No terminal session ${sessionId}`,
      { data: { sessionId, ...(reason ? { evicted: reason } : {}) } },
    );
  }

  /** Counts an interaction; past the limit the drive is evicted and the call refused. */
  function touch(agentId: string, sessionId: string): DriveSession {
    const drive = find(agentId, sessionId);
    drive.interactions++;
    if (drive.interactions > settings.maxInteractions) {
      void evict(drive, 'max_interactions');
      throw new TerminalError(
        'EVICTED',
        `Terminal session ${sessionId} reached ${settings.maxInteractions} interactions and was evicted`,
        { data: { sessionId, reason: 'max_interactions' } },
      );
    }
    drive.lastInteractionAt = now();
    return drive;
  }

  async function screenOf(drive: DriveSession, scrollback = 0): Promise<DriveScreen> {
    const screen = await drive.screen(Math.min(scrollback, settings.scrollback));
    return { sessionId: drive.id, ...screen, ...(drive.exit ? { exit: drive.exit } : {}) };
  }

  return {
    async open(agentId, params, context = {}) {
      if (closed) throw new TerminalError('CLOSED', 'The terminal service is shut down');
      if (!settings.enabled)
        throw new TerminalError('CLOSED', 'Terminal drives are disabled (terminal.enabled is false)');
      const [libraries, directory] = await Promise.all([loadLibraries(), cwd(agentId)]);
      let displaced: string | undefined;
      const own = [...drives.values()].filter((drive) => drive.agentId === agentId);
      if (own.length >= settings.maxSessionsPerAgent) {
        const oldest = own.reduce((a, b) => (b.lastInteractionAt < a.lastInteractionAt ? b : a));
        displaced = oldest.id;
        void evict(oldest, 'max_sessions');
      }
      let drive: DriveSession;
      try {
        drive = new DriveSession(libraries, {
          id: `term_${randomBytes(8).toString('hex')}`,
          agentId,
          sessionKey: context.sessionKey,
          command: params.command,
          args: params.args ?? [],
          cwd: directory,
          env: driveEnv(baseEnv, settings.env),
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
      drives.set(drive.id, drive);
      startSweeper();
      if (params.input) {
        drive.write(params.input);
        drive.taskSent = true;
        promote(drive);
      }
      logger.info({ agentId, sessionId: drive.id }, 'terminal: drive opened');
      return { sessionId: drive.id, pid: drive.pid, ...(displaced ? { evicted: displaced } : {}) };
    },
    async send(agentId, sessionId, params) {
      const keys = (params.keys ?? []).map(keyBytes);
      const text = params.text ?? '';
      if (text === '' && keys.length === 0 && !params.enter) {
        throw new TerminalError('INVALID_PARAMS', 'Nothing to send: give text, keys or enter', {
          data: { field: 'text' },
        });
      }
      const drive = touch(agentId, sessionId);
      const bytes = `${text}${keys.join('')}${params.enter ? '\r' : ''}`;
      drive.write(bytes);
      if (text.trim() !== '' && !drive.taskSent) {
        drive.taskSent = true;
        promote(drive);
      }
      return { sessionId, bytes: Buffer.byteLength(bytes) };
    },
    async read(agentId, sessionId, params = {}) {
      return screenOf(touch(agentId, sessionId), params.scrollback);
    },
    async wait(agentId, sessionId, params = {}, context = {}) {
      const drive = touch(agentId, sessionId);
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
      const drive = find(agentId, sessionId);
      await end(drive);
      return { sessionId, closed: true as const, ...(drive.exit ? { exit: drive.exit } : {}) };
    },
    list(agentId) {
      return [...drives.values()]
        .filter((drive) => drive.agentId === agentId)
        .map((drive) => ({
          sessionId: drive.id,
          command: basename(drive.command),
          pid: drive.pid,
          openedAt: drive.openedAt,
          interactions: drive.interactions,
          ...(drive.exit ? { exit: drive.exit } : {}),
        }));
    },
    applyConfig(section) {
      settings = parseServiceOptions({ ...(section as object), cwd }).section;
      if (sweeper) {
        stopSweeper();
        startSweeper();
      }
    },
    async shutdown() {
      closed = true;
      stopSweeper();
      for (const drive of [...drives.values()]) void end(drive);
      await Promise.all([...endings]);
    },
  };
}
