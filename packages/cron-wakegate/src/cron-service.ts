import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Coordinator, Database } from '@agentd/storage';
import { CronWakegateError } from './errors.js';
import type { AddJobInput, CronJob, CronRun, UpdateJobInput } from './cron-types.js';
import {
  type CronContext,
  ensureOpen,
  type JobState,
  parseSettings,
  runtimeRow,
} from './internal/cron-context.js';
import { CronTimer } from './internal/cron-timer.js';
import { FireRecorder } from './internal/fire-recorder.js';
import { fire, interruptRuns } from './internal/fire-runner.js';
import {
  addJob,
  find,
  listRuns,
  loadJobs,
  prune,
  removeJob,
  toPublic,
  updateJob,
} from './internal/job-store.js';
import { RunLimiter } from './internal/run-limiter.js';
import { type CronLogger, noopLogger } from './logger.js';
import { ClusterCron, refuseUncoordinated } from './internal/cluster-cron.js';
import { cronWakegateMigrationSet, MIGRATION_PACKAGE } from './migrations.js';
import { nextFireAfter } from './schedule.js';
import { type AgentTurnRunner, type EventSink, noopEventSink } from './types.js';

/** Options of {@link createCronService}. */
export interface CronServiceOptions {
  /** The shared database (libsql, or PostgreSQL in cluster mode); the service migrates its tables on `start()`. */
  db: Database;
  /**
   * The cluster coordinator (`openCoordination` on the same database). In `postgres` mode every
   * instance schedules every job and each fire is a compare-and-set on its due time, so exactly
   * one instance runs each (job, scheduled time); edits reach the other instances over the bus.
   * Absent or `single`: the in-process scheduler.
   */
  coordinator?: Coordinator | undefined;
  /**
   * Cluster mode: how long a run's `running` row stays owned without renewal (renewed every
   * third of it); a run whose instance stops renewing is recorded as interrupted.
   * @default 10000
   */
  runLeaseMs?: number | undefined;
  /**
   * Cluster mode: whether this instance may fire a scheduled job of `agentId`. An agent whose
   * tools work on one host (its home instance) has its fires claimed only there: the other
   * instances leave the slot to it, and learn its next due time from the row. Forced runs
   * (`runNow`) run where they are asked. @default every job fires on every instance
   */
  firesHere?: ((agentId: string) => boolean | Promise<boolean>) | undefined;
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

/**
 * Creates the scheduler. Call `start()` before use. Jobs of kind `cron` (croner, IANA zones,
 * DST as croner resolves it), `interval` (anchored at creation, so fires keep their phase)
 * and `once` live in `cron_jobs`; every fire (ran, skipped, failed open, errored) is a row of
 * `cron_runs`.
 */
export function createCronService(options: CronServiceOptions): CronService {
  const { db, runner, workspaceDir } = options;
  const settings = parseSettings(options);
  const now = options.now ?? Date.now;
  const randomId = options.randomId ?? randomUUID;
  const logger = options.logger ?? noopLogger;
  const events = options.events ?? noopEventSink;

  const byId: CronContext['byId'] = new Map();
  // The timer and the recorder call back into the context only after start().
  // Scheduled fires run in the context the service was created in, not in that of the request that
  // happened to arm the timer, so their log lines never carry a stranger's trace id.
  const detached = new AsyncResource('agentd.cron');
  const timer = new CronTimer({
    byId,
    now,
    detached,
    canFire: () => !ctx.closed && ctx.started && ctx.settings.enabled,
    fire: (job, trigger, scheduledAtMs) => fire(ctx, job, trigger, scheduledAtMs),
  });
  const ctx: CronContext = {
    db,
    runner,
    workspaceDir,
    settings,
    now,
    randomId,
    logger,
    events,
    byId,
    byName: new Map(),
    limiter: new RunLimiter(settings.maxConcurrentRuns),
    inflight: new Set(),
    // Large batches: a burst of fires is written in one transaction after it, not in slices during it.
    recorder: new FireRecorder({ db, logger, jobState: (id) => runtimeRow(ctx, id), maxBatch: 5000 }),
    timer,
    detached,
    cluster: undefined,
    started: false,
    closed: false,
  };
  const cluster =
    options.coordinator?.mode === 'postgres'
      ? new ClusterCron(ctx, options.coordinator, options.runLeaseMs ?? 10_000, options.firesHere)
      : undefined;
  if (cluster !== undefined) {
    ctx.cluster = cluster;
    // Fires are written at once, each under its own guard, instead of in batches.
    ctx.recorder = cluster;
  }
  const { inflight, limiter } = ctx;
  const recorder = ctx.recorder;
  let pruneTimer: ReturnType<typeof setInterval> | undefined;
  let mutations: Promise<unknown> = Promise.resolve();

  /** Serialises edits so name checks and writes of two calls never interleave. */
  const exclusive = <T>(work: () => Promise<T>): Promise<T> => {
    // In a cluster an edit starts from the jobs as stored, and the other instances reload after it.
    const edit =
      cluster === undefined
        ? work
        : async () => {
            await cluster.sync();
            try {
              return await work();
            } finally {
              await cluster.changed();
            }
          };
    const result = mutations.then(edit);
    mutations = result.catch(() => undefined);
    return result;
  };

  return {
    async start() {
      if (ctx.closed) throw new CronWakegateError('CLOSED', 'the cron service is closed');
      if (ctx.started) return;
      refuseUncoordinated(db, options.coordinator, 'cron service');
      await db.migrate(MIGRATION_PACKAGE, cronWakegateMigrationSet);
      await loadJobs(ctx);
      await prune(ctx);
      pruneTimer = setInterval(() => void prune(ctx), 3_600_000);
      pruneTimer.unref?.();
      ctx.started = true;
      cluster?.start();
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
        else if (job.enabled) timer.enqueue(job.nextRunAtMs, job.id);
      }
      if (settings.enabled) {
        // One run per job for everything it missed while the daemon was down, however many fires that
        // was. In a cluster the catch-up goes through the same compare-and-set as any fire.
        for (const job of missed) fire(ctx, job, 'catch-up', job.nextRunAtMs);
      } else {
        for (const job of missed) timer.enqueue(job.nextRunAtMs, job.id);
      }
      timer.arm();
      logger.info(
        { itemCount: byId.size, step: 'start', reason: missed.length > 0 ? 'catch-up' : undefined },
        `cron scheduler started with ${byId.size} jobs, ${missed.length} catching up`,
      );
    },

    add(input) {
      return exclusive(() => addJob(ctx, input));
    },

    update(input) {
      return exclusive(() => updateJob(ctx, input));
    },

    remove(name) {
      return exclusive(() => removeJob(ctx, name));
    },

    list() {
      ensureOpen(ctx);
      return [...byId.values()]
        .sort((a, b) => a.createdAtMs - b.createdAtMs)
        .map((job) => toPublic(ctx, job));
    },

    get(name) {
      ensureOpen(ctx);
      return toPublic(ctx, find(ctx, name));
    },

    runs(query) {
      return listRuns(ctx, query);
    },

    runNow(name) {
      ensureOpen(ctx);
      const job = find(ctx, name);
      fire(ctx, job, 'force', undefined);
      return { jobName: job.name };
    },

    runDue() {
      ensureOpen(ctx);
      const at = now();
      timer.flushAdvances();
      const due = [...byId.values()].filter(
        (job) => job.enabled && job.nextRunAtMs > 0 && job.nextRunAtMs <= at,
      );
      for (const job of due) fire(ctx, job, 'due', job.nextRunAtMs);
      return { jobNames: due.map((job) => job.name) };
    },

    async idle() {
      do {
        while (inflight.size > 0 || limiter.active > 0 || limiter.waiting > 0) {
          await Promise.all([...inflight].map((entry) => entry.done));
          await new Promise((resolve) => setImmediate(resolve));
        }
        timer.flushAdvances();
        // In a cluster this also waits for fires still at their compare-and-set, which may start runs.
        await recorder.flush();
      } while (inflight.size > 0 || limiter.active > 0 || limiter.waiting > 0);
    },

    applyConfig(section) {
      ctx.settings = parseSettings(section);
      limiter.limit = ctx.settings.maxConcurrentRuns;
      if (!ctx.settings.enabled) timer.disarm();
      timer.arm();
    },

    async close() {
      if (ctx.closed) return;
      ctx.closed = true;
      timer.stop();
      cluster?.stop();
      if (pruneTimer) clearInterval(pruneTimer);
      await mutations;
      timer.flushAdvances();
      interruptRuns(ctx);
      while (inflight.size > 0 || limiter.waiting > 0) {
        await Promise.all([...inflight].map((entry) => entry.done));
        interruptRuns(ctx);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await recorder.flush();
    },
  };
}
