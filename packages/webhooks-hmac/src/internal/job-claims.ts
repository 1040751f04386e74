import { isCluster, type WebhookCoordinator, type WebhookOwnedRows } from '../cluster.js';
import { WebhookError } from '../errors.js';
import type { WebhookDatabase, WebhookSqlValue } from '../store.js';

/** A job-row write: the SQL after `SET` and its arguments. */
export interface JobWrite {
  set: string;
  args: WebhookSqlValue[];
}

/** An extra claim condition: SQL over a queue row with `?` placeholders, and their values. */
export interface ClaimWhere {
  sql: string;
  args?: WebhookSqlValue[] | undefined;
}

/** A claimed row and the fence its later writes carry (undefined in process). */
export interface ClaimedRow {
  row: Record<string, unknown>;
  fence: number | undefined;
}

/**
 * How the queue's rows are claimed and finished. In process (libsql) a claim is one UPDATE,
 * which SQLite's single writer makes safe; in a cluster it is an owned-row claim with a lease,
 * and every later write applies only at the claim's fence.
 */
export interface JobClaims {
  /** The lease a claim holds, renewed while the turn runs; undefined in process. */
  readonly leaseMs: number | undefined;
  /** Marks the oldest due job running (attempts + 1) and returns its row as updated. */
  claim(at: number): Promise<ClaimedRow | undefined>;
  /** A write that ends this claim (done, failed, queued again); false when the claim was lost. */
  finish(id: number, fence: number | undefined, write: JobWrite, onlyRunning?: boolean): Promise<boolean>;
  /** Extends the lease; false when another instance took the job over. */
  renew(id: number, fence: number | undefined): Promise<boolean>;
  /** In process: queues every running job again. In a cluster: frees the jobs whose lease expired. */
  recover(at: number): Promise<number>;
  /** Jobs a claim could take now. */
  due(at: number): Promise<number>;
}

const QUEUE = 'webhook_agent_queue';
const CLAIMING = "status = 'running', attempts = attempts + 1, started_at = ?";

/** Today's claims of a single process. */
export function localClaims(db: WebhookDatabase): JobClaims {
  return {
    leaseMs: undefined,
    async claim(at) {
      const result = await db.execute(
        `UPDATE ${QUEUE} SET ${CLAIMING}
         WHERE id = (SELECT id FROM ${QUEUE} WHERE status = 'queued' AND next_attempt_at <= ?
                     ORDER BY next_attempt_at, id LIMIT 1)
         RETURNING *`,
        [at, at],
      );
      const row = result.rows[0];
      return row === undefined ? undefined : { row, fence: undefined };
    },
    async finish(id, _fence, write, onlyRunning = false) {
      const result = await db.execute(
        `UPDATE ${QUEUE} SET ${write.set} WHERE id = ?${onlyRunning ? " AND status = 'running'" : ''}`,
        [...write.args, id],
      );
      return result.rowsAffected === 1;
    },
    async renew() {
      return true;
    },
    async recover(at) {
      const result = await db.execute(
        `UPDATE ${QUEUE} SET status = 'queued', next_attempt_at = ? WHERE status = 'running'`,
        [at],
      );
      return result.rowsAffected;
    },
    async due(at) {
      const result = await db.execute(
        `SELECT COUNT(*) AS n FROM ${QUEUE} WHERE status = 'queued' AND next_attempt_at <= ?`,
        [at],
      );
      return Number(result.rows[0]?.n ?? 0);
    },
  };
}

// Queued jobs that are due, and running ones: a running job is claimable only once its owner's
// lease expired (the owned-row claim adds that guard), which is how a crashed instance's job is
// taken over. Its attempt was counted when it was first claimed; the takeover counts its own.
const CLAIMABLE = "(status = 'queued' AND next_attempt_at <= ?) OR status = 'running'";
const DB_NOW = '(extract(epoch from now()) * 1000)::bigint';

/** Claims shared by every instance of a cluster (PostgreSQL). */
export function clusterClaims(
  db: WebhookDatabase,
  rows: WebhookOwnedRows,
  leaseMs: number,
  extra?: ClaimWhere,
): JobClaims {
  const where = extra === undefined ? CLAIMABLE : `(${CLAIMABLE}) AND (${extra.sql})`;
  const whereArgs = (at: number): WebhookSqlValue[] => [at, ...(extra?.args ?? [])];
  const fenced = (fence: number | undefined): number => {
    if (fence === undefined) {
      throw new WebhookError(
        'INVALID_OPTIONS',
        'a write to a claimed webhook job needs the fence of its claim',
      );
    }
    return fence;
  };
  return {
    leaseMs,
    async claim(at) {
      const [taken] = await rows.claim({
        where,
        args: whereArgs(at),
        orderBy: 'next_attempt_at, id',
        limit: 1,
      });
      if (taken === undefined) return undefined;
      const id = Number(taken.id);
      if (!(await rows.write(id, taken.fence, { set: CLAIMING, args: [at] }))) return undefined;
      const row = {
        ...taken.row,
        status: 'running',
        attempts: Number(taken.row.attempts) + 1,
        started_at: at,
      };
      return { row, fence: taken.fence };
    },
    finish(id, fence, write) {
      return rows.complete(id, fenced(fence), write);
    },
    renew(id, fence) {
      return rows.renew(id, fenced(fence));
    },
    async recover() {
      return (await rows.sweep()).length;
    },
    async due(at) {
      const result = await db.execute(
        `SELECT COUNT(*) AS n FROM ${QUEUE} WHERE (${where}) AND (owner IS NULL OR lease_until < ${DB_NOW})`,
        whereArgs(at),
      );
      return Number(result.rows[0]?.n ?? 0);
    },
  };
}

/** The claims for `coordinator`'s mode. */
export function jobClaims(
  db: WebhookDatabase,
  coordinator: WebhookCoordinator | undefined,
  leaseMs: number,
  extra?: ClaimWhere,
): JobClaims {
  return isCluster(coordinator)
    ? clusterClaims(db, coordinator.ownedRows({ table: QUEUE, leaseMs }), leaseMs, extra)
    : localClaims(db);
}
