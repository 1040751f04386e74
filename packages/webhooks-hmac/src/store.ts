import type { Injected } from '@agentd/contracts';
import { z } from 'zod';
import type { WebhookActionPlan } from './action.js';
import { WebhookError } from './errors.js';
import type { WebhookOutcome } from './handler.js';
import { OutcomeCounters } from './internal/outcome-counters.js';
import { parseWith } from './internal/validate.js';
import { noopLogger, type WebhookLogger } from './logger.js';
import type { WebhookCoordinator } from './cluster.js';
import { type ClaimWhere, jobClaims } from './internal/job-claims.js';
import type { WebhookDialect } from './migrations.js';

export {
  type WebhookDialect,
  type WebhookMigration,
  type WebhookMigrationSet,
  webhookMigrationSet,
  webhookMigrations,
  webhookPgMigrations,
} from './migrations.js';

/** A value bound to a statement parameter. */
export type WebhookSqlValue = string | number | null;

/** The statement-running subset of a libsql handle (an `@agentd/storage` Database or Transaction fits). */
export interface WebhookQueryable {
  execute(
    statement: string,
    args?: WebhookSqlValue[],
  ): Promise<{ rows: Record<string, unknown>[]; rowsAffected: number }>;
}

/**
 * The database the store needs: statements and write transactions. Declared here so the
 * package does not depend on a driver; `@agentd/storage`'s `Database` satisfies it.
 */
export interface WebhookDatabase extends WebhookQueryable {
  /** `pg` for PostgreSQL, where a few statements differ. @default 'libsql' */
  readonly dialect?: WebhookDialect | undefined;
  transaction<T>(callback: (tx: WebhookQueryable) => Promise<T>): Promise<T>;
}

/** Default idempotency window: the contract's 24 hours. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * Options of {@link createWebhookStore}.
 * From {@link Injected}: `logger` and `now`.
 */
export interface WebhookStoreOptions extends Pick<Injected<WebhookLogger>, 'logger' | 'now'> {
  /** The migrated database (see {@link webhookMigrations}). */
  db: WebhookDatabase;
  /** How long a delivery id answers "duplicate". @default 86400000 (24 h) */
  idempotencyWindowMs?: number;
  /** How long finished jobs and consumed wakes are kept before {@link WebhookStore.prune} drops them. @default 604800000 (7 days) */
  retentionMs?: number;
  /** How often counted outcomes are written; they are summed in memory between writes. @default 1000 */
  counterFlushMs?: number;
  /**
   * The cluster coordinator (`@agentd/storage`'s `openCoordination`). In `postgres` mode the
   * queue is shared: a claim is an owned row with a lease, and a write after it applies only at
   * the claim's fence. Absent or `single`: claims work in process, as on libsql.
   */
  coordinator?: WebhookCoordinator | undefined;
  /** How long a cluster claim lasts without renewal (the drainer renews it while the turn runs). @default 10000 */
  jobLeaseMs?: number;
  /**
   * Cluster mode: an extra condition (SQL over a `webhook_agent_queue` row, `?` placeholders)
   * on the jobs this instance claims; the daemon leaves a homed agent's jobs to its home.
   * @default every job
   */
  claimWhere?: ClaimWhere | undefined;
}

const storeOptionsSchema = z.object({
  idempotencyWindowMs: z.number().int().positive().default(IDEMPOTENCY_WINDOW_MS),
  retentionMs: z
    .number()
    .int()
    .positive()
    .default(7 * 24 * 60 * 60 * 1000),
  counterFlushMs: z.number().int().positive().default(1000),
  jobLeaseMs: z.number().int().min(100).max(3_600_000).default(10_000),
});

/** What {@link WebhookStore.accept} records. */
export interface AcceptRequest {
  endpoint: 'strict' | 'mapped';
  mappingId: string;
  deliveryId?: string | undefined;
  plan: WebhookActionPlan;
  /**
   * For a wake plan: also keep a durable wake row for the heartbeat to consume (use
   * when no live wake target exists). Ignored for agent plans.
   * @default true
   */
  recordWake?: boolean;
}

/** What {@link WebhookStore.accept} did. */
export type AcceptResult =
  | { duplicate: true }
  | { duplicate: false; jobId: number | undefined; wakeId: number | undefined };

/** A queued agent turn, as the drainer receives it. */
export interface AgentJob {
  id: number;
  endpoint: 'strict' | 'mapped';
  mappingId: string;
  deliveryId: string | undefined;
  createdAt: number;
  /** Attempts so far, this one included. */
  attempts: number;
  /** In cluster mode, the fence of this claim: every later write of the job carries it. */
  fence?: number | undefined;
  agentId: string | undefined;
  sessionKey: string;
  message: string;
  model: string | undefined;
  timeoutMs: number | undefined;
  deliver: boolean;
  channel: string | undefined;
  to: string | undefined;
}

