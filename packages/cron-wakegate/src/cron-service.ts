import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Database } from '@agentd/storage';
import { z } from 'zod';
import { cronSectionSchema } from './config.js';
import { CronWakegateError } from './errors.js';
import { DueHeap } from './internal/due-heap.js';
import { FireRecorder, type JobRuntimeRow, type RunRow } from './internal/fire-recorder.js';
import { RunLimiter } from './internal/run-limiter.js';
import { type CronLogger, noopLogger } from './logger.js';
import { cronWakegateMigrations, MIGRATION_PACKAGE } from './migrations.js';
import { nextFireAfter, type ResolvedSchedule, resolveSchedule, type ScheduleInput } from './schedule.js';
import { type AgentTurnRunner, type EventSink, noopEventSink } from './types.js';
import { runWakeGate, type WakeGate, type WakeGateResult, wakeGateSchema } from './wake-gate.js';

/** An agent id: a safe single path segment (it names the agent's workspace directory). */
export const agentIdSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/,
    'letters, digits, dot, underscore and dash; not starting with a dot',
  );

/** The summary a gate skip writes, as the contract words it. */
export const WAKE_GATE_SKIP_SUMMARY = 'wake-gate: skipped';

/** How a fire came about. `catch-up` is the one run a job gets for fires missed while the daemon was down. */
export type FireTrigger = 'schedule' | 'catch-up' | 'force' | 'due';

/** A job as `cron.list` shows it (the contract's Cron job plus agentd's extra fields). */
export interface CronJob {
  id: string;
  name: string;
  agentId: string;
  message: string;
  scheduleKind: 'cron' | 'interval' | 'once';
  expr?: string;
  tz?: string;
  everyMs?: number;
  /** The one-shot time as given. */
  at?: string;
  /** Epoch ms of the next fire; 0 when none is scheduled (disabled, or a one-shot that is done). */
  nextRunAtMs: number;
  enabled: boolean;
  lastRunAtMs?: number;
  lastError?: string;
  /** Present on a gated job. */
  wakeGate?: WakeGate;
  /** The job's own run time limit, when it sets one. */
  timeoutMs?: number;
  /** Errors in a row; drives the retry backoff. */
  consecutiveErrors: number;
  /** True while a run of this job is queued or in progress. */
  running: boolean;
  createdAtMs: number;
  updatedAtMs: number;
}

/** A run record as `cron.runs` shows it (the contract's Cron run record plus agentd's extra fields). */
export interface CronRun {
  runId: string;
  /** Fire time. */
  ts: number;
  jobId: string;
  jobName: string;
  agentId: string;
  status: 'ok' | 'error' | 'skipped';
  durationMs: number;
  trigger: FireTrigger;
  /** True on the one run a job gets after a restart for the fires it missed. */
  catchUp?: true;
  /** The scheduled instant the fire was for (absent on `force`). */
  scheduledAtMs?: number;
  /** Why a skipped fire did not run: the job's wake-gate, or a previous run still in progress. */
  skipReason?: 'wake-gate' | 'overlap';
  summary?: string;
  error?: string;
  toolCalls?: number;
  estTurnsSaved?: number;
  rootRunId?: string;
  /** On a gated job: what the gate decided. */
  wakeGate?: {
    outcome: 'wake' | 'skip' | 'failed-open';
    failure?: 'crash' | 'timeout' | 'output-cap' | 'invalid-output';
    reason?: string;
    durationMs: number;
  };
  sessionKey?: string;
  tokensTotal?: number;
}

/** Input of {@link CronService.add}. */
export interface AddJobInput {
  name: string;
  message: string;
  /** @default 'default' */
  agentId?: string | undefined;
  schedule: ScheduleInput;
  /** @default true */
  enabled?: boolean | undefined;
  /** Time limit of this job's runs; the service default when absent. */
  timeoutMs?: number | undefined;
  wakeGate?: WakeGate | undefined;
}

/** Input of {@link CronService.update}: only the given fields change; `null` clears an optional one. */
export interface UpdateJobInput {
  name: string;
  message?: string | undefined;
  agentId?: string | undefined;
  schedule?: ScheduleInput | undefined;
  enabled?: boolean | undefined;
  timeoutMs?: number | null | undefined;
  wakeGate?: WakeGate | null | undefined;
}

