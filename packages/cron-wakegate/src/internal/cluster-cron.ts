import { type Coordinator, type Database, isStorageError, nowMs } from '@agentd/storage';
import { CronWakegateError } from '../errors.js';
import type { FireTrigger } from '../cron-types.js';
import { nextFireAfter } from '../schedule.js';
import type { ClusterFires, CronContext, JobState } from './cron-context.js';
import { type Recorder, RUN_COLUMNS, RUN_TUPLE, type RunRow, runArgs } from './fire-recorder.js';
import { launch, skipOverlap } from './fire-runner.js';
import { fromRow, type JobRow, jobState } from './job-store.js';

const NOW = nowMs('pg');
/**
 * On PostgreSQL the scheduler needs the cluster coordinator: without it every instance would
 * fire every job, so a start is refused rather than silently run as a single instance.
 */
export function refuseUncoordinated(db: Database, coordinator: Coordinator | undefined, what: string): void {
  if (db.dialect === 'pg' && coordinator?.mode !== 'postgres') {
    throw new CronWakegateError(
      'INVALID_OPTIONS',
      `the ${what} on PostgreSQL needs options.coordinator (openCoordination on the same database)`,
    );
  }
}

/** The bus topic of job edits: every instance reloads the jobs on it. */
export const JOBS_TOPIC = 'cron.jobs';
const INTERRUPTED = 'interrupted: the instance running it stopped renewing its lease';
const RESULT_COLUMNS = [
  'status',
  'skip_reason',
  'duration_ms',
  'summary',
  'error',
  'gated',
  'gate_outcome',
  'gate_failure',
  'gate_reason',
  'gate_duration_ms',
  'tool_calls',
  'est_turns_saved',
  'root_run_id',
  'session_key',
  'tokens_total',
];

/**
 * The scheduler's cluster mode (PostgreSQL). Every instance keeps its timer heap as a local
 * alarm, and every instance may fire a due job: the fire is a compare-and-set of the job's
 * `next_run_at_ms` from the due time it saw to the next one, so exactly one instance wins each
 * (job, scheduled time), and the unique run row of that slot guards it again. No leader. A run
 * in progress is a `running` row owned under a lease that its instance renews; a fire that
 * finds a live one is skipped as an overlap, and an expired one is recorded as interrupted.
 * Results and job state are written at once (no batching), state changes of `next_run_at_ms`
 * again as a compare-and-set. Job edits are announced on the bus, and each instance reloads
 * the jobs on a notice and on its tick (the backstop).
 */
export class ClusterCron implements ClusterFires, Recorder {
  readonly #ctx: CronContext;
  readonly #coordinator: Coordinator;
  readonly #leaseMs: number;
  readonly #firesHere: ((agentId: string) => boolean | Promise<boolean>) | undefined;
  readonly #pending = new Set<Promise<void>>();
  // Writes of one job in order, of different jobs in parallel: a run's record lands at once, so
  // the next slot's overlap check does not mistake a finished run for one in progress.
  readonly #writes = new Map<string, Promise<void>>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #unwatch: (() => void) | undefined;
  #syncing: Promise<void> | undefined;

  constructor(
    ctx: CronContext,
    coordinator: Coordinator,
    leaseMs: number,
    firesHere?: (agentId: string) => boolean | Promise<boolean>,
  ) {
    this.#ctx = ctx;
    this.#coordinator = coordinator;
    this.#leaseMs = leaseMs;
    this.#firesHere = firesHere;
  }

  /** Starts the tick (renew own runs, sweep expired ones, reload jobs) and the bus watch. */
  start(): void {
    this.#timer = setInterval(() => void this.#tick(), Math.max(50, Math.floor(this.#leaseMs / 3)));
    this.#timer.unref?.();
    this.#unwatch = this.#coordinator.bus.watch(JOBS_TOPIC, () => this.sync());
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#unwatch?.();
  }

  fire(job: JobState, trigger: FireTrigger, dueAtMs: number): void {
    const work = this.#ctx.detached.runInAsyncScope(() => this.#fire(job, trigger, dueAtMs));
    const tracked = work.catch((err: unknown) =>
      this.#ctx.logger.error(
        {
          err,
          jobId: job.id,
          hint: 'check that the PostgreSQL server is reachable',
          errorKind: 'dependency',
        },
        'cron fire failed before its run started',
      ),
    );
    this.#pending.add(tracked);
    void tracked.finally(() => this.#pending.delete(tracked));
  }

