import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:os';
import { type JailLimits, type LimitedCommand, limitedCommand } from './run-limits.js';

/** Why a script run failed (the contract's `failureClass`). */
export type FailureClass = 'timeout' | 'stdout_cap' | 'nonzero_exit' | 'spawn_fail' | 'lease_absent';

/** How one jailed process ended. */
export interface JailExit {
  exitCode: number;
  failureClass?: FailureClass | undefined;
  hint?: string | undefined;
  stdout: string;
  stdoutBytes: number;
  stderr: string;
}

/** Options of {@link runJailed}. */
export interface RunJailedOptions {
  bwrapPath: string;
  args: string[];
  env: Record<string, string>;
  timeoutMs: number;
  stdoutCapBytes: number;
  signal: AbortSignal;
  /** Called with the child once it started (process tracking: it leads its own process group). */
  onStart: (child: ChildProcess) => void;
  /** Processes and memory the run may hold (see run-limits.ts); unset: none beyond the host's. */
  limits?: { limits: JailLimits; runId: string } | undefined;
}

const STDERR_KEEP = 8 * 1024;

/** Kills the jail's whole process group (bwrap leads it; the jail dies with bwrap anyway). */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/**
 * Runs bubblewrap with `args` and waits for it: stdout kept up to the cap (past it the jail is
 * killed), stderr's tail kept, the jail killed at the deadline or when `signal` aborts. A
 * bwrap that cannot start, or that reports it could not build the jail, is `spawn_fail`: the
 * script never ran, and nothing ever runs outside the jail.
 */
export async function runJailed(options: RunJailedOptions): Promise<JailExit> {
  const limited: LimitedCommand = options.limits
    ? await limitedCommand(options.bwrapPath, options.args, options.limits.limits, options.limits.runId)
    : { command: options.bwrapPath, args: options.args, mechanism: 'rlimit', release: async () => {} };
  try {
    return await spawnJail(options, limited);
  } finally {
    await limited.release();
  }
}

function spawnJail(options: RunJailedOptions, limited: LimitedCommand): Promise<JailExit> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(limited.command, limited.args, {
        env: options.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
    } catch (error) {
      resolve(spawnFail(options.bwrapPath, (error as Error).message));
      return;
    }
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let failureClass: FailureClass | undefined;
    let started = false;
    const stop = (why: FailureClass | undefined) => {
      failureClass ??= why;
      killGroup(child);
    };
    const timer = setTimeout(() => stop('timeout'), options.timeoutMs);
    const onAbort = () => stop(undefined);
    options.signal.addEventListener('abort', onAbort, { once: true });
    child.once('spawn', () => {
      started = true;
      options.onStart(child);
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      const room = options.stdoutCapBytes - (stdoutBytes - chunk.length);
      if (room > 0) stdout.push(room >= chunk.length ? chunk : chunk.subarray(0, room));
      if (stdoutBytes > options.stdoutCapBytes) stop('stdout_cap');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEEP);
    });
    const finish = (exit: JailExit) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      resolve(exit);
    };
    child.once('error', (error) => {
      if (!started) finish(spawnFail(options.bwrapPath, error.message));
    });
    child.once('close', (code, signal) => {
      if (!started) return;
      const exitCode = code ?? 128 + (signal ? (constants.signals[signal] ?? 9) : 9);
      const text = Buffer.concat(stdout).toString('utf8');
      // bwrap's own messages start with "bwrap:" (the cgroup wrapper's with "agentd-jail:", as
      // when it cannot execute bwrap); with nothing else, the jail never formed.
      if (
        failureClass === undefined &&
        exitCode !== 0 &&
        /^(bwrap|agentd-jail): /m.test(stderr) &&
        text === ''
      ) {
        finish({
          ...spawnFail(options.bwrapPath, stderr.trim().split('\n').pop() ?? 'bwrap failed'),
          stderr,
        });
        return;
      }
      if (failureClass === undefined && exitCode !== 0) failureClass = 'nonzero_exit';
      finish({ exitCode, failureClass, stdout: text, stdoutBytes, stderr });
    });
  });
}

function spawnFail(bwrapPath: string, reason: string): JailExit {
  return {
    exitCode: -1,
    failureClass: 'spawn_fail',
    hint: `the bubblewrap jail could not be created (${reason.slice(0, 300)}); install the Debian package bubblewrap or set orchestrate.bwrapPath (now ${bwrapPath}); scripts never run unjailed`,
    stdout: '',
    stdoutBytes: 0,
    stderr: '',
  };
}
