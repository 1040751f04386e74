import { z } from 'zod';
import type { ScheduleInput } from './schedule.js';
import type { WakeGate } from './wake-gate.js';

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
  /** Set for a job of a tenant: its turns run in the session `<tenant>:cron:<id>`. */
  tenant?: string;
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
  /** The tenant the job belongs to (a tenant-bound caller's); its turns run in that tenant's session. */
  tenant?: string | undefined;
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
