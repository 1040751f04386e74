import { type Database, nowMs, type Queryable, type SqlRow } from '@agentd/storage';

/** Status of a sub-agent run (decisions.md), plus `orphaned` for a run a restart could not resume. */
export type RunStatus = 'running' | 'completed' | 'failed' | 'killed' | 'timeout' | 'orphaned';

/** The statuses a run ends in. */
export const ENDED_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'killed', 'timeout', 'orphaned'];

/** A run's budget limits. */
export interface RunBudget {
  maxTokens: number;
  maxCostUsd: number;
  maxToolCalls: number;
}

/** One row of the durable run table. */
export interface RunRecord {
  runId: string;
  parentRunId: string | undefined;
  rootRunId: string;
  depth: number;
  agentId: string;
  sessionKey: string;
  parentSessionKey: string;
  task: string;
  status: RunStatus;
  /** Why it ended beyond the status: `killed`, `revoked`, `denial_breaker`, `budget`, `restart`, ... */
  endReason: string | undefined;
  /** The gateway client to notify on completion (inherited by a tree's descendants). */
  clientId: string | undefined;
  memoryTenant: string | undefined;
  /** The tool names the run may call, fixed at spawn. */
  capabilities: string[];
  leaseId: string | undefined;
  budget: RunBudget;
  tokens: { input: number; output: number; total: number };
  costUsd: number;
  toolCalls: number;
  response: string | undefined;
  error: string | undefined;
  revoked: boolean;
  evicted: boolean;
  resumed: number;
  startedAt: number;
  completedAt: number | undefined;
}

/** Filter of {@link RunStore.list}. */
export interface RunListFilter {
  status?: RunStatus | undefined;
  limit?: number | undefined;
  /** Only runs whose session key starts with this (a tenant-bound caller's `<tenant>:`). */
  keyPrefix?: string | undefined;
  parentRunId?: string | undefined;
  parentSessionKey?: string | undefined;
}

/** The longest response kept in the run table (the full reply stays in the child's session). */
export const MAX_STORED_RESPONSE = 100_000;

const str = (value: unknown): string | undefined =>
  value === null || value === undefined ? undefined : String(value);

/** A run row as a record. */
export function toRecord(row: SqlRow): RunRecord {
  return {
    runId: String(row.run_id),
    parentRunId: str(row.parent_run_id),
    rootRunId: String(row.root_run_id),
    depth: Number(row.depth),
    agentId: String(row.agent_id),
    sessionKey: String(row.session_key),
    parentSessionKey: String(row.parent_session_key),
    task: String(row.task),
    status: String(row.status) as RunStatus,
    endReason: str(row.end_reason),
    clientId: str(row.client_id),
    memoryTenant: str(row.memory_tenant),
    capabilities: JSON.parse(String(row.capabilities)) as string[],
    leaseId: str(row.lease_id),
    budget: JSON.parse(String(row.budget)) as RunBudget,
    tokens: {
      input: Number(row.tokens_input),
      output: Number(row.tokens_output),
      total: Number(row.tokens_total),
    },
    costUsd: Number(row.cost_usd),
    toolCalls: Number(row.tool_calls),
    response: str(row.response),
    error: str(row.error),
    revoked: Number(row.revoked) === 1,
    evicted: Number(row.evicted) === 1,
    resumed: Number(row.resumed),
    startedAt: Number(row.started_at),
    completedAt:
      row.completed_at === null || row.completed_at === undefined ? undefined : Number(row.completed_at),
  };
}

/** How a run ended, as {@link RunStore.finish} writes it. */
export interface RunEnd {
  status: Exclude<RunStatus, 'running'>;
  endReason?: string | undefined;
  response?: string | undefined;
  error?: string | undefined;
  completedAt: number;
}

/** The owner of a run in a cluster: an instance and the fence it holds the row at. */
export interface RunOwner {
  instanceId: string;
  fence: number;
}

/** A stop asked of a run executing on another instance. */
export interface StopRequest {
  runId: string;
  /** Undefined when only a revocation is recorded. */
  reason: 'killed' | 'steered' | undefined;
  detail: string | undefined;
  revoked: boolean;
}

