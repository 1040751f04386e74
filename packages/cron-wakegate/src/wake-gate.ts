import { firstIssueText } from '@agentd/errors';
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import type { Injected } from '@agentd/contracts';
import { z } from 'zod';

/** Upper bound of a gate's time limit. */
export const MAX_GATE_TIMEOUT_MS = 120_000;
/** Upper bound of a gate's output cap. */
export const MAX_GATE_OUTPUT_BYTES = 1_048_576;

/**
 * A wake-gate as stored on a job: a command run without a shell before the model is called.
 * `timeoutMs` and `maxOutputBytes` override the service defaults for this gate.
 */
export const wakeGateSchema = z
  .object({
    /** Executable: a path (relative ones resolve in the agent's workspace) or a name looked up on PATH. */
    command: z.string().min(1).max(1024),
    /** Arguments, passed as they are (no shell, no globbing, no expansion). */
    args: z.array(z.string().max(4096)).max(64).optional(),
    /** Time limit for this gate, in milliseconds. */
    timeoutMs: z.number().int().min(100).max(MAX_GATE_TIMEOUT_MS).optional(),
    /** Output cap for this gate (stdout and stderr together), in bytes. */
    maxOutputBytes: z.number().int().min(64).max(MAX_GATE_OUTPUT_BYTES).optional(),
  })
  .strict();

/** A job's wake-gate. */
export type WakeGate = z.infer<typeof wakeGateSchema>;

/** What a gate prints on stdout (the whole of stdout, one JSON object). */
export const wakeGateOutputSchema = z.object({
  wake: z.boolean(),
  reason: z.string().max(1000).optional(),
  message: z.string().max(16_000).optional(),
});

/** Why a gate failed open. */
export type WakeGateFailure = 'crash' | 'timeout' | 'output-cap' | 'invalid-output';

/** What running a gate decided. `failed-open` wakes the model like `wake` does. */
export interface WakeGateResult {
  outcome: 'wake' | 'skip' | 'failed-open';
  /** The gate's own reason, when it gave one. */
  reason?: string | undefined;
  /** Text the gate wants added to the job's message when it wakes the model. */
  message?: string | undefined;
  /** Set when the outcome is `failed-open`. */
  failure?: WakeGateFailure | undefined;
  /** Short operator-facing detail of a failure (exit code, signal, parse problem); never the output itself. */
  detail?: string | undefined;
  /** Wall time of the gate. */
  durationMs: number;
  /** The gate's capability calls; 0 until the capability socket exists. */
  toolCalls: number;
}

/**
 * Options of {@link runWakeGate}.
 * From {@link Injected}: `now`, the clock of `durationMs`.
 */
export interface RunWakeGateOptions extends Pick<Injected, 'now'> {
  /** Working directory: the agent's workspace, created when missing. */
  cwd: string;
  /** Variables the gate sees in addition to the minimal set (PATH, HOME, LANG). */
  extraEnv?: Record<string, string> | undefined;
  /**
   * PATH the gate runs with.
   * @default '/usr/local/bin:/usr/bin:/bin'
   */
  path?: string | undefined;
  /**
   * Time limit when the gate sets none.
   * @default 10000
   */
  timeoutMs?: number | undefined;
  /**
   * Output cap (stdout and stderr together) when the gate sets none.
   * @default 65536
   */
  maxOutputBytes?: number | undefined;
  /** Aborting kills the gate; the result is a `crash` failure. */
  signal?: AbortSignal | undefined;
}

/**
 * Runs a gate and decides. Never throws: a gate that cannot start, exits non-zero or by a
 * signal, outlives its time limit, writes more than its cap, or prints anything but one
 * valid JSON object fails open (the model is woken). The gate and everything it started
 * run in their own process group, which is killed as a whole.
 */
export async function runWakeGate(gate: WakeGate, options: RunWakeGateOptions): Promise<WakeGateResult> {
  const now = options.now ?? Date.now;
  const started = now();
  const timeoutMs = gate.timeoutMs ?? options.timeoutMs ?? 10_000;
  const cap = gate.maxOutputBytes ?? options.maxOutputBytes ?? 65_536;
  const failOpen = (failure: WakeGateFailure, detail: string): WakeGateResult => ({
    outcome: 'failed-open',
    failure,
    detail,
    durationMs: now() - started,
    toolCalls: 0,
  });

  try {
    await mkdir(options.cwd, { recursive: true });
  } catch (error) {
    return failOpen('crash', `workspace not usable: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if (options.signal?.aborted) return failOpen('crash', 'aborted before start');

  const env: Record<string, string> = {
    PATH: options.path ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: options.cwd,
    LANG: 'C.UTF-8',
    ...options.extraEnv,
  };

  return new Promise<WakeGateResult>((resolve) => {
    let settled = false;
    let outputBytes = 0;
    let stopped: 'timeout' | 'output-cap' | 'aborted' | undefined;
    const stdout: Buffer[] = [];

    const child = spawn(gate.command, gate.args ?? [], {
      cwd: options.cwd,
      env,
      shell: false,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });

    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const stop = (why: 'timeout' | 'output-cap' | 'aborted') => {
      if (stopped || settled) return;
      stopped = why;
      killGroup();
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    const onAbort = () => stop('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const finish = (result: WakeGateResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const count = (chunk: Buffer, keep: boolean) => {
      outputBytes += chunk.length;
      if (outputBytes > cap) {
        stop('output-cap');
        return;
      }
      if (keep) stdout.push(chunk);
    };
    child.stdout?.on('data', (chunk: Buffer) => count(chunk, true));
    child.stderr?.on('data', (chunk: Buffer) => count(chunk, false));

    child.once('error', (error: NodeJS.ErrnoException) => {
      finish(failOpen('crash', `could not start: ${error.code ?? error.message}`));
    });
    child.once('close', (code, signal) => {
      if (stopped === 'timeout') return finish(failOpen('timeout', `no decision within ${timeoutMs} ms`));
      if (stopped === 'output-cap') return finish(failOpen('output-cap', `output over ${cap} bytes`));
      if (stopped === 'aborted') return finish(failOpen('crash', 'aborted'));
      if (signal) return finish(failOpen('crash', `killed by ${signal}`));
      if (code !== 0) return finish(failOpen('crash', `exit code ${code}`));
      const text = Buffer.concat(stdout).toString('utf8').trim();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        return finish(failOpen('invalid-output', 'stdout is not one JSON object'));
      }
      const decision = wakeGateOutputSchema.safeParse(json);
      if (!decision.success) {
        return finish(failOpen('invalid-output', firstIssueText('', decision.error.issues, 'output')));
      }
      finish({
        outcome: decision.data.wake ? 'wake' : 'skip',
        reason: decision.data.reason,
        message: decision.data.message,
        durationMs: now() - started,
        toolCalls: 0,
      });
    });
  });
}
