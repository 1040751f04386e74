import { toFieldIssues } from '@agentd/errors';
import { z } from 'zod';
import type { AddJobInput, CronJob, CronRun, FireTrigger, UpdateJobInput } from '../cron-types.js';
import { agentIdSchema } from '../cron-types.js';
import { CronWakegateError } from '../errors.js';
import { nextFireAfter, type ResolvedSchedule, resolveSchedule, type ScheduleInput } from '../schedule.js';
import { type WakeGate, wakeGateSchema } from '../wake-gate.js';
import { type CronContext, ensureOpen, type JobState } from './cron-context.js';

// The job store: jobs in `cron_jobs` and in memory, their edits, and the run records in `cron_runs`.

const addSchema = z.object({
  name: z.string().trim().min(1).max(200),
  message: z.string().min(1).max(100_000),
  agentId: agentIdSchema.optional(),
  enabled: z.boolean().optional(),
  timeoutMs: z.number().int().min(1000).max(86_400_000).optional(),
  wakeGate: wakeGateSchema.optional(),
  tenant: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/)
    .optional(),
});

/** The job as `cron.list` shows it (settles its pending advance first). */
export function toPublic(ctx: CronContext, job: JobState): CronJob {
  ctx.timer.settleAdvance(job);
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
  if (job.tenant !== undefined) out.tenant = job.tenant;
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
}

/** The job named `name`; throws `JOB_NOT_FOUND`. */
export function find(ctx: CronContext, name: string): JobState {
  const job = ctx.byName.get(name);
  if (!job) throw new CronWakegateError('JOB_NOT_FOUND', `Job not found: ${name}`, { data: { name } });
  return job;
}

function resolve(ctx: CronContext, input: ScheduleInput, at: number): ResolvedSchedule {
  return resolveSchedule(input, { now: at, defaultTimeZone: ctx.settings.defaultTimeZone });
}

/** The fields checked against `schema`; throws `INVALID_JOB` naming each issue. */
export function checkFields<T>(input: unknown, schema: z.ZodType<T>): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = toFieldIssues(result.error.issues);
  throw new CronWakegateError(
    'INVALID_JOB',
    issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
    {
      data: { issues },
    },
  );
}

