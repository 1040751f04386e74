import { WAKE_GATE_SKIP_SUMMARY, type FireTrigger } from '../cron-types.js';
import { nextFireAfter } from '../schedule.js';
import { runWakeGate, type WakeGateResult } from '../wake-gate.js';
import type { CronContext, Fire, InFlight, JobState } from './cron-context.js';
import type { RunRow } from './fire-recorder.js';

// A fire's way through: overlap check, a slot in the limiter, the wake-gate,
// the model turn under its time limit, then the outcome applied to the job
// (errors, backoff, one-shot completion) and recorded.

const MAX_TEXT = 2000;

/** The abort reason of runs that `close()` interrupts. */
export const SHUTDOWN = Symbol('shutdown');

class TimeoutError extends Error {}

/** Fires `job` now; a fire while the previous run is in progress is recorded as skipped. */
export function fire(
  ctx: CronContext,
  job: JobState,
  trigger: FireTrigger,
  scheduledAtMs: number | undefined,
): void {
  if (ctx.cluster !== undefined && trigger !== 'force') {
    // Every instance may try a scheduled fire; the compare-and-set on the due time picks one.
    ctx.cluster.fire(job, trigger, scheduledAtMs ?? job.nextRunAtMs);
    return;
  }
  const ts = ctx.now();
  const consumes = trigger !== 'force';
  if (job.active) {
    ctx.timer.settleAdvance(job);
    if (consumes) ctx.timer.advance(job, ts);
    skipOverlap(ctx, job, trigger, ts, scheduledAtMs);
    return;
  }
  launch(ctx, { job, trigger, ts, scheduledAtMs, generation: job.generation });
  if (consumes) ctx.timer.deferAdvance(job, ts);
}

/** Records a fire that did not run because a run of the job is still in progress. */
export function skipOverlap(
  ctx: CronContext,
  job: JobState,
  trigger: FireTrigger,
  ts: number,
  scheduledAtMs: number | undefined,
): void {
  const run = baseRun(ctx, job, trigger, ts, scheduledAtMs);
  run.status = 'skipped';
  run.skipReason = 'overlap';
  run.summary = 'skipped: the previous run of this job is still in progress';
  finishRecord(ctx, job, run);
}

/** Starts a fire's run (in a limiter slot); the executor starts before the next fire time is computed. */
export function launch(ctx: CronContext, entry: Fire): void {
  entry.job.active = true;
  ctx.limiter.run(() => execute(ctx, entry));
}

const baseRun = (
  ctx: CronContext,
  job: JobState,
  trigger: FireTrigger,
  ts: number,
  scheduledAtMs: number | undefined,
  runId?: string,
): RunRow => ({
  runId: runId ?? ctx.randomId(),
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

async function execute(ctx: CronContext, entry: Fire): Promise<void> {
  const { job } = entry;
  const controller = new AbortController();
  let release: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  const handle: InFlight = { controller, done, interrupt: undefined };
  ctx.inflight.add(handle);
  const run = baseRun(ctx, job, entry.trigger, entry.ts, entry.scheduledAtMs, entry.runId);
  const began = ctx.now();
  let interrupted = false;
  try {
    // Fires still waiting for a slot when the service closes never start their turn.
    if (ctx.closed) throw SHUTDOWN;
    let gate: WakeGateResult | undefined;
    if (job.wakeGate) {
      gate = await runWakeGate(job.wakeGate, {
        cwd: ctx.workspaceDir(job.agentId),
        extraEnv: {
          AGENTD_JOB_ID: job.id,
          AGENTD_JOB_NAME: job.name,
          AGENTD_AGENT_ID: job.agentId,
          AGENTD_FIRE_TS: String(entry.ts),
        },
        path: ctx.settings.wakeGate.path,
        timeoutMs: ctx.settings.wakeGate.timeoutMs,
        maxOutputBytes: ctx.settings.wakeGate.maxOutputBytes,
        signal: controller.signal,
        now: ctx.now,
      });
      run.gated = true;
      run.gateOutcome = gate.outcome;
      run.gateFailure = gate.failure ?? null;
      run.gateReason = clip(gate.reason ?? gate.detail, 500);
      run.gateDurationMs = gate.durationMs;
      if (controller.signal.reason === SHUTDOWN) throw SHUTDOWN;
      if (gate.outcome === 'failed-open') {
        ctx.logger.warn(
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
    const timeoutMs = job.timeoutMs ?? ctx.settings.runTimeoutMs;
    const result = await withTimeout(
      ctx.runner.runTurn({
        agentId: job.agentId,
        message,
        // A tenant's job runs in that tenant's session space.
        sessionKey: job.tenant === undefined ? `cron:${job.id}` : `${job.tenant}:cron:${job.id}`,
        ...(job.tenant === undefined ? {} : { memoryTenant: job.tenant }),
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
    run.durationMs = ctx.now() - began;
    settle(ctx, entry, run, interrupted);
    ctx.inflight.delete(handle);
    release();
  }
}

/** Applies a finished run to its job (errors, backoff, one-shot completion) and records both. */
function settle(ctx: CronContext, entry: Fire, run: RunRow, interrupted: boolean): void {
  const { job } = entry;
  job.active = false;
  if (job.removed) {
    finishRecord(ctx, job, run);
    return;
  }
  const ownsSchedule = entry.trigger !== 'force' && entry.generation === job.generation;
  if (interrupted) {
    ctx.timer.settleAdvance(job);
    // Put the fire back so the next start runs it as a catch-up. In a cluster the slot already
    // has its run row (recorded as interrupted), so it is not run again.
    if (ownsSchedule && ctx.cluster === undefined) {
      job.nextRunAtMs = entry.scheduledAtMs ?? entry.ts;
    }
    finishRecord(ctx, job, run);
    return;
  }
  job.lastRunAtMs = entry.ts;
  if (run.status === 'error') {
    // Backoff compares with the next regular fire, so that must be known now.
    ctx.timer.settleAdvance(job);
    job.consecutiveErrors += 1;
    job.lastError = run.error ?? 'unknown error';
    if (ownsSchedule) {
      const backoff =
        ctx.settings.retryBackoffMs[
          Math.min(job.consecutiveErrors, ctx.settings.retryBackoffMs.length) - 1
        ] ?? 0;
      const retryAt = ctx.now() + backoff;
      if (job.schedule.kind === 'once') {
        if (job.consecutiveErrors <= ctx.settings.onceMaxRetries) job.nextRunAtMs = retryAt;
        else {
          job.enabled = false;
          job.nextRunAtMs = 0;
        }
      } else if (job.nextRunAtMs > 0 && job.nextRunAtMs < retryAt) {
        job.nextRunAtMs = nextFireAfter(job.schedule, retryAt - 1) ?? 0;
        if (job.nextRunAtMs === 0) job.enabled = false;
      }
      ctx.timer.schedule(job);
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
  finishRecord(ctx, job, run);
}

function finishRecord(ctx: CronContext, job: JobState, run: RunRow): void {
  ctx.recorder.record(run, job.id);
  ctx.events.emit('cron:fired', {
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
    ctx.logger.warn(
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

/** Aborts every run in progress with {@link SHUTDOWN}. */
export function interruptRuns(ctx: CronContext): void {
  for (const entry of ctx.inflight) {
    entry.controller.abort(SHUTDOWN);
    entry.interrupt?.(SHUTDOWN);
  }
}

function clip(text: string | undefined, max: number): string | null {
  if (text === undefined) return null;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