/** Options of {@link createCronService}. */
export interface CronServiceOptions {
  /** The shared libsql handle; the service migrates its tables on `start()`. */
  db: Database;
  /** Runs the model turn of a fire. */
  runner: AgentTurnRunner;
  /** The workspace directory of an agent; a gate runs there (created when missing). */
  workspaceDir: (agentId: string) => string;
  /**
   * Fires scheduled runs; `false` stores jobs but fires only on `runNow`/`runDue`.
   * @default true
   */
  enabled?: boolean | undefined;
  /**
   * Runs in progress at once; further fires wait their turn.
   * @default 4
   */
  maxConcurrentRuns?: number | undefined;
  /**
   * Time limit of one run when the job sets none, in milliseconds.
   * @default 600000
   */
  runTimeoutMs?: number | undefined;
  /**
   * Extra wait after the n-th consecutive error (the last entry repeats).
   * @default [30000, 60000, 300000, 900000, 3600000]
   */
  retryBackoffMs?: number[] | undefined;
  /**
   * Retries of a failing one-shot before it is disabled.
   * @default 3
   */
  onceMaxRetries?: number | undefined;
  /**
   * Days run records are kept; 0 keeps them forever.
   * @default 30
   */
  runRetentionDays?: number | undefined;
  /**
   * Zone of a cron job that names none.
   * @default the host's time zone
   */
  defaultTimeZone?: string | undefined;
  /**
   * Gate defaults: time limit, output cap, PATH.
   * @default { timeoutMs: 10000, maxOutputBytes: 65536 }
   */
  wakeGate?: { timeoutMs?: number; maxOutputBytes?: number; path?: string | undefined } | undefined;
  /**
   * Clock in epoch ms.
   * @default Date.now
   */
  now?: (() => number) | undefined;
  /**
   * Id source for jobs and runs.
   * @default crypto.randomUUID
   */
  randomId?: (() => string) | undefined;
  /** @default a logger that drops everything */
  logger?: CronLogger | undefined;
  /**
   * Receives `cron:fired` per fire (ids, enums and counts only).
   * @default a sink that drops everything
   */
  events?: EventSink | undefined;
}

/** The scheduler: persisted jobs, fires, run records. */
export interface CronService {
  /** Migrates, loads jobs, runs one catch-up per job that missed fires, arms the timer. */
  start(): Promise<void>;
  /**
   * Applies new settings (the `cron` section) in place: `enabled` stops or resumes scheduled
   * fires (a job that came due meanwhile fires once when resumed), `maxConcurrentRuns` takes
   * effect for the next fire, and the other keys for runs started from now on.
   * @throws {CronWakegateError} `INVALID_OPTIONS` when they fail validation (nothing changes then).
   */
  applyConfig(section: CronSettings): void;
  add(input: AddJobInput): Promise<CronJob>;
  update(input: UpdateJobInput): Promise<CronJob>;
  remove(name: string): Promise<{ id: string; name: string }>;
  list(): CronJob[];
  /** Throws `JOB_NOT_FOUND`. */
  get(name: string): CronJob;
  /** Newest first; `limit` defaults to 50. Throws `JOB_NOT_FOUND`. */
  runs(query: {
    jobName: string;
    limit?: number | undefined;
    agentId?: string | undefined;
  }): Promise<CronRun[]>;
  /** Fires a job now whatever its schedule (its schedule is left as it is). Throws `JOB_NOT_FOUND`. */
  runNow(name: string): { jobName: string };
  /** Fires every enabled job whose next run is due; returns their names. */
  runDue(): { jobNames: string[] };
  /** Resolves when every fire so far has finished and its record is committed. */
  idle(): Promise<void>;
  /** Stops the timer, interrupts runs in progress (they are re-run as catch-up after a restart), flushes. */
  close(): Promise<void>;
}

interface JobState {
  id: string;
  name: string;
  agentId: string;
  message: string;
  schedule: ResolvedSchedule;
  enabled: boolean;
  timeoutMs: number | undefined;
  wakeGate: WakeGate | undefined;
  nextRunAtMs: number;
  lastRunAtMs: number | undefined;
  lastError: string | undefined;
  consecutiveErrors: number;
  createdAtMs: number;
  updatedAtMs: number;
  /** Bumped by every edit, so a run that started before an edit does not undo it. */
  generation: number;
  active: boolean;
  removed: boolean;
  /** Set between a fire and the computation of the job's next time (see deferAdvance). */
  advanceAfter: number | undefined;
}

interface InFlight {
  controller: AbortController;
  done: Promise<void>;
  /** Ends the wait for the turn at once (set while a turn runs); cheaper than a listener on the signal. */
  interrupt: ((reason: unknown) => void) | undefined;
}

interface Fire {
  job: JobState;
  trigger: FireTrigger;
  ts: number;
  scheduledAtMs: number | undefined;
  generation: number;
}

const optionsSchema = cronSectionSchema.omit({ wakeGate: true }).extend({
  wakeGate: z
    .object({
      timeoutMs: z.number().int().min(100).optional(),
      maxOutputBytes: z.number().int().min(64).optional(),
      path: z.string().min(1).optional(),
    })
    .default({}),
});

const addSchema = z.object({
  name: z.string().trim().min(1).max(200),
  message: z.string().min(1).max(100_000),
  agentId: agentIdSchema.optional(),
  enabled: z.boolean().optional(),
  timeoutMs: z.number().int().min(1000).max(86_400_000).optional(),
  wakeGate: wakeGateSchema.optional(),
});

/** The settings part of {@link CronServiceOptions}: what the `cron` config section holds. */
export type CronSettings = Pick<
  CronServiceOptions,
  | 'enabled'
  | 'maxConcurrentRuns'
  | 'runTimeoutMs'
  | 'retryBackoffMs'
  | 'onceMaxRetries'
  | 'runRetentionDays'
  | 'defaultTimeZone'
  | 'wakeGate'
