import type { Database, Queryable } from '@agentd/storage';
import type { ArgsDigest } from '../digest.js';
import type { ApprovalStatus } from '../types.js';

/** One row of `approval_requests`, as the service works with it. */
export interface RequestRow {
  id: string;
  sessionKey: string;
  agentId: string;
  toolName: string;
  fingerprint: string;
  argsDigest: ArgsDigest;
  status: ApprovalStatus;
  reason: string | undefined;
  resolvedBy: string | undefined;
  createdAt: number;
  expiresAt: number;
  resolvedAt: number | undefined;
  /** The instance whose turn waits on the request (cluster mode), if recorded. */
  owner?: string | undefined;
}

/** A decision as written to a row. */
export interface RowDecision {
  status: 'approved' | 'denied';
  reason: string | undefined;
  resolvedBy: string;
  at: number;
}

interface SqlRequestRow {
  id: string;
  session_key: string;
  agent_id: string;
  tool_name: string;
  fingerprint: string;
  args_digest: string;
  status: ApprovalStatus;
  reason: string | null;
  resolved_by: string | null;
  created_at_ms: number;
  expires_at_ms: number;
  resolved_at_ms: number | null;
  owner: string | null;
}

function fromSql(row: SqlRequestRow): RequestRow {
  return {
    id: row.id,
    sessionKey: row.session_key,
    agentId: row.agent_id,
    toolName: row.tool_name,
    fingerprint: row.fingerprint,
    argsDigest: JSON.parse(row.args_digest) as ArgsDigest,
    status: row.status,
    reason: row.reason ?? undefined,
    resolvedBy: row.resolved_by ?? undefined,
    createdAt: Number(row.created_at_ms),
    expiresAt: Number(row.expires_at_ms),
    resolvedAt: row.resolved_at_ms === null ? undefined : Number(row.resolved_at_ms),
    owner: row.owner ?? undefined,
  };
}

/** The request table: written when a request is made and when it is decided. */
export class RequestStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async insert(row: RequestRow): Promise<void> {
    await this.#db.execute(
      `INSERT INTO approval_requests (id, session_key, agent_id, tool_name, fingerprint, args_digest,
         status, created_at_ms, expires_at_ms, owner)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
      [
        row.id,
        row.sessionKey,
        row.agentId,
        row.toolName,
        row.fingerprint,
        JSON.stringify(row.argsDigest),
        row.createdAt,
        row.expiresAt,
        row.owner ?? null,
      ],
    );
  }

  /** Records a decision of a request still pending; answers whether it was (a decided row is left alone). */
  async decide(
    id: string,
    decision: { status: 'approved' | 'denied'; reason: string | undefined; resolvedBy: string; at: number },
  ): Promise<boolean> {
    const result = await this.#db.execute(
      `UPDATE approval_requests SET status = ?, reason = ?, resolved_by = ?, resolved_at_ms = ?
       WHERE id = ? AND status = 'pending'`,
      [decision.status, decision.reason ?? null, decision.resolvedBy, decision.at, id],
    );
    return result.rowsAffected > 0;
  }

  /**
   * The same decision as a compare-and-set for a cluster: the row as decided when this call won
   * (it was still pending), undefined when another decision came first. Run it in the
   * transaction that also publishes the notice, so the notice goes out with the commit.
   */
  async decideReturning(tx: Queryable, id: string, decision: RowDecision): Promise<RequestRow | undefined> {
    const row = await tx.get<SqlRequestRow>(
      `UPDATE approval_requests SET status = ?, reason = ?, resolved_by = ?, resolved_at_ms = ?
       WHERE id = ? AND status = 'pending' RETURNING *`,
      [decision.status, decision.reason ?? null, decision.resolvedBy, decision.at, id],
    );
    return row ? fromSql(row) : undefined;
  }

  /** Every pending request, and the rows of `ids` whatever their status. */
  async pendingOr(ids: readonly string[]): Promise<RequestRow[]> {
    const rows = await this.#db.query<SqlRequestRow>(
      `SELECT * FROM approval_requests WHERE status = 'pending'${
        ids.length > 0 ? ` OR id IN (${ids.map(() => '?').join(', ')})` : ''
      } ORDER BY created_at_ms, id`,
      [...ids],
    );
    return rows.map(fromSql);
  }

  async get(id: string): Promise<RequestRow | undefined> {
    const row = await this.#db.get<SqlRequestRow>('SELECT * FROM approval_requests WHERE id = ?', [id]);
    return row ? fromSql(row) : undefined;
  }

  /** Deletes decided requests resolved before `before` (epoch ms); answers how many. */
  async pruneDecided(before: number): Promise<number> {
    const result = await this.#db.execute(
      "DELETE FROM approval_requests WHERE status != 'pending' AND resolved_at_ms < ?",
      [before],
    );
    return result.rowsAffected;
  }

  /** Requests still pending, oldest first. */
  async pending(): Promise<RequestRow[]> {
    const rows = await this.#db.query<SqlRequestRow>(
      "SELECT * FROM approval_requests WHERE status = 'pending' ORDER BY created_at_ms, id",
    );
    return rows.map(fromSql);
  }
}
