import type { Database, Statement } from '@agentd/storage';
import type { CronLogger } from '../logger.js';

/** One row of `cron_runs`, in column order of `RUN_COLUMNS`. */
export interface RunRow {
  runId: string;
  jobId: string;
  jobName: string;
  agentId: string;
  ts: number;
  scheduledAtMs: number | null;
  trigger: 'schedule' | 'catch-up' | 'force' | 'due';
  status: 'ok' | 'error' | 'skipped';
  skipReason: 'wake-gate' | 'overlap' | null;
  durationMs: number;
  summary: string | null;
  error: string | null;
  gated: boolean;
  gateOutcome: 'wake' | 'skip' | 'failed-open' | null;
  gateFailure: 'crash' | 'timeout' | 'output-cap' | 'invalid-output' | null;
  gateReason: string | null;
  gateDurationMs: number | null;
  toolCalls: number | null;
  estTurnsSaved: number | null;
  rootRunId: string | null;
  sessionKey: string | null;
  tokensTotal: number | null;
}

/** The runtime columns of a job that a fire changes. */
export interface JobRuntimeRow {
  id: string;
  enabled: boolean;
  nextRunAtMs: number;
  lastRunAtMs: number | null;
  lastError: string | null;
  consecutiveErrors: number;
}

export const RUN_COLUMNS = `run_id, job_id, job_name, agent_id, ts, scheduled_at_ms, trigger, status, skip_reason, duration_ms,
  summary, error, gated, gate_outcome, gate_failure, gate_reason, gate_duration_ms, tool_calls, est_turns_saved,
  root_run_id, session_key, tokens_total`;
export const RUN_TUPLE = `(${new Array(22).fill('?').join(', ')})`;
const JOB_TUPLE = '(?, ?, ?, ?, ?, ?)';
// Rows per statement: one multi-row statement is prepared once, where a statement per row is prepared per row.
const ROWS_PER_STATEMENT = 400;

function insertRuns(runs: RunRow[]): Statement {
  return {
    sql: `INSERT INTO cron_runs (${RUN_COLUMNS}) VALUES ${runs.map(() => RUN_TUPLE).join(', ')}`,
    args: runs.flatMap(runArgs),
  };
}

function updateJobs(jobs: JobRuntimeRow[]): Statement {
  return {
    sql: `UPDATE cron_jobs SET enabled = v.column2, next_run_at_ms = v.column3, last_run_at_ms = v.column4,
            last_error = v.column5, consecutive_errors = v.column6
          FROM (VALUES ${jobs.map(() => JOB_TUPLE).join(', ')}) AS v
          WHERE cron_jobs.id = v.column1`,
    args: jobs.flatMap((job) => [
      job.id,
      job.enabled ? 1 : 0,
      job.nextRunAtMs,
      job.lastRunAtMs,
      job.lastError,
      job.consecutiveErrors,
    ]),
  };
}

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += ROWS_PER_STATEMENT) {
    out.push(items.slice(start, start + ROWS_PER_STATEMENT));
  }
  return out;
}

/** Where fires are recorded: {@link FireRecorder} in process, the cluster recorder on PostgreSQL. */
export interface Recorder {
  /** Queues a run row; `jobId` marks that job's runtime state for the same write. */
  record(run: RunRow | undefined, jobId: string): void;
  /** Resolves once everything recorded so far is written (or its failure logged). */
  flush(): Promise<void>;
}

/**
 * Writes fires in batches: each flush is one transaction holding the run rows and the
 * current runtime state of every job they touched, so a job row and its newest run never
 * disagree on disk. A burst of a thousand fires costs a handful of commits, not thousands.
 */
export class FireRecorder implements Recorder {
  readonly #db: Database;
  readonly #jobState: (id: string) => JobRuntimeRow | undefined;
  readonly #logger: CronLogger;
  readonly #maxBatch: number;
  readonly #maxDelayMs: number;
  #runs: RunRow[] = [];
  #dirty = new Set<string>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(options: {
    db: Database;
    jobState: (id: string) => JobRuntimeRow | undefined;
    logger: CronLogger;
    maxBatch?: number;
    maxDelayMs?: number;
  }) {
    this.#db = options.db;
    this.#jobState = options.jobState;
    this.#logger = options.logger;
    this.#maxBatch = options.maxBatch ?? 500;
    this.#maxDelayMs = options.maxDelayMs ?? 20;
  }

  /** Queues a run row; `jobId` marks that job's runtime state for the same transaction. */
  record(run: RunRow | undefined, jobId: string): void {
    if (run) this.#runs.push(run);
    this.#dirty.add(jobId);
    if (this.#runs.length + this.#dirty.size >= this.#maxBatch) {
      void this.flush();
    } else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => void this.flush(), this.#maxDelayMs);
      this.#timer.unref?.();
    }
  }

  /** Writes everything queued so far; resolves once it is committed (or the failure logged). */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const runs = this.#runs;
    const dirty = this.#dirty;
    this.#runs = [];
    this.#dirty = new Set();
    this.#flushing = this.#flushing.then(async () => {
      if (runs.length === 0 && dirty.size === 0) return;
      const jobs: JobRuntimeRow[] = [];
      for (const id of dirty) {
        const job = this.#jobState(id);
        if (job) jobs.push(job);
      }
      const statements: Statement[] = [...chunks(runs).map(insertRuns), ...chunks(jobs).map(updateJobs)];
      try {
        await this.#db.batch(statements);
      } catch (err) {
        this.#logger.error(
          {
            err,
            itemCount: runs.length,
            hint: 'run records of these fires were not stored; check disk space and the database file',
            errorKind: 'resource',
          },
          'cron run records not written',
        );
      }
    });
    return this.#flushing;
  }
}

export function runArgs(run: RunRow) {
  return [
    run.runId,
    run.jobId,
    run.jobName,
    run.agentId,
    run.ts,
    run.scheduledAtMs,
    run.trigger,
    run.status,
    run.skipReason,
    run.durationMs,
    run.summary,
    run.error,
    run.gated ? 1 : 0,
    run.gateOutcome,
    run.gateFailure,
    run.gateReason,
    run.gateDurationMs,
    run.toolCalls,
    run.estTurnsSaved,
    run.rootRunId,
    run.sessionKey,
    run.tokensTotal,
  ];
}