>;

function parseSettings(options: CronSettings) {
  const parsed = optionsSchema.safeParse({
    enabled: options.enabled,
    maxConcurrentRuns: options.maxConcurrentRuns,
    runTimeoutMs: options.runTimeoutMs,
    retryBackoffMs: options.retryBackoffMs,
    onceMaxRetries: options.onceMaxRetries,
    runRetentionDays: options.runRetentionDays,
    defaultTimeZone: options.defaultTimeZone,
    wakeGate: options.wakeGate,
  });
  if (!parsed.success) {
    throw new CronWakegateError('INVALID_OPTIONS', `invalid cron service options: ${parsed.error.message}`, {
      cause: parsed.error,
    });
  }
  return parsed.data;
}

const MAX_TIMER_MS = 60_000;
const MAX_TEXT = 2000;
const SHUTDOWN = Symbol('shutdown');

class TimeoutError extends Error {}

/**
 * Creates the scheduler. Call `start()` before use. Jobs of kind `cron` (croner, IANA zones,
 * DST as croner resolves it), `interval` (anchored at creation, so fires keep their phase)
 * and `once` live in `cron_jobs`; every fire (ran, skipped, failed open, errored) is a row of
 * `cron_runs`.
 */
export function createCronService(options: CronServiceOptions): CronService {
  const { db, runner, workspaceDir } = options;
  let settings = parseSettings(options);
  const now = options.now ?? Date.now;
  const randomId = options.randomId ?? randomUUID;
  const logger = options.logger ?? noopLogger;
  const events = options.events ?? noopEventSink;

  const byId = new Map<string, JobState>();
  const byName = new Map<string, JobState>();
  const heap = new DueHeap();
  const limiter = new RunLimiter(settings.maxConcurrentRuns);
  const inflight = new Set<InFlight>();
  // Large batches: a burst of fires is written in one transaction after it, not in slices during it.
  const recorder = new FireRecorder({ db, logger, jobState: runtimeRow, maxBatch: 5000 });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerDue = Number.POSITIVE_INFINITY;
  let pruneTimer: ReturnType<typeof setInterval> | undefined;
  let started = false;
  let closed = false;
  let mutations: Promise<unknown> = Promise.resolve();
  // Scheduled fires run in the context the service was created in, not in that of the request that
  // happened to arm the timer, so their log lines never carry a stranger's trace id.
  const detached = new AsyncResource('agentd.cron');

  function runtimeRow(id: string): JobRuntimeRow | undefined {
    const job = byId.get(id);
    if (!job || job.removed) return undefined;
    settleAdvance(job);
    return {
      id,
      enabled: job.enabled,
      nextRunAtMs: job.nextRunAtMs,
      lastRunAtMs: job.lastRunAtMs ?? null,
      lastError: job.lastError ?? null,
      consecutiveErrors: job.consecutiveErrors,
    };
  }

  const ensureOpen = () => {
    if (closed) throw new CronWakegateError('CLOSED', 'the cron service is closed');
    if (!started) throw new CronWakegateError('CLOSED', 'the cron service is not started');
  };

  /** Serialises edits so name checks and writes of two calls never interleave. */
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    const result = mutations.then(work);
    mutations = result.catch(() => undefined);
    return result;
  };

  // Timer ----------------------------------------------------------------------------------------

  const schedule = (job: JobState) => {
    if (!job.enabled || job.nextRunAtMs <= 0 || job.removed) return;
    heap.push({ due: job.nextRunAtMs, id: job.id });
    if (job.nextRunAtMs < timerDue) arm();
  };

  const arm = () => {
    if (closed || !started || !settings.enabled) return;
    // Drop entries whose job moved on, so the timer is armed for a real fire.
    for (let top = heap.peek(); top; top = heap.peek()) {
      const job = byId.get(top.id);
      if (job && !job.removed && job.enabled && job.nextRunAtMs === top.due) break;
      heap.pop();
    }
    const top = heap.peek();
    if (timer) clearTimeout(timer);
    timer = undefined;
    timerDue = Number.POSITIVE_INFINITY;
    if (!top) return;
    // Long waits are cut into pieces so a wall-clock change (suspend, NTP step) is noticed within a minute.
    const delay = Math.min(Math.max(0, top.due - now()), MAX_TIMER_MS);
    timerDue = top.due;
    timer = setTimeout(() => detached.runInAsyncScope(onTimer), delay);
    timer.unref?.();
  };

  const onTimer = () => {
    timer = undefined;
    timerDue = Number.POSITIVE_INFINITY;
    const at = now();
    for (let top = heap.peek(); top && top.due <= at; top = heap.peek()) {
      heap.pop();
      const job = byId.get(top.id);
      if (!job || job.removed || !job.enabled || job.nextRunAtMs !== top.due) continue;
      fire(job, 'schedule', top.due);
    }
    arm();
  };

  // Firing ---------------------------------------------------------------------------------------

  /** Moves a job past `afterMs`: a recurring job to its next fire, a one-shot to none. */
  const advance = (job: JobState, afterMs: number) => {
    job.advanceAfter = undefined;
    if (job.schedule.kind === 'once') {
      job.nextRunAtMs = 0;
      return;
    }
    const next = nextFireAfter(job.schedule, afterMs);
    if (next === undefined) {
      // A 7-field expression whose last year has passed: nothing left to fire.
      job.nextRunAtMs = 0;
      job.enabled = false;
      return;
    }
    job.nextRunAtMs = next;
    schedule(job);
  };

  // A burst of fires starts every executor first; next times (croner work) are computed on the
  // following turn of the event loop, so the last job of a thousand is not late by the first 999's
  // schedule arithmetic. Anything that reads or changes a job settles its pending advance first.
  let pendingAdvances: JobState[] = [];
  const flushAdvances = () => {
    const jobs = pendingAdvances;
    pendingAdvances = [];
    for (const job of jobs) settleAdvance(job);
  };
  const deferAdvance = (job: JobState, afterMs: number) => {
    job.advanceAfter = afterMs;
    if (pendingAdvances.push(job) === 1) setImmediate(() => detached.runInAsyncScope(flushAdvances));
  };
  function settleAdvance(job: JobState): void {
    if (job.advanceAfter !== undefined) advance(job, job.advanceAfter);
  }

  function fire(job: JobState, trigger: FireTrigger, scheduledAtMs: number | undefined): void {
    const ts = now();
    const consumes = trigger !== 'force';
    if (job.active) {
      settleAdvance(job);
      if (consumes) advance(job, ts);
      const run = baseRun(job, trigger, ts, scheduledAtMs);
      run.status = 'skipped';
      run.skipReason = 'overlap';
      run.summary = 'skipped: the previous run of this job is still in progress';
      finishRecord(job, run);
      return;
    }
    job.active = true;
    const entry: Fire = { job, trigger, ts, scheduledAtMs, generation: job.generation };
    // The executor starts before the next fire time is computed: lateness is what callers feel.
    limiter.run(() => execute(entry));
    if (consumes) deferAdvance(job, ts);
  }

  const baseRun = (
    job: JobState,
    trigger: FireTrigger,
    ts: number,
    scheduledAtMs: number | undefined,
  ): RunRow => ({
    runId: randomId(),
    jobId: job.id,
    jobName: job.name,
    agentId: job.agentId,
    ts,
    scheduledAtMs: scheduledAtMs ?? null,
    trigger,
    status: 'ok',
    skipReason: null,
    durationMs: 0,
    summary: null,
    error: null,
    gated: false,
    gateOutcome: null,
    gateFailure: null,
    gateReason: null,
    gateDurationMs: null,
    toolCalls: null,
    estTurnsSaved: null,
    rootRunId: null,
    sessionKey: null,
    tokensTotal: null,
  });

  async function execute(entry: Fire): Promise<void> {
    const { job } = entry;
    const controller = new AbortController();
    let release: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handle: InFlight = { controller, done, interrupt: undefined };
    inflight.add(handle);
    const run = baseRun(job, entry.trigger, entry.ts, entry.scheduledAtMs);
    const began = now();
    let interrupted = false;
    try {
      // Fires still waiting for a slot when the service closes never start their turn.
      if (closed) throw SHUTDOWN;
      let gate: WakeGateResult | undefined;
      if (job.wakeGate) {
        gate = await runWakeGate(job.wakeGate, {
          cwd: workspaceDir(job.agentId),
          extraEnv: {
            AGENTD_JOB_ID: job.id,
            AGENTD_JOB_NAME: job.name,
            AGENTD_AGENT_ID: job.agentId,
            AGENTD_FIRE_TS: String(entry.ts),
          },
          path: settings.wakeGate.path,
          timeoutMs: settings.wakeGate.timeoutMs,
          maxOutputBytes: settings.wakeGate.maxOutputBytes,
          signal: controller.signal,
          now,
        });
        run.gated = true;
        run.gateOutcome = gate.outcome;
        run.gateFailure = gate.failure ?? null;
        run.gateReason = clip(gate.reason ?? gate.detail, 500);
        run.gateDurationMs = gate.durationMs;
        if (controller.signal.reason === SHUTDOWN) throw SHUTDOWN;
        if (gate.outcome === 'failed-open') {
          logger.warn(
            {
              jobId: job.id,
              agentId: job.agentId,
              reason: gate.failure,
              hint: `the wake-gate of job '${job.name}' failed (${gate.detail}); the model was woken anyway. Fix the gate command`,
              errorKind: gate.failure === 'timeout' ? 'timeout' : 'dependency',
            },
            'wake-gate failed open',
          );
        }
        if (gate.outcome === 'skip') {
          run.status = 'skipped';
          run.skipReason = 'wake-gate';
          run.summary = WAKE_GATE_SKIP_SUMMARY;
          run.toolCalls = gate.toolCalls;
          run.estTurnsSaved = 1;
          run.rootRunId = `root-wakegate-${job.id}-${entry.ts}`;
          return;
        }
      }
      const message = gate?.message ? `${job.message}\n\n${gate.message}` : job.message;
      const timeoutMs = job.timeoutMs ?? settings.runTimeoutMs;
      const result = await withTimeout(
        runner.runTurn({
          agentId: job.agentId,
          message,
          sessionKey: `cron:${job.id}`,
          timeoutMs,
          signal: controller.signal,
          origin: 'cron',
        }),
        timeoutMs,
        handle,
      );
      run.status = 'ok';
      run.summary = clip(result.response, 500);
      run.sessionKey = result.sessionKey;
      run.tokensTotal = result.tokensUsed.total;
    } catch (error) {
      run.status = 'error';
      if (error === SHUTDOWN || controller.signal.reason === SHUTDOWN) {
        interrupted = true;
        run.error = 'interrupted: the daemon shut down during the run; it runs again as a catch-up';
      } else if (error instanceof TimeoutError) {
        run.error = error.message;
      } else {
        run.error = clip(error instanceof Error ? error.message : String(error), MAX_TEXT) ?? 'unknown error';
      }
    } finally {
      run.durationMs = now() - began;
      settle(entry, run, interrupted);
      inflight.delete(handle);
      release();
    }
  }

  /** Applies a finished run to its job (errors, backoff, one-shot completion) and records both. */
  function settle(entry: Fire, run: RunRow, interrupted: boolean): void {
    const { job } = entry;
    job.active = false;
    if (job.removed) {
      finishRecord(job, run);
      return;
    }
    const ownsSchedule = entry.trigger !== 'force' && entry.generation === job.generation;
    if (interrupted) {
      settleAdvance(job);
      // Put the fire back so the next start runs it as a catch-up.
      if (ownsSchedule) {
        job.nextRunAtMs = entry.scheduledAtMs ?? entry.ts;
      }
      finishRecord(job, run);
      return;
    }
    job.lastRunAtMs = entry.ts;
    if (run.status === 'error') {
      // Backoff compares with the next regular fire, so that must be known now.
      settleAdvance(job);
      job.consecutiveErrors += 1;
      job.lastError = run.error ?? 'unknown error';
      if (ownsSchedule) {
        const backoff =
          settings.retryBackoffMs[Math.min(job.consecutiveErrors, settings.retryBackoffMs.length) - 1] ?? 0;
        const retryAt = now() + backoff;
        if (job.schedule.kind === 'once') {
          if (job.consecutiveErrors <= settings.onceMaxRetries) job.nextRunAtMs = retryAt;
          else {
            job.enabled = false;
            job.nextRunAtMs = 0;
          }
        } else if (job.nextRunAtMs > 0 && job.nextRunAtMs < retryAt) {
          job.nextRunAtMs = nextFireAfter(job.schedule, retryAt - 1) ?? 0;
          if (job.nextRunAtMs === 0) job.enabled = false;
        }
        schedule(job);
      }
    } else {
      if (run.status === 'ok') {
        job.consecutiveErrors = 0;
        job.lastError = undefined;
      }
      if (ownsSchedule && job.schedule.kind === 'once') {
        job.enabled = false;
        job.nextRunAtMs = 0;
      }
    }
    finishRecord(job, run);
  }

  function finishRecord(job: JobState, run: RunRow): void {
    recorder.record(run, job.id);
    events.emit('cron:fired', {
      jobId: run.jobId,
      agentId: run.agentId,
      trigger: run.trigger,
      status: run.status,
      catchUp: run.trigger === 'catch-up',
      ...(run.skipReason ? { skipReason: run.skipReason } : {}),
      ...(run.gated ? { gateOutcome: run.gateOutcome, gateDurationMs: run.gateDurationMs } : {}),
      ...(run.gateFailure ? { gateFailure: run.gateFailure } : {}),
      durationMs: run.durationMs,
      toolCalls: run.toolCalls ?? 0,
      estTurnsSaved: run.estTurnsSaved ?? 0,
      timestamp: run.ts,
    });
    if (run.status === 'error' && run.trigger !== 'force') {
      logger.warn(
        {
          jobId: job.id,
          agentId: job.agentId,
          durationMs: run.durationMs,
          hint: `job '${job.name}' failed; see cron.runs for the message. It retries with backoff`,
          errorKind: run.error?.startsWith('run timed out') ? 'timeout' : 'dependency',
        },
        'cron run failed',
      );
    }
  }

  function withTimeout<T>(work: Promise<T>, timeoutMs: number, handle: InFlight): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const limit = setTimeout(() => {
        const error = new TimeoutError(`run timed out after ${timeoutMs} ms`);
        handle.controller.abort(error);
        reject(error);
      }, timeoutMs);
      limit.unref?.();
      handle.interrupt = reject;
      work.then(
        (value) => {
          clearTimeout(limit);
          handle.interrupt = undefined;
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(limit);
          handle.interrupt = undefined;
          reject(error);
        },
      );
    });
  }

  // Loading and edits ----------------------------------------------------------------------------

  const toPublic = (job: JobState): CronJob => {
    settleAdvance(job);
    const out: CronJob = {
      id: job.id,
      name: job.name,
      agentId: job.agentId,
      message: job.message,
      scheduleKind: job.schedule.kind,
      nextRunAtMs: job.enabled ? job.nextRunAtMs : 0,
      enabled: job.enabled,
      consecutiveErrors: job.consecutiveErrors,
      running: job.active,
      createdAtMs: job.createdAtMs,
      updatedAtMs: job.updatedAtMs,
    };
    if (job.schedule.kind === 'cron') {
      out.expr = job.schedule.expr;
      out.tz = job.schedule.tz;
    } else if (job.schedule.kind === 'interval') {
      out.everyMs = job.schedule.everyMs;
    } else {
      out.at = job.schedule.at;
      if (job.schedule.tz) out.tz = job.schedule.tz;
    }
    if (job.lastRunAtMs !== undefined) out.lastRunAtMs = job.lastRunAtMs;
    if (job.lastError !== undefined) out.lastError = job.lastError;
    if (job.wakeGate) out.wakeGate = job.wakeGate;
    if (job.timeoutMs !== undefined) out.timeoutMs = job.timeoutMs;
    return out;
  };

  const find = (name: string): JobState => {
    const job = byName.get(name);
    if (!job) throw new CronWakegateError('JOB_NOT_FOUND', `Job not found: ${name}`, { data: { name } });
    return job;
  };

  const resolve = (input: ScheduleInput, at: number) =>
    resolveSchedule(input, { now: at, defaultTimeZone: settings.defaultTimeZone });

  const checkFields = (input: Record<string, unknown>, schema: z.ZodType) => {
    const result = schema.safeParse(input);
    if (result.success) return;
    const issues = result.error.issues.map((issue) => ({
      path: issue.path.map(String),
      message: issue.message,
    }));
    throw new CronWakegateError(
      'INVALID_JOB',
      issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
      {
        data: { issues },
      },
    );
  };

  const writeJob = async (job: JobState, insert: boolean) => {
    const args = [
      job.name,
      job.agentId,
      job.message,
      JSON.stringify(job.schedule),
      job.schedule.kind,
      job.enabled ? 1 : 0,
      job.timeoutMs ?? null,
      job.wakeGate ? JSON.stringify(job.wakeGate) : null,
      job.nextRunAtMs,
      job.lastRunAtMs ?? null,
      job.lastError ?? null,
      job.consecutiveErrors,
      job.createdAtMs,
      job.updatedAtMs,
      job.id,
    ];
    try {
      await db.execute(
        insert
          ? `INSERT INTO cron_jobs (name, agent_id, message, schedule, schedule_kind, enabled, timeout_ms, wake_gate,
              next_run_at_ms, last_run_at_ms, last_error, consecutive_errors, created_at_ms, updated_at_ms, id)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
          : `UPDATE cron_jobs SET name = ?, agent_id = ?, message = ?, schedule = ?, schedule_kind = ?, enabled = ?,
              timeout_ms = ?, wake_gate = ?, next_run_at_ms = ?, last_run_at_ms = ?, last_error = ?,
              consecutive_errors = ?, created_at_ms = ?, updated_at_ms = ? WHERE id = ?`,
        args,
      );
    } catch (error) {
      if ((error as { code?: string }).code === 'CONSTRAINT') {
        throw new CronWakegateError('JOB_EXISTS', `a job named '${job.name}' already exists`, {
          data: {
            name: job.name,
            issues: [{ path: ['name'], message: `a job named '${job.name}' already exists` }],
          },
        });
      }
      throw error;
    }
  };

  const loadJobs = async () => {
    const rows = await db.query<{
      id: string;
      name: string;
      agent_id: string;
      message: string;
      schedule: string;
      enabled: number;
      timeout_ms: number | null;
      wake_gate: string | null;
      next_run_at_ms: number;
      last_run_at_ms: number | null;
      last_error: string | null;
      consecutive_errors: number;
      created_at_ms: number;
      updated_at_ms: number;
    }>('SELECT * FROM cron_jobs');
    for (const row of rows) {
      const job: JobState = {
        id: row.id,
        name: row.name,
        agentId: row.agent_id,
        message: row.message,
        schedule: JSON.parse(row.schedule) as ResolvedSchedule,
        enabled: row.enabled === 1,
        timeoutMs: row.timeout_ms ?? undefined,
        wakeGate: row.wake_gate ? (JSON.parse(row.wake_gate) as WakeGate) : undefined,
        nextRunAtMs: row.next_run_at_ms,
        lastRunAtMs: row.last_run_at_ms ?? undefined,
        lastError: row.last_error ?? undefined,
        consecutiveErrors: row.consecutive_errors,
        createdAtMs: row.created_at_ms,
        updatedAtMs: row.updated_at_ms,
        generation: 0,
        active: false,
        removed: false,
        advanceAfter: undefined,
      };
      byId.set(job.id, job);
      byName.set(job.name, job);
    }
  };

  const prune = async () => {
    if (settings.runRetentionDays === 0) return;
    try {
      await db.execute('DELETE FROM cron_runs WHERE ts < ?', [
        now() - settings.runRetentionDays * 86_400_000,
      ]);
    } catch (err) {
      logger.warn(
        { err, hint: 'old cron run records were not pruned; check the database', errorKind: 'resource' },
        'cron run pruning failed',
      );
    }
  };

  return {
    async start() {
      if (closed) throw new CronWakegateError('CLOSED', 'the cron service is closed');
      if (started) return;
      await db.migrate(MIGRATION_PACKAGE, cronWakegateMigrations);
      await loadJobs();
      await prune();
      pruneTimer = setInterval(() => void prune(), 3_600_000);
      pruneTimer.unref?.();
      started = true;
      const at = now();
      const missed: JobState[] = [];
      for (const job of byId.values()) {
        if (!job.enabled) continue;
        if (job.nextRunAtMs <= 0) {
          // Enabled without a time (an edit interrupted between writes): place it again.
          job.nextRunAtMs = nextFireAfter(job.schedule, at) ?? 0;
          if (job.nextRunAtMs === 0) job.enabled = false;
          recorder.record(undefined, job.id);
        }
        if (job.enabled && job.nextRunAtMs <= at) missed.push(job);
        else if (job.enabled) heap.push({ due: job.nextRunAtMs, id: job.id });
      }
      if (settings.enabled) {
        // One run per job for everything it missed while the daemon was down, however many fires that was.
        for (const job of missed) fire(job, 'catch-up', job.nextRunAtMs);
      } else {
        for (const job of missed) heap.push({ due: job.nextRunAtMs, id: job.id });
      }
      arm();
      logger.info(
        { itemCount: byId.size, step: 'start', reason: missed.length > 0 ? 'catch-up' : undefined },
        `cron scheduler started with ${byId.size} jobs, ${missed.length} catching up`,
      );
    },

    add(input) {
      return exclusive(async () => {
        ensureOpen();
        checkFields(input as unknown as Record<string, unknown>, addSchema);
        const name = input.name.trim();
        if (byName.has(name)) {
          const message = `a job named '${name}' already exists`;
          throw new CronWakegateError('JOB_EXISTS', message, {
            data: { name, issues: [{ path: ['name'], message }] },
          });
        }
        const at = now();
        const resolved = resolve(input.schedule, at);
        const job: JobState = {
          id: randomId(),
          name,
          agentId: input.agentId ?? 'default',
          message: input.message,
          schedule: resolved,
          enabled: input.enabled ?? true,
          timeoutMs: input.timeoutMs,
          wakeGate: input.wakeGate,
          nextRunAtMs: 0,
          lastRunAtMs: undefined,
          lastError: undefined,
          consecutiveErrors: 0,
          createdAtMs: at,
          updatedAtMs: at,
          generation: 0,
          active: false,
          removed: false,
          advanceAfter: undefined,
        };
        job.nextRunAtMs = job.enabled ? (nextFireAfter(resolved, at) ?? 0) : 0;
        await writeJob(job, true);
        byId.set(job.id, job);
        byName.set(job.name, job);
        schedule(job);
        return toPublic(job);
      });
    },

    update(input) {
      return exclusive(async () => {
        ensureOpen();
        const job = find(input.name);
        settleAdvance(job);
        const { name: _name, ...fields } = input;
        checkFields(
          Object.fromEntries(
            Object.entries(fields).filter(([, value]) => value !== undefined && value !== null),
          ),
          addSchema.partial().omit({ name: true }),
        );
        const at = now();
        // Only the edited fields are applied after the write: a run that settles meanwhile keeps its results.
        const edits: Partial<JobState> = { updatedAtMs: at };
        if (input.message !== undefined) edits.message = input.message;
        if (input.agentId !== undefined) edits.agentId = input.agentId;
        if (input.timeoutMs !== undefined) edits.timeoutMs = input.timeoutMs ?? undefined;
        if (input.wakeGate !== undefined) edits.wakeGate = input.wakeGate ?? undefined;
        const enabled = input.enabled ?? job.enabled;
        const replace = input.schedule !== undefined || enabled !== job.enabled;
        if (replace) {
          const nextSchedule = input.schedule !== undefined ? resolve(input.schedule, at) : job.schedule;
          const nextRunAtMs = enabled ? (nextFireAfter(nextSchedule, at) ?? 0) : 0;
          if (enabled && nextRunAtMs === 0) {
            throw CronWakegateError.field(
              'INVALID_SCHEDULE',
              input.schedule ? ['schedule', 'at'] : ['enabled'],
              'the job has no fire left (a one-shot whose time has passed); give a new schedule',
            );
          }
          Object.assign(edits, {
            schedule: nextSchedule,
            enabled,
            nextRunAtMs,
            generation: job.generation + 1,
          });
          if (enabled && !job.enabled) edits.consecutiveErrors = 0;
        }
        await writeJob({ ...job, ...edits }, false);
        Object.assign(job, edits);
        // A fire that settled during the write may have queued older runtime columns; queue the current ones after.
        recorder.record(undefined, job.id);
        if (replace) schedule(job);
        return toPublic(job);
      });
    },

    remove(name) {
      return exclusive(async () => {
        ensureOpen();
        const job = find(name);
        await db.execute('DELETE FROM cron_jobs WHERE id = ?', [job.id]);
        job.removed = true;
        byId.delete(job.id);
        byName.delete(job.name);
        return { id: job.id, name: job.name };
      });
    },

    list() {
      ensureOpen();
      return [...byId.values()].sort((a, b) => a.createdAtMs - b.createdAtMs).map(toPublic);
    },

    get(name) {
      ensureOpen();
      return toPublic(find(name));
    },

    async runs(query) {
      ensureOpen();
      const job = find(query.jobName);
      const limit = Math.min(Math.max(query.limit ?? 50, 1), 1000);
      await recorder.flush();
      const rows = await db.query<Record<string, unknown>>(
        `SELECT * FROM cron_runs WHERE job_id = ?${query.agentId ? ' AND agent_id = ?' : ''}
         ORDER BY ts DESC, rowid DESC LIMIT ?`,
        query.agentId ? [job.id, query.agentId, limit] : [job.id, limit],
      );
      return rows.map(toRun);
    },

    runNow(name) {
      ensureOpen();
      const job = find(name);
      fire(job, 'force', undefined);
      return { jobName: job.name };
    },

    runDue() {
      ensureOpen();
      const at = now();
      flushAdvances();
      const due = [...byId.values()].filter(
        (job) => job.enabled && job.nextRunAtMs > 0 && job.nextRunAtMs <= at,
      );
      for (const job of due) fire(job, 'due', job.nextRunAtMs);
      return { jobNames: due.map((job) => job.name) };
    },

    async idle() {
      while (inflight.size > 0 || limiter.active > 0 || limiter.waiting > 0) {
        await Promise.all([...inflight].map((entry) => entry.done));
        await new Promise((resolve) => setImmediate(resolve));
      }
      flushAdvances();
      await recorder.flush();
    },

    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      if (pruneTimer) clearInterval(pruneTimer);
      await mutations;
      flushAdvances();
      const interruptAll = () => {
        for (const entry of inflight) {
          entry.controller.abort(SHUTDOWN);
          entry.interrupt?.(SHUTDOWN);
        }
      };
      interruptAll();
      while (inflight.size > 0 || limiter.waiting > 0) {
        await Promise.all([...inflight].map((entry) => entry.done));
        interruptAll();
        await new Promise((resolve) => setImmediate(resolve));
      }
      await recorder.flush();
    },

    applyConfig(section) {
      settings = parseSettings(section);
      limiter.limit = settings.maxConcurrentRuns;
      if (!settings.enabled && timer) {
        clearTimeout(timer);
        timer = undefined;
        timerDue = Number.POSITIVE_INFINITY;
      }
      arm();
    },
  };
}

function clip(text: string | undefined, max: number): string | null {
  if (text === undefined) return null;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function toRun(row: Record<string, unknown>): CronRun {
  const run: CronRun = {
    runId: row.run_id as string,
    ts: row.ts as number,
    jobId: row.job_id as string,
    jobName: row.job_name as string,
    agentId: row.agent_id as string,
    status: row.status as CronRun['status'],
    durationMs: row.duration_ms as number,
    trigger: row.trigger as FireTrigger,
  };
  if (run.trigger === 'catch-up') run.catchUp = true;
  if (row.scheduled_at_ms !== null) run.scheduledAtMs = row.scheduled_at_ms as number;
  if (row.skip_reason !== null) run.skipReason = row.skip_reason as 'wake-gate' | 'overlap';
  if (row.summary !== null) run.summary = row.summary as string;
  if (row.error !== null) run.error = row.error as string;
  if (row.tool_calls !== null) run.toolCalls = row.tool_calls as number;
  if (row.est_turns_saved !== null) run.estTurnsSaved = row.est_turns_saved as number;
  if (row.root_run_id !== null) run.rootRunId = row.root_run_id as string;
  if (row.gated === 1 && row.gate_outcome !== null) {
    run.wakeGate = {
      outcome: row.gate_outcome as 'wake' | 'skip' | 'failed-open',
      durationMs: (row.gate_duration_ms as number | null) ?? 0,
    };
    if (row.gate_failure !== null) run.wakeGate.failure = row.gate_failure as 'crash';
    if (row.gate_reason !== null) run.wakeGate.reason = row.gate_reason as string;
  }
  if (row.session_key !== null) run.sessionKey = row.session_key as string;
  if (row.tokens_total !== null) run.tokensTotal = row.tokens_total as number;
  return run;
}
