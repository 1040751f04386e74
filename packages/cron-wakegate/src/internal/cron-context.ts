import type { AsyncResource } from 'node:async_hooks';
import type { Database } from '@agentd/storage';
import { z } from 'zod';
import { cronSectionSchema } from '../config.js';
import { CronWakegateError } from '../errors.js';
import type { CronLogger } from '../logger.js';
import type { ResolvedSchedule } from '../schedule.js';
import type { AgentTurnRunner, EventSink } from '../types.js';
import type { WakeGate } from '../wake-gate.js';
import type { CronTimer } from './cron-timer.js';
import type { JobRuntimeRow, Recorder } from './fire-recorder.js';
import type { RunLimiter } from './run-limiter.js';
import type { CronSettings as CronSettingsInput } from '../cron-service.js';
import type { FireTrigger } from '../cron-types.js';

/** The service options that are plain data, validated at the boundary. */
export const optionsSchema = cronSectionSchema.omit({ wakeGate: true }).extend({
  wakeGate: z
    .object({
      timeoutMs: z.number().int().min(100).optional(),
      maxOutputBytes: z.number().int().min(64).optional(),
      path: z.string().min(1).optional(),
    })
    .default({}),
});

/** The validated settings of the service. */
export type CronSettings = z.output<typeof optionsSchema>;

/** Validates the settings part of the options; throws `INVALID_OPTIONS`. */
export function parseSettings(options: CronSettingsInput): CronSettings {
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

/** A job as the scheduler holds it in memory. */
export interface JobState {
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
  tenant: string | undefined;
  /** Bumped by every edit, so a run that started before an edit does not undo it. */
  generation: number;
  active: boolean;
  removed: boolean;
  /** Set between a fire and the computation of the job's next time (see deferAdvance). */
  advanceAfter: number | undefined;
  /** Cluster mode: `next_run_at_ms` and `enabled` as last read or written, the expected values of the next write. */
  stored?: { next: number; enabled: boolean } | undefined;
}

/** How a cluster-mode service fires a job on schedule (see `ClusterCron`). */
export interface ClusterFires {
  fire(job: JobState, trigger: FireTrigger, dueAtMs: number): void;
}

/** A run in progress, as `close()` interrupts it. */
export interface InFlight {
  controller: AbortController;
  done: Promise<void>;
  /** Ends the wait for the turn at once (set while a turn runs); cheaper than a listener on the signal. */
  interrupt: ((reason: unknown) => void) | undefined;
}

/** One fire on its way through the executor. */
export interface Fire {
  job: JobState;
  trigger: FireTrigger;
  ts: number;
  scheduledAtMs: number | undefined;
  generation: number;
  /** The id of its run row when one was written at the start (cluster mode). */
  runId?: string | undefined;
}

/**
 * What the scheduler's parts share: the injected dependencies, the jobs in
 * memory, the runs in progress, the fire recorder and the timer.
 */
export interface CronContext {
  readonly db: Database;
  readonly runner: AgentTurnRunner;
  readonly workspaceDir: (agentId: string) => string;
  /** Replaced by `applyConfig`; read it at the time of use. */
  settings: CronSettings;
  readonly now: () => number;
  readonly randomId: () => string;
  readonly logger: CronLogger;
  readonly events: EventSink;
  readonly byId: Map<string, JobState>;
  readonly byName: Map<string, JobState>;
  readonly limiter: RunLimiter;
  readonly inflight: Set<InFlight>;
  recorder: Recorder;
  /** Set in cluster mode (PostgreSQL): scheduled fires go through its compare-and-set. */
  cluster: ClusterFires | undefined;
  readonly timer: CronTimer;
  /**
   * Scheduled fires run in the context the service was created in, not in that of the request that
   * happened to arm the timer, so their log lines never carry a stranger's trace id.
   */
  readonly detached: AsyncResource;
  started: boolean;
  closed: boolean;
}

/** The runtime columns of a live job, for the fire recorder; undefined once removed. */
export function runtimeRow(ctx: CronContext, id: string): JobRuntimeRow | undefined {
  const job = ctx.byId.get(id);
  if (!job || job.removed) return undefined;
  ctx.timer.settleAdvance(job);
  return {
    id,
    enabled: job.enabled,
    nextRunAtMs: job.nextRunAtMs,
    lastRunAtMs: job.lastRunAtMs ?? null,
    lastError: job.lastError ?? null,
    consecutiveErrors: job.consecutiveErrors,
  };
}

/** Throws `CLOSED` unless the service is started and not closed. */
export function ensureOpen(ctx: CronContext): void {
  if (ctx.closed) throw new CronWakegateError('CLOSED', 'the cron service is closed');
  if (!ctx.started) throw new CronWakegateError('CLOSED', 'the cron service is not started');
}
