import type { IPty } from 'node-pty';
import type { Terminal } from '@xterm/headless';
import type { TerminalLibraries } from './loader.js';
import { killGroup, signalGroup } from './process-group.js';

/** How a drive's program ended. */
export interface DriveExit {
  exitCode: number;
  /** The signal number that ended it, when one did. */
  signal?: number;
}

/** The screen as text, as a read answers it. */
export interface ScreenText {
  /** Visible rows (and scrollback lines above them when asked), trailing blank lines dropped. */
  text: string;
  cursor: { row: number; col: number };
  cols: number;
  rows: number;
}

/** What a drive is started with. */
export interface DriveSpawn {
  id: string;
  agentId: string;
  sessionKey: string | undefined;
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  scrollback: number;
  now: () => number;
}

/**
 * One terminal drive: a program in a pseudo-terminal (node-pty makes it a session and
 * process-group leader), its output fed to a headless xterm whose screen is read as text.
 */
export class DriveSession {
  readonly id: string;
  readonly agentId: string;
  readonly sessionKey: string | undefined;
  readonly command: string;
  readonly openedAt: number;
  readonly pid: number;
  lastInteractionAt: number;
  lastOutputAt: number;
  interactions = 0;
  /** Whether task text (not just keys) was ever sent. */
  taskSent = false;
  /** Whether `terminal.drive_promoted` was emitted. */
  promoted = false;
  exit: DriveExit | undefined;

  private readonly pty: IPty;
  private readonly terminal: Terminal;
  private readonly exited: Promise<void>;
  private readonly now: () => number;
  private readonly outputListeners = new Set<() => void>();

  constructor(libraries: TerminalLibraries, spawn: DriveSpawn) {
    this.id = spawn.id;
    this.agentId = spawn.agentId;
    this.sessionKey = spawn.sessionKey;
    this.command = spawn.command;
    this.now = spawn.now;
    this.openedAt = spawn.now();
    this.lastInteractionAt = this.openedAt;
    this.lastOutputAt = this.openedAt;
    this.terminal = new libraries.Terminal({
      cols: spawn.cols,
      rows: spawn.rows,
      scrollback: spawn.scrollback,
      allowProposedApi: true,
    });
    this.pty = libraries.spawn(spawn.command, spawn.args, {
      name: 'xterm-256color',
      cols: spawn.cols,
      rows: spawn.rows,
      cwd: spawn.cwd,
      env: spawn.env,
    });
    this.pid = this.pty.pid;
    this.pty.onData((data) => {
      this.lastOutputAt = this.now();
      this.terminal.write(data);
      for (const listener of this.outputListeners) listener();
    });
    this.exited = new Promise((resolve) => {
      this.pty.onExit(({ exitCode, signal }) => {
        this.exit = { exitCode, ...(signal ? { signal } : {}) };
        for (const listener of this.outputListeners) listener();
        resolve();
      });
    });
  }

  write(bytes: string): void {
    if (!this.exit) this.pty.write(bytes);
  }

  /** The screen once every byte received so far is parsed; `scrollback` lines above it too. */
  async screen(scrollback: number): Promise<ScreenText> {
    await new Promise<void>((resolve) => this.terminal.write('', resolve));
    const buffer = this.terminal.buffer.active;
    const first = Math.max(0, buffer.baseY - scrollback);
    const lines: string[] = [];
    for (let index = first; index < buffer.baseY + this.terminal.rows; index++) {
      lines.push(buffer.getLine(index)?.translateToString(true) ?? '');
    }
    while (lines.length > 0 && lines.at(-1) === '') lines.pop();
    return {
      text: lines.join('\n'),
      cursor: { row: buffer.cursorY, col: buffer.cursorX },
      cols: this.terminal.cols,
      rows: this.terminal.rows,
    };
  }

  /**
   * Resolves once no output arrived for `quietMs` (counted from the later of the call and the
   * last output), the program exited, `timeoutMs` passed or `signal` aborted.
   */
  waitQuiet(quietMs: number, timeoutMs: number, signal?: AbortSignal): Promise<{ quiet: boolean }> {
    const started = this.now();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (quiet: boolean) => {
        clearTimeout(timer);
        clearTimeout(deadline);
        this.outputListeners.delete(arm);
        signal?.removeEventListener('abort', aborted);
        resolve({ quiet });
      };
      const arm = () => {
        if (this.exit) return finish(true);
        clearTimeout(timer);
        const silentFor = this.now() - Math.max(started, this.lastOutputAt);
        timer = setTimeout(arm, Math.max(0, quietMs - silentFor));
        if (silentFor >= quietMs) finish(true);
      };
      const aborted = () => finish(false);
      const deadline = setTimeout(() => finish(false), timeoutMs);
      signal?.addEventListener('abort', aborted, { once: true });
      this.outputListeners.add(arm);
      arm();
    });
  }

  /**
   * Ends the drive: SIGTERM to the process group, SIGKILL to the group once the program has
   * exited or `graceMs` passed (so members that ignore SIGTERM, or outlive the program, go
   * too), then the emulator is disposed.
   */
  async kill(graceMs: number): Promise<void> {
    if (!this.exit) {
      signalGroup(this.pid, 'SIGHUP');
      signalGroup(this.pid, 'SIGTERM');
      await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    }
    // A SIGKILLed process is gone only once the kernel has torn it down: wait for that.
    const gone = await killGroup(this.pid, 5000);
    await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    this.outputListeners.clear();
    this.terminal.dispose();
    if (!gone) throw new Error(`process group ${this.pid} still runs after SIGKILL`);
  }
}