/** How a job ended. */
export interface JobCompletion {
  finishReason: string;
  responseChars: number;
  deliveryStatus: 'not_requested' | 'delivered' | 'no_target' | 'failed';
  /** Kept only when a requested delivery did not happen, so the answer is not lost. */
  undeliveredResponse?: string;
}

/** A wake waiting for the heartbeat. */
export interface PendingWake {
  id: number;
  mappingId: string;
  deliveryId: string | undefined;
  mode: 'now' | 'next-heartbeat';
  text: string;
  createdAt: number;
}

/** Job counts by status. */
export interface QueueStats {
  queued: number;
  running: number;
  done: number;
  failed: number;
}

/** One row of the outcome counters (UTC day). */
export interface WebhookCounter {
  day: string;
  endpoint: string;
  outcome: string;
  reason: string;
  mappingId: string;
  count: number;
}

/** The durable side of webhook ingestion, on libsql. */
export interface WebhookStore {
  /**
   * Records an accepted webhook in one write transaction: claims its delivery id (a
   * duplicate within the window changes nothing), queues its agent turn or records
   * its wake. Nothing is half-written.
   */
  accept(request: AcceptRequest): Promise<AcceptResult>;
  /**
   * Marks the oldest due queued job running (attempts + 1) and returns it. In cluster mode it may
   * also be a running job whose owner's lease expired (taken over), and it carries the claim's `fence`.
   */
  claimNextJob(): Promise<AgentJob | undefined>;
  /**
   * Marks a running job done. The writes after a claim take its `fence` in cluster mode and
   * answer false when it is stale (the lease expired and another instance took the job over).
   */
  completeJob(id: number, completion: JobCompletion, fence?: number): Promise<boolean>;
  /** Records a failed attempt: queued again at `retryAt`, or failed for good when `retryAt` is undefined. */
  failJob(id: number, error: string, retryAt: number | undefined, fence?: number): Promise<boolean>;
  /** Puts a running job back without counting the attempt (shutdown interrupted it). */
  releaseJob(id: number, fence?: number): Promise<boolean>;
  /** Extends a cluster claim's lease; false once it was lost. Always true in process. */
  renewJob(id: number, fence?: number): Promise<boolean>;
  /** The lease of a cluster claim, which the drainer renews while the turn runs; undefined in process. */
  readonly jobLeaseMs: number | undefined;
  /**
   * In process: puts every running job back in the queue (the process died while they ran).
   * In cluster mode: frees the jobs whose owner's lease expired, for any instance to take over;
   * a live peer's jobs are left alone. Returns how many.
   */
  recoverRunningJobs(): Promise<number>;
  /** Job counts by status. */
  queueStats(): Promise<QueueStats>;
  /** Queued jobs whose next attempt is due now. */
  dueJobCount(): Promise<number>;
  /** When the earliest queued job is next due (ms), or undefined when nothing is queued. */
  nextAttemptAt(): Promise<number | undefined>;
  /** Wakes not consumed yet, oldest first. */
  pendingWakes(limit?: number): Promise<PendingWake[]>;
  /** Marks wakes consumed; returns how many were still pending. */
  consumeWakes(ids: readonly number[]): Promise<number>;
  /** Counts one request's outcome (summed in memory, written every `counterFlushMs`). */
  recordOutcome(outcome: Pick<WebhookOutcome, 'endpoint' | 'outcome' | 'reason' | 'mappingId'>): void;
  /** Writes counted outcomes now. */
  flushCounters(): Promise<void>;
  /** Counter rows, optionally from a UTC day (`YYYY-MM-DD`) on. */
  counters(sinceDay?: string): Promise<WebhookCounter[]>;
  /** Drops expired delivery ids, and finished jobs and consumed wakes past retention. */
  prune(): Promise<{ deliveries: number; jobs: number; wakes: number }>;
  /** Writes pending counters and stops the flush timer. Idempotent. */
  close(): Promise<void>;
}

/**
 * Creates the durable webhook store over a migrated database.
 * @throws {WebhookError} `INVALID_OPTIONS` naming the offending option.
 */