/** The durable run table: every write is one statement, so a crash leaves no half row. */
export class RunStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /**
   * Writes a new `running` row (before the run's turn starts); in a cluster owned by `owner`
   * at fence 1, its lease running `leaseMs` from the database's clock.
   */
  async insert(run: RunRecord, owner?: { instanceId: string; leaseMs: number }): Promise<void> {
    await this.#db.execute(
      `INSERT INTO autonomy_runs (run_id, parent_run_id, root_run_id, depth, agent_id, session_key,
        parent_session_key, task, status, client_id, memory_tenant, capabilities, lease_id, budget,
        started_at, updated_at, owner, lease_until, fence)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ${nowMs(this.#db.dialect)} + ?, ?)`,
      [
        run.runId,
        run.parentRunId ?? null,
        run.rootRunId,
        run.depth,
        run.agentId,
        run.sessionKey,
        run.parentSessionKey,
        run.task,
        run.clientId ?? null,
        run.memoryTenant ?? null,
        JSON.stringify(run.capabilities),
        run.leaseId ?? null,
        JSON.stringify(run.budget),
        run.startedAt,
        run.startedAt,
        owner?.instanceId ?? null,
        owner?.leaseMs ?? 0,
        owner === undefined ? 0 : 1,
      ],
    );
  }

  async get(runId: string): Promise<RunRecord | undefined> {
    const row = await this.#db.get('SELECT * FROM autonomy_runs WHERE run_id = ?', [runId]);
    return row ? toRecord(row) : undefined;
  }

  async bySession(sessionKey: string): Promise<RunRecord | undefined> {
    const row = await this.#db.get('SELECT * FROM autonomy_runs WHERE session_key = ?', [sessionKey]);
    return row ? toRecord(row) : undefined;
  }

  /** Runs newest first. */
  async list(filter: RunListFilter = {}): Promise<RunRecord[]> {
    // Each condition with its arguments, or false when its filter is not given.
    const conditions = [
      !!filter.status && (['status = ?', filter.status] as const),
      filter.keyPrefix !== undefined &&
        (['substr(session_key, 1, ?) = ?', filter.keyPrefix.length, filter.keyPrefix] as const),
      filter.parentRunId !== undefined && (['parent_run_id = ?', filter.parentRunId] as const),
      filter.parentSessionKey !== undefined && (['parent_session_key = ?', filter.parentSessionKey] as const),
    ].filter((condition) => condition !== false);
    const where = conditions.map(([sql]) => sql);
    const args = conditions.flatMap(([, ...values]) => values);
    const rows = await this.#db.query(
      `SELECT * FROM autonomy_runs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY started_at DESC, run_id LIMIT ?`,
      [...args, filter.limit ?? 100],
    );
    return rows.map(toRecord);
  }

  /** Every run of a tree, root included. */
  async tree(rootRunId: string): Promise<RunRecord[]> {
    return (await this.#db.query('SELECT * FROM autonomy_runs WHERE root_run_id = ?', [rootRunId])).map(
      toRecord,
    );
  }

  /** The runs left `running` (read at start, before anything runs). */
  async running(): Promise<RunRecord[]> {
    return (
      await this.#db.query("SELECT * FROM autonomy_runs WHERE status = 'running' ORDER BY started_at")
    ).map(toRecord);
  }

  /**
   * Ends a run; a run already ended keeps its first end (answers false). With `owner` (a
   * cluster) only while that instance still holds the row at its fence: a paused instance whose
   * run was taken over cannot end it. The end releases the ownership.
   */
  async finish(runId: string, end: RunEnd, owner?: RunOwner): Promise<boolean> {
    const fenced = owner === undefined ? '' : ' AND owner = ? AND fence = ?';
    const result = await this.#db.execute(
      `UPDATE autonomy_runs SET status = ?, end_reason = ?, response = ?, error = ?, completed_at = ?, updated_at = ?,
         owner = NULL, lease_until = NULL
       WHERE run_id = ? AND status = 'running'${fenced}`,
      [
        end.status,
        end.endReason ?? null,
        end.response === undefined ? null : end.response.slice(0, MAX_STORED_RESPONSE),
        end.error ?? null,
        end.completedAt,
        end.completedAt,
        runId,
        ...(owner === undefined ? [] : [owner.instanceId, owner.fence]),
      ],
    );
    return result.rowsAffected > 0;
  }

  /**
   * Asks the owners of running runs to stop them (a cluster's kill or steer made on another
   * instance), in `tx` with the notice that wakes them. Answers how many were still running.
   */
  async requestStop(
    tx: Queryable,
    runIds: readonly string[],
    reason: 'killed' | 'steered',
    detail: string | undefined,
  ): Promise<number> {
    if (runIds.length === 0) return 0;
    const result = await tx.execute(
      `UPDATE autonomy_runs SET stop_reason = ?, stop_detail = ?
       WHERE status = 'running' AND stop_reason IS NULL AND run_id IN (${runIds.map(() => '?').join(', ')})`,
      [reason, detail ?? null, ...runIds],
    );
    return result.rowsAffected;
  }

  /** The stops asked of (and the revocations of) these runs. */
  async stopRequests(runIds: readonly string[]): Promise<StopRequest[]> {
    if (runIds.length === 0) return [];
    const rows = await this.#db.query(
      `SELECT run_id, stop_reason, stop_detail, revoked FROM autonomy_runs
       WHERE run_id IN (${runIds.map(() => '?').join(', ')}) AND (stop_reason IS NOT NULL OR revoked = 1)`,
      [...runIds],
    );
    return rows.map((row) => ({
      runId: String(row.run_id),
      reason: row.stop_reason === null ? undefined : row.stop_reason === 'steered' ? 'steered' : 'killed',
      detail: row.stop_detail === null ? undefined : String(row.stop_detail),
      revoked: Number(row.revoked) === 1,
    }));
  }

  /** Queues a steered message for the run's owner, in `tx` with the notice that wakes it. */
  async queueSteer(tx: Queryable, runId: string, message: string, now: number): Promise<void> {
    await tx.execute('INSERT INTO autonomy_steers (run_id, message, created_at) VALUES (?, ?, ?)', [
      runId,
      message,
      now,
    ]);
  }

  /** Takes the steered messages queued for these runs, oldest first. */
  async takeSteers(runIds: readonly string[]): Promise<Array<{ runId: string; message: string }>> {
    if (runIds.length === 0) return [];
    const rows = await this.#db.query(
      `DELETE FROM autonomy_steers WHERE run_id IN (${runIds.map(() => '?').join(', ')})
       RETURNING id, run_id, message`,
      [...runIds],
    );
    return rows
      .sort((a, b) => Number(a.id) - Number(b.id))
      .map((row) => ({ runId: String(row.run_id), message: String(row.message) }));
  }

  /** Adds one turn's usage. */
  async addUsage(
    runId: string,
    usage: { input: number; output: number; total: number; costUsd: number },
    now: number,
  ): Promise<void> {
    await this.#db.execute(
      `UPDATE autonomy_runs SET tokens_input = tokens_input + ?, tokens_output = tokens_output + ?,
        tokens_total = tokens_total + ?, cost_usd = cost_usd + ?, updated_at = ? WHERE run_id = ?`,
      [usage.input, usage.output, usage.total, usage.costUsd, now, runId],
    );
  }

  /** Counts one tool call of the run (a resumed run with calls is not safe to re-run). */
  async addToolCall(runId: string, now: number): Promise<void> {
    await this.#db.execute(
      'UPDATE autonomy_runs SET tool_calls = tool_calls + 1, updated_at = ? WHERE run_id = ?',
      [now, runId],
    );
  }

  /** Marks every run of a tree revoked (a restart never resumes them); answers how many. */
  async markRevoked(rootRunId: string, now: number): Promise<number> {
    const result = await this.#db.execute(
      'UPDATE autonomy_runs SET revoked = 1, updated_at = ? WHERE root_run_id = ? AND revoked = 0',
      [now, rootRunId],
    );
    return result.rowsAffected;
  }

  /** Marks a tree evicted (its gate decisions fall back to the default profile). */
  async markEvicted(rootRunId: string, now: number): Promise<number> {
    const result = await this.#db.execute(
      'UPDATE autonomy_runs SET evicted = 1, updated_at = ? WHERE root_run_id = ?',
      [now, rootRunId],
    );
    return result.rowsAffected;
  }

  /** The roots marked evicted (loaded at start into the daemon-wide set). */
  async evictedRoots(): Promise<string[]> {
    const rows = await this.#db.query('SELECT DISTINCT root_run_id FROM autonomy_runs WHERE evicted = 1');
    return rows.map((row) => String(row.root_run_id));
  }

  /** Counts a resume of a run left running by a crash. */
  async markResumed(runId: string, now: number): Promise<void> {
    await this.#db.execute(
      'UPDATE autonomy_runs SET resumed = resumed + 1, updated_at = ? WHERE run_id = ?',
      [now, runId],
    );
  }

  /** Sets whether a run's completion was announced (a restart announces what a crash left out). */
  async markAnnounced(runId: string): Promise<void> {
    await this.#db.execute('UPDATE autonomy_runs SET announced = 1 WHERE run_id = ?', [runId]);
  }

  /** Runs running daemon-wide now. */
  async countRunning(): Promise<number> {
    const row = await this.#db.get("SELECT count(*) AS n FROM autonomy_runs WHERE status = 'running'");
    return Number(row?.n ?? 0);
  }

  /** Records a health signal (`killed`, `resumed`, `denial_breaker`, ...) for the fleet report. */
  async signal(
    signal: string,
    run: { runId: string; rootRunId: string },
    ts: number,
    count = 1,
  ): Promise<void> {
    await this.#db.execute(
      'INSERT INTO autonomy_signals (ts, signal, run_id, root_run_id, count) VALUES (?, ?, ?, ?, ?)',
      [ts, signal, run.runId, run.rootRunId, count],
    );
  }
}