async function writeJob(ctx: CronContext, job: JobState, insert: boolean) {
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
    job.tenant ?? null,
    job.id,
  ];
  try {
    await ctx.db.execute(
      insert
        ? `INSERT INTO cron_jobs (name, agent_id, message, schedule, schedule_kind, enabled, timeout_ms, wake_gate,
            next_run_at_ms, last_run_at_ms, last_error, consecutive_errors, created_at_ms, updated_at_ms, tenant, id)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
        : `UPDATE cron_jobs SET name = ?, agent_id = ?, message = ?, schedule = ?, schedule_kind = ?, enabled = ?,
            timeout_ms = ?, wake_gate = ?, next_run_at_ms = ?, last_run_at_ms = ?, last_error = ?,
            consecutive_errors = ?, created_at_ms = ?, updated_at_ms = ?, tenant = ? WHERE id = ?`,
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
}

/** A row of `cron_jobs` as the driver returns it. */
export interface JobRow {
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
  tenant: string | null;
}

/** The stored columns of a job row, as the in-memory job holds them. */
export function fromRow(row: JobRow) {
  return {
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
    tenant: row.tenant ?? undefined,
  };
}

/**
 * A job's in-memory state from its row, its run state fresh. The state is set on the object
 * `fromRow` made rather than spread with it into a new one: V8 gave each object built by the
 * spread and the fields after it a hidden class (map) of its own, some 850 bytes a job against
 * some 300 this way (10,000 jobs, measured), which doubled the heap a large schedule takes and
 * slowed the start that loads it.
 */
export function jobState(row: JobRow): JobState {
  const job = fromRow(row) as JobState;
  job.generation = 0;
  job.active = false;
  job.removed = false;
  job.advanceAfter = undefined;
  return job;
}

/** Loads every job of `cron_jobs` into memory. */
export async function loadJobs(ctx: CronContext) {
  const rows = await ctx.db.query<JobRow>('SELECT * FROM cron_jobs');
  for (const row of rows) {
    const job = jobState(row);
    if (ctx.cluster !== undefined) job.stored = { next: job.nextRunAtMs, enabled: job.enabled };
    ctx.byId.set(job.id, job);
    ctx.byName.set(job.name, job);
  }
}

/** Deletes run records older than `runRetentionDays` (logs, never throws). */
export async function prune(ctx: CronContext) {
  if (ctx.settings.runRetentionDays === 0) return;
  try {
    await ctx.db.execute('DELETE FROM cron_runs WHERE ts < ?', [
      ctx.now() - ctx.settings.runRetentionDays * 86_400_000,
    ]);
  } catch (err) {
    ctx.logger.warn(
      { err, hint: 'old cron run records were not pruned; check the database', errorKind: 'resource' },
      'cron run pruning failed',
    );
  }
}

/** Adds a job; throws `INVALID_JOB`, `JOB_EXISTS` or a schedule error. */
export async function addJob(ctx: CronContext, input: AddJobInput): Promise<CronJob> {
  ensureOpen(ctx);
  checkFields(input, addSchema);
  const name = input.name.trim();
  if (ctx.byName.has(name)) {
    const message = `a job named '${name}' already exists`;
    throw new CronWakegateError('JOB_EXISTS', message, {
      data: { name, issues: [{ path: ['name'], message }] },
    });
  }
  const at = ctx.now();
  const resolved = resolve(ctx, input.schedule, at);
  const job: JobState = {
    id: ctx.randomId(),
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
    tenant: input.tenant,
    generation: 0,
    active: false,
    removed: false,
    advanceAfter: undefined,
  };
  job.nextRunAtMs = job.enabled ? (nextFireAfter(resolved, at) ?? 0) : 0;
  await writeJob(ctx, job, true);
  ctx.byId.set(job.id, job);
  ctx.byName.set(job.name, job);
  ctx.timer.schedule(job);
  return toPublic(ctx, job);
}

/** Applies the given fields to a job; a run that settles meanwhile keeps its results. */
export async function updateJob(ctx: CronContext, input: UpdateJobInput): Promise<CronJob> {
  ensureOpen(ctx);
  const job = find(ctx, input.name);
  ctx.timer.settleAdvance(job);
  const { name: _name, ...fields } = input;
  checkFields(
    Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined && value !== null)),
    addSchema.partial().omit({ name: true }),
  );
  const at = ctx.now();
  // Only the edited fields are applied after the write: a run that settles meanwhile keeps its results.
  const edits: Partial<JobState> = { updatedAtMs: at };
  if (input.message !== undefined) edits.message = input.message;
  if (input.agentId !== undefined) edits.agentId = input.agentId;
  if (input.timeoutMs !== undefined) edits.timeoutMs = input.timeoutMs ?? undefined;
  if (input.wakeGate !== undefined) edits.wakeGate = input.wakeGate ?? undefined;
  const enabled = input.enabled ?? job.enabled;
  const replace = input.schedule !== undefined || enabled !== job.enabled;
  if (replace) {
    const nextSchedule = input.schedule !== undefined ? resolve(ctx, input.schedule, at) : job.schedule;
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
  await writeJob(ctx, { ...job, ...edits }, false);
  Object.assign(job, edits);
  // A fire that settled during the write may have queued older runtime columns; queue the current ones after.
  ctx.recorder.record(undefined, job.id);
  if (replace) ctx.timer.schedule(job);
  return toPublic(ctx, job);
}

/** Deletes a job; a run in progress finishes and is recorded. */
export async function removeJob(ctx: CronContext, name: string): Promise<{ id: string; name: string }> {
  ensureOpen(ctx);
  const job = find(ctx, name);
  await ctx.db.execute('DELETE FROM cron_jobs WHERE id = ?', [job.id]);
  job.removed = true;
  ctx.byId.delete(job.id);
  ctx.byName.delete(job.name);
  return { id: job.id, name: job.name };
}

/** A job's run records, newest first, after pending records are committed. */
export async function listRuns(
  ctx: CronContext,
  query: { jobName: string; limit?: number | undefined; agentId?: string | undefined },
): Promise<CronRun[]> {
  ensureOpen(ctx);
  const job = find(ctx, query.jobName);
  const limit = Math.min(Math.max(query.limit ?? 50, 1), 1000);
  await ctx.recorder.flush();
  const rows = await ctx.db.query<Record<string, unknown>>(
    `SELECT * FROM cron_runs WHERE job_id = ? AND status <> 'running'${query.agentId ? ' AND agent_id = ?' : ''}
   ORDER BY ts DESC, ${ctx.db.dialect === 'pg' ? 'run_id' : 'rowid'} DESC LIMIT ?`,
    query.agentId ? [job.id, query.agentId, limit] : [job.id, limit],
  );
  return rows.map(toRun);
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