export function createWebhookStore(options: WebhookStoreOptions): WebhookStore {
  const { db, coordinator, claimWhere, logger = noopLogger, now = Date.now, ...rest } = options;
  const settings = parseWith(storeOptionsSchema, rest, 'webhook store options');
  if (!db || typeof db.execute !== 'function' || typeof db.transaction !== 'function') {
    throw new WebhookError(
      'INVALID_OPTIONS',
      'Invalid webhook store options: db: expected a database handle',
    );
  }
  let closed = false;
  // Scalar MAX(a, b) is SQLite's spelling; PostgreSQL's is GREATEST.
  const greatest = db.dialect === 'pg' ? 'GREATEST' : 'MAX';
  const claims = jobClaims(db, coordinator, settings.jobLeaseMs, claimWhere);
  const counters = new OutcomeCounters(db, logger, settings.counterFlushMs);

  const ensureOpen = () => {
    if (closed) throw new WebhookError('STORE_CLOSED', 'The webhook store is closed');
  };

  return {
    async accept(request) {
      ensureOpen();
      const at = now();
      return db.transaction((tx) => acceptIn(tx, request, at, settings.idempotencyWindowMs));
    },

    async claimNextJob() {
      ensureOpen();
      const claimed = await claims.claim(now());
      return claimed === undefined ? undefined : { ...toJob(claimed.row), fence: claimed.fence };
    },

    async completeJob(id, completion, fence) {
      ensureOpen();
      return claims.finish(id, fence, {
        set: `status = 'done', finished_at = ?, finish_reason = ?, response_chars = ?,
           delivery_status = ?, undelivered_response = ?, last_error = NULL`,
        args: [
          now(),
          completion.finishReason,
          completion.responseChars,
          completion.deliveryStatus,
          completion.undeliveredResponse ?? null,
        ],
      });
    },

    async failJob(id, error, retryAt, fence) {
      ensureOpen();
      const message = error.slice(0, 500);
      return claims.finish(
        id,
        fence,
        retryAt === undefined
          ? { set: "status = 'failed', finished_at = ?, last_error = ?", args: [now(), message] }
          : { set: "status = 'queued', next_attempt_at = ?, last_error = ?", args: [retryAt, message] },
      );
    },

    async releaseJob(id, fence) {
      ensureOpen();
      return claims.finish(
        id,
        fence,
        { set: `status = 'queued', attempts = ${greatest}(attempts - 1, 0)`, args: [] },
        true,
      );
    },

    async renewJob(id, fence) {
      ensureOpen();
      return claims.renew(id, fence);
    },

    jobLeaseMs: claims.leaseMs,

    async recoverRunningJobs() {
      ensureOpen();
      return claims.recover(now());
    },

    async queueStats() {
      ensureOpen();
      const result = await db.execute(
        'SELECT status, COUNT(*) AS n FROM webhook_agent_queue GROUP BY status',
      );
      const stats: QueueStats = { queued: 0, running: 0, done: 0, failed: 0 };
      for (const row of result.rows) {
        const status = String(row.status) as keyof QueueStats;
        if (status in stats) stats[status] = Number(row.n);
      }
      return stats;
    },

    async dueJobCount() {
      ensureOpen();
      return claims.due(now());
    },

    async nextAttemptAt() {
      ensureOpen();
      const result = await db.execute(
        `SELECT MIN(next_attempt_at) AS at FROM webhook_agent_queue WHERE status = 'queued'`,
      );
      const at = result.rows[0]?.at;
      return at === null || at === undefined ? undefined : Number(at);
    },

    async pendingWakes(limit = 100) {
      ensureOpen();
      const result = await db.execute(
        `SELECT id, mapping_id, delivery_id, mode, text, created_at FROM webhook_wakes
         WHERE consumed_at IS NULL ORDER BY id LIMIT ?`,
        [Math.max(1, Math.min(limit, 1000))],
      );
      return result.rows.map((row) => ({
        id: Number(row.id),
        mappingId: String(row.mapping_id),
        deliveryId: row.delivery_id === null ? undefined : String(row.delivery_id),
        mode: row.mode === 'next-heartbeat' ? 'next-heartbeat' : 'now',
        text: String(row.text),
        createdAt: Number(row.created_at),
      }));
    },

    async consumeWakes(ids) {
      ensureOpen();
      if (ids.length === 0) return 0;
      const at = now();
      return db.transaction(async (tx) => {
        let consumed = 0;
        for (const id of ids) {
          const result = await tx.execute(
            'UPDATE webhook_wakes SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL',
            [at, id],
          );
          consumed += result.rowsAffected;
        }
        return consumed;
      });
    },

    recordOutcome(outcome) {
      if (closed) return;
      counters.record(outcome, now());
    },

    flushCounters: () => counters.flush(),

    async counters(sinceDay) {
      ensureOpen();
      await counters.flush();
      const result = await db.execute(
        `SELECT day, endpoint, outcome, reason, mapping_id, count FROM webhook_counters
         WHERE day >= ? ORDER BY day, endpoint, outcome, reason, mapping_id`,
        [sinceDay ?? ''],
      );
      return result.rows.map((row) => ({
        day: String(row.day),
        endpoint: String(row.endpoint),
        outcome: String(row.outcome),
        reason: String(row.reason),
        mappingId: String(row.mapping_id),
        count: Number(row.count),
      }));
    },

    async prune() {
      ensureOpen();
      const at = now();
      return db.transaction(async (tx) => {
        const deliveries = await tx.execute('DELETE FROM webhook_deliveries WHERE received_at <= ?', [
          at - settings.idempotencyWindowMs,
        ]);
        const jobs = await tx.execute(
          `DELETE FROM webhook_agent_queue WHERE status IN ('done', 'failed') AND finished_at <= ?`,
          [at - settings.retentionMs],
        );
        const wakes = await tx.execute(
          'DELETE FROM webhook_wakes WHERE consumed_at IS NOT NULL AND consumed_at <= ?',
          [at - settings.retentionMs],
        );
        return { deliveries: deliveries.rowsAffected, jobs: jobs.rowsAffected, wakes: wakes.rowsAffected };
      });
    },

    async close() {
      if (closed) return;
      await counters.close();
      closed = true;
    },
  };
}

