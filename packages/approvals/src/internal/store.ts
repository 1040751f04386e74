import type { Database } from '@agentd/storage';
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
         status, created_at_ms, expires_at_ms)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
      [
        row.id,
        row.sessionKey,
        row.agentId,
        row.toolName,
        row.fingerprint,
        JSON.stringify(row.argsDigest),
        row.createdAt,
        row.expiresAt,
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