  async #fire(job: JobState, trigger: FireTrigger, due: number): Promise<void> {
    const ctx = this.#ctx;
    if (this.#firesHere !== undefined && !(await this.#firesHere(job.agentId))) {
      // Its home fires it, and the next reload brings the moved due time. Asked again after a
      // lease time while the slot is still open, so a home that died is taken over here.
      const retry = setTimeout(() => {
        if (!job.removed && job.nextRunAtMs === due && this.#timer !== undefined)
          this.fire(job, trigger, due);
      }, this.#leaseMs);
      retry.unref?.();
      return;
    }
    const ts = ctx.now();
    const next = job.schedule.kind === 'once' ? 0 : (nextFireAfter(job.schedule, ts) ?? 0);
    const fence = await this.#coordinator.casDue({
      table: 'cron_jobs',
      dueColumn: 'next_run_at_ms',
      id: job.id,
      due,
      next,
      where: 'enabled = 1',
    });
    if (fence === undefined) {
      // Another instance fired this slot (or the job was edited): learn where it stands now.
      await this.sync();
      return;
    }
    job.nextRunAtMs = next;
    job.stored = { next, enabled: job.enabled };
    // A 7-field expression past its last year: nothing left to fire (written with the run's record).
    if (next === 0 && job.schedule.kind !== 'once') job.enabled = false;
    ctx.timer.schedule(job);
    if (job.active) {
      skipOverlap(ctx, job, trigger, ts, due);
      return;
    }
    const runId = ctx.randomId();
    let started: boolean;
    try {
      // The run row of this slot, written now as `running` under this instance's lease, unless
      // a live run of the job (on any instance) is in progress.
      const result = await ctx.db.execute(
        `INSERT INTO cron_runs (run_id, job_id, job_name, agent_id, ts, scheduled_at_ms, trigger, status, duration_ms,
           owner, lease_until, fence)
         SELECT ?, ?, ?, ?, ?, ?, ?, 'running', 0, ?, ${NOW} + ?, ?
         WHERE NOT EXISTS (SELECT 1 FROM cron_runs WHERE job_id = ? AND status = 'running' AND lease_until >= ${NOW})`,
        [
          runId,
          job.id,
          job.name,
          job.agentId,
          ts,
          due,
          trigger,
          this.#coordinator.instanceId,
          this.#leaseMs,
          fence,
          job.id,
        ],
      );
      started = result.rowsAffected === 1;
    } catch (error) {
      // The slot already has its run row: it was fired before (its due time was put back).
      if (isStorageError(error) && error.code === 'CONSTRAINT') return;
      throw error;
    }
    if (!started || job.active) {
      if (started) await this.#drop(runId);
      skipOverlap(ctx, job, trigger, ts, due);
      return;
    }
    launch(ctx, { job, trigger, ts, scheduledAtMs: due, generation: job.generation, runId });
  }

  async #drop(runId: string): Promise<void> {
    await this.#ctx.db.execute('DELETE FROM cron_runs WHERE run_id = ? AND owner = ?', [
      runId,
      this.#coordinator.instanceId,
    ]);
  }

  record(run: RunRow | undefined, jobId: string): void {
    const write = (this.#writes.get(jobId) ?? Promise.resolve())
      .then(() => this.#write(run, jobId))
      .catch((err: unknown) =>
        this.#ctx.logger.error(
          {
            err,
            jobId,
            hint: 'the record of this fire was not stored; check that the PostgreSQL server is reachable',
            errorKind: 'dependency',
          },
          'cron run record not written',
        ),
      );
    this.#writes.set(jobId, write);
    void write.then(() => {
      if (this.#writes.get(jobId) === write) this.#writes.delete(jobId);
    });
  }

  async flush(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
    await Promise.all([...this.#writes.values()]);
  }

  async #write(run: RunRow | undefined, jobId: string): Promise<void> {
    const { db, logger } = this.#ctx;
    if (run !== undefined) {
      // The final record replaces the `running` row only while this instance still owns it.
      const result = await db.execute(
        `INSERT INTO cron_runs (${RUN_COLUMNS}) VALUES ${RUN_TUPLE}
         ON CONFLICT (run_id) DO UPDATE SET ${RESULT_COLUMNS.map((column) => `${column} = excluded.${column}`).join(', ')},
           owner = NULL, lease_until = NULL
         WHERE cron_runs.owner = ?`,
        [...runArgs(run), this.#coordinator.instanceId],
      );
      if (result.rowsAffected === 0) {
        logger.warn(
          {
            jobId,
            hint: 'this instance was paused past the run lease; the run was recorded as interrupted by a peer',
            errorKind: 'dependency',
          },
          'stale cron run record rejected',
        );
      }
    }
    await this.#writeJob(jobId);
  }

  async #writeJob(jobId: string): Promise<void> {
    const job = this.#ctx.byId.get(jobId);
    if (job === undefined || job.removed) return;
    this.#ctx.timer.settleAdvance(job);
    const results = [job.lastRunAtMs ?? null, job.lastError ?? null, job.consecutiveErrors];
    const stored = job.stored;
    if (stored !== undefined && (stored.next !== job.nextRunAtMs || stored.enabled !== job.enabled)) {
      // A change of the due time (backoff, a one-shot done) is a compare-and-set as well.
      const moved = await this.#ctx.db.execute(
        `UPDATE cron_jobs SET last_run_at_ms = ?, last_error = ?, consecutive_errors = ?, next_run_at_ms = ?,
           enabled = ?, fence = fence + 1
         WHERE id = ? AND next_run_at_ms = ? AND enabled = ?`,
        [...results, job.nextRunAtMs, job.enabled ? 1 : 0, job.id, stored.next, stored.enabled ? 1 : 0],
      );
      if (moved.rowsAffected === 1) {
        job.stored = { next: job.nextRunAtMs, enabled: job.enabled };
        return;
      }
    }
    await this.#ctx.db.execute(
      'UPDATE cron_jobs SET last_run_at_ms = ?, last_error = ?, consecutive_errors = ? WHERE id = ?',
      [...results, job.id],
    );
    if (stored !== undefined && (stored.next !== job.nextRunAtMs || stored.enabled !== job.enabled)) {
      await this.sync();
    }
  }

  /** Reloads every job from `cron_jobs`: new ones are added, removed ones dropped, moved ones rescheduled. */
  sync(): Promise<void> {
    this.#syncing ??= this.#reload().finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }

  async #reload(): Promise<void> {
    const ctx = this.#ctx;
    const rows = await ctx.db.query<JobRow>('SELECT * FROM cron_jobs');
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.id);
      const fields = fromRow(row);
      let job = ctx.byId.get(row.id);
      const before = job?.nextRunAtMs;
      if (job === undefined) {
        job = jobState(row);
        ctx.byId.set(job.id, job);
        ctx.byName.set(job.name, job);
      } else {
        ctx.timer.settleAdvance(job);
        const replaced = job.enabled !== fields.enabled || JSON.stringify(job.schedule) !== row.schedule;
        Object.assign(job, fields);
        if (replaced) job.generation += 1;
      }
      job.stored = { next: fields.nextRunAtMs, enabled: fields.enabled };
      // Only a moved due time is queued again: a duplicate heap entry would fire the slot twice here.
      if (job.nextRunAtMs !== before) ctx.timer.schedule(job);
    }
    for (const [id, job] of ctx.byId) {
      if (seen.has(id)) continue;
      job.removed = true;
      ctx.byId.delete(id);
      if (ctx.byName.get(job.name) === job) ctx.byName.delete(job.name);
    }
  }

  /** After an edit: reload, and tell the other instances to reload. */
  async changed(): Promise<void> {
    await this.sync();
    await this.#coordinator.bus.publish(JOBS_TOPIC, null);
  }

  async #tick(): Promise<void> {
    const { db, logger } = this.#ctx;
    try {
      await db.execute(
        `UPDATE cron_runs SET lease_until = ${NOW} + ? WHERE owner = ? AND status = 'running'`,
        [this.#leaseMs, this.#coordinator.instanceId],
      );
      await db.execute(
        `UPDATE cron_runs SET status = 'error', error = ?, owner = NULL, lease_until = NULL
         WHERE status = 'running' AND lease_until < ${NOW}`,
        [INTERRUPTED],
      );
      await this.sync();
    } catch (err) {
      logger.warn(
        { err, hint: 'check that the PostgreSQL server is reachable', errorKind: 'dependency' },
        'cron cluster tick failed',
      );
    }
  }
}
