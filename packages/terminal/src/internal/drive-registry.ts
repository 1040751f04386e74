import type { EventSink, Logger } from '@agentd/contracts';
import { TerminalError } from '../errors.js';
import type { TerminalSection } from '../options.js';
import type { DriveSession } from './session.js';

/** Why a drive was evicted: the contract's four reasons. */
export type EvictionReason = 'idle' | 'wall_clock' | 'max_sessions' | 'max_interactions';

/** Evicted ids remembered, so a call on one says why it is gone. */
const REMEMBERED_EVICTIONS = 500;

/**
 * The open drives and their limits: lookups by owner, interaction counting, the sweep that
 * evicts idle and over-age drives, and the evidence events of rule 12.
 */
export class DriveRegistry {
  private readonly drives = new Map<string, DriveSession>();
  private readonly evicted = new Map<string, EvictionReason>();
  private readonly endings = new Set<Promise<void>>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly settings: () => TerminalSection,
    private readonly events: EventSink | undefined,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  add(drive: DriveSession): void {
    this.drives.set(drive.id, drive);
    this.startSweeper();
  }

  ownedBy(agentId: string): DriveSession[] {
    return [...this.drives.values()].filter((drive) => drive.agentId === agentId);
  }

  /** Emits `terminal.drive_promoted` once, as soon as whether task text was sent is known. */
  promote(drive: DriveSession): void {
    if (drive.promoted) return;
    drive.promoted = true;
    this.events?.emit('terminal.drive_promoted', {
      agentId: drive.agentId,
      ...(drive.sessionKey ? { sessionKey: drive.sessionKey } : {}),
      sessionId: drive.id,
      taskSent: drive.taskSent,
    });
  }

  /** Marks task text as sent (the first time, the drive is promoted with `taskSent: true`). */
  taskSent(drive: DriveSession): void {
    if (drive.taskSent) return;
    drive.taskSent = true;
    this.promote(drive);
  }

  /** Removes a drive and kills its process group (tracked, so shutdown can wait for it). */
  end(drive: DriveSession): Promise<void> {
    this.drives.delete(drive.id);
    this.promote(drive);
    const ending = drive.kill(this.settings().killGraceMs).catch((error: unknown) => {
      this.logger.warn(
        { errorKind: 'resource', hint: 'look for processes the drive left behind', err: error },
        'terminal: ending a drive failed',
      );
    });
    this.endings.add(ending);
    void ending.finally(() => this.endings.delete(ending));
    if (this.drives.size === 0) this.stopSweeper();
    return ending;
  }

  evict(drive: DriveSession, reason: EvictionReason): Promise<void> {
    // Producing: the program, still running, wrote output since the agent last looked.
    const wasProducing = !drive.exit && drive.lastOutputAt > drive.lastInteractionAt;
    this.evicted.set(drive.id, reason);
    if (this.evicted.size > REMEMBERED_EVICTIONS)
      this.evicted.delete(this.evicted.keys().next().value as string);
    this.events?.emit('terminal.session_evicted', {
      agentId: drive.agentId,
      ...(drive.sessionKey ? { sessionKey: drive.sessionKey } : {}),
      sessionId: drive.id,
      reason,
      idleMs: Math.max(0, Math.round(this.now() - drive.lastInteractionAt)),
      wasProducing,
    });
    this.logger.info({ agentId: drive.agentId, sessionId: drive.id, reason }, 'terminal: drive evicted');
    return this.end(drive);
  }

  /** The agent's drive with this id; otherwise `SESSION_NOT_FOUND`, saying why when it was evicted. */
  find(agentId: string, sessionId: string): DriveSession {
    const drive = this.drives.get(sessionId);
    if (drive && drive.agentId === agentId) return drive;
    const reason = drive ? undefined : this.evicted.get(sessionId);
    throw new TerminalError(
      'SESSION_NOT_FOUND',
      reason ? `Terminal session ${sessionId} was evicted (${reason})` : `No terminal session ${sessionId}`,
      { data: { sessionId, ...(reason ? { evicted: reason } : {}) } },
    );
  }

  /** Counts an interaction; past the limit the drive is evicted and the call refused. */
  touch(agentId: string, sessionId: string): DriveSession {
    const drive = this.find(agentId, sessionId);
    const limit = this.settings().maxInteractions;
    drive.interactions++;
    if (drive.interactions > limit) {
      void this.evict(drive, 'max_interactions');
      throw new TerminalError(
        'EVICTED',
        `Terminal session ${sessionId} reached ${limit} interactions and was evicted`,
        {
          data: { sessionId, reason: 'max_interactions' },
        },
      );
    }
    drive.lastInteractionAt = this.now();
    return drive;
  }

  private sweep(): void {
    const { wallClockMs, idleTimeoutMs } = this.settings();
    const at = this.now();
    for (const drive of [...this.drives.values()]) {
      if (at - drive.openedAt >= wallClockMs) void this.evict(drive, 'wall_clock');
      else if (at - drive.lastInteractionAt >= idleTimeoutMs) void this.evict(drive, 'idle');
    }
  }

  /** Checks at a quarter of the shorter limit (at most every second), only while drives are open. */
  startSweeper(): void {
    if (this.sweeper || this.drives.size === 0) return;
    const { idleTimeoutMs, wallClockMs } = this.settings();
    const every = Math.max(25, Math.min(1000, Math.floor(Math.min(idleTimeoutMs, wallClockMs) / 4)));
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  stopSweeper(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Ends every drive and waits until each process group is gone. */
  async shutdown(): Promise<void> {
    this.stopSweeper();
    for (const drive of [...this.drives.values()]) void this.end(drive);
    await Promise.all([...this.endings]);
  }
}