/** Claims the delivery id and queues the job or records the wake, inside one transaction. */
async function acceptIn(
  tx: WebhookQueryable,
  request: AcceptRequest,
  at: number,
  idempotencyWindowMs: number,
): Promise<AcceptResult> {
  if (request.deliveryId !== undefined) {
    // One statement claims the id: a new id inserts, an id older than the window is taken
    // again, a live one changes nothing and returns no row. Two instances racing on the same id
    // on PostgreSQL meet on the row lock; the second re-checks the WHERE and finds it live.
    const claimed = await tx.execute(
      `INSERT INTO webhook_deliveries (delivery_id, mapping_id, received_at) VALUES (?, ?, ?)
       ON CONFLICT (delivery_id) DO UPDATE SET mapping_id = excluded.mapping_id, received_at = excluded.received_at
       WHERE webhook_deliveries.received_at <= ?
       RETURNING delivery_id`,
      [request.deliveryId, request.mappingId, at, at - idempotencyWindowMs],
    );
    if (claimed.rows.length === 0) return { duplicate: true };
  }
  const plan = request.plan;
  if (plan.action === 'agent') {
    const inserted = await tx.execute(
      `INSERT INTO webhook_agent_queue (endpoint, mapping_id, delivery_id, created_at, status, next_attempt_at,
         agent_id, session_key, message, model, timeout_ms, deliver, channel, recipient)
       VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      [
        request.endpoint,
        request.mappingId,
        request.deliveryId ?? null,
        at,
        at,
        plan.agentId ?? null,
        plan.sessionKey,
        plan.message,
        plan.model ?? null,
        plan.timeoutMs ?? null,
        plan.deliver ? 1 : 0,
        plan.channel ?? null,
        plan.to ?? null,
      ],
    );
    return { duplicate: false, jobId: Number(inserted.rows[0]?.id), wakeId: undefined };
  }
  if (request.recordWake === false) return { duplicate: false, jobId: undefined, wakeId: undefined };
  const inserted = await tx.execute(
    `INSERT INTO webhook_wakes (mapping_id, delivery_id, mode, text, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
    [request.mappingId, request.deliveryId ?? null, plan.mode, plan.text, at],
  );
  return { duplicate: false, jobId: undefined, wakeId: Number(inserted.rows[0]?.id) };
}

function optionalString(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : String(value);
}

function toJob(row: Record<string, unknown>): AgentJob {
  return {
    id: Number(row.id),
    endpoint: row.endpoint === 'strict' ? 'strict' : 'mapped',
    mappingId: String(row.mapping_id),
    deliveryId: optionalString(row.delivery_id),
    createdAt: Number(row.created_at),
    attempts: Number(row.attempts),
    agentId: optionalString(row.agent_id),
    sessionKey: String(row.session_key),
    message: String(row.message),
    model: optionalString(row.model),
    timeoutMs: row.timeout_ms === null || row.timeout_ms === undefined ? undefined : Number(row.timeout_ms),
    deliver: Number(row.deliver) === 1,
    channel: optionalString(row.channel),
    to: optionalString(row.recipient),
  };
}
