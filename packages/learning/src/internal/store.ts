import type { Database, Queryable } from '@agentd/storage';
import type { OutcomeSource, TurnOutcome } from '../outcome.js';

/** States of a learned procedure (the contract's Learned procedure rows). */
export type ProcedureState = 'candidate' | 'active' | 'stale' | 'archived';

/** One resolved turn. */
export interface OutcomeRow {
  id: number;
  traceId: string;
  sessionKey: string;
  agentId: string;
  origin: string;
  outcome: TurnOutcome;
  sources: OutcomeSource[];
  signature: string;
  message: string;
  skillsUsed: string[];
  memories: string[];
  createdAt: number;
}

/** One learned procedure. */
export interface Procedure {
  id: number;
  agentId: string;
  name: string;
  signature: string;
  description: string;
  body: string;
  state: ProcedureState;
  /** Sessions whose successful use corroborated it (since admission or the last promotion). */
  successes: string[];
  /** Sessions whose use failed or was corrected (since the last state change). */
  failures: string[];
  createdAt: number;
  updatedAt: number;
}

interface RawOutcome {
  id: number;
  trace_id: string;
  session_key: string;
  agent_id: string;
  origin: string;
  outcome: string;
  sources: string;
  signature: string;
  message: string;
  skills_used: string;
  memories: string;
  created_at: number;
}

interface RawProcedure {
  id: number;
  agent_id: string;
  name: string;
  signature: string;
  description: string;
  body: string;
  state: string;
  successes: string;
  failures: string;
  created_at: number;
  updated_at: number;
}

const toOutcome = (row: RawOutcome): OutcomeRow => ({
  id: row.id,
  traceId: row.trace_id,
  sessionKey: row.session_key,
  agentId: row.agent_id,
  origin: row.origin,
  outcome: row.outcome as TurnOutcome,
  sources: JSON.parse(row.sources) as OutcomeSource[],
  signature: row.signature,
  message: row.message,
  skillsUsed: JSON.parse(row.skills_used) as string[],
  memories: JSON.parse(row.memories) as string[],
  createdAt: row.created_at,
});

const toProcedure = (row: RawProcedure): Procedure => ({
  id: row.id,
  agentId: row.agent_id,
  name: row.name,
  signature: row.signature,
  description: row.description,
  body: row.body,
  state: row.state as ProcedureState,
  successes: JSON.parse(row.successes) as string[],
  failures: JSON.parse(row.failures) as string[],
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** The learning tables on libsql. */
export class LearningStore {
  constructor(readonly db: Database) {}

  async insertOutcome(row: Omit<OutcomeRow, 'id'>): Promise<void> {
    await this.db.execute(
      `INSERT INTO learning_outcomes (trace_id, session_key, agent_id, origin, outcome, sources, signature, message,
         skills_used, memories, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (trace_id) DO NOTHING`,
      [
        row.traceId,
        row.sessionKey,
        row.agentId,
        row.origin,
        row.outcome,
        JSON.stringify(row.sources),
        row.signature,
        row.message,
        JSON.stringify(row.skillsUsed),
        JSON.stringify(row.memories),
        row.createdAt,
      ],
    );
  }

  async lastOutcome(sessionKey: string): Promise<OutcomeRow | undefined> {
    const row = await this.db.get<RawOutcome>(
      'SELECT * FROM learning_outcomes WHERE session_key = ? ORDER BY id DESC LIMIT 1',
      [sessionKey],
    );
    return row ? toOutcome(row) : undefined;
  }

  async outcomeByTrace(traceId: string): Promise<OutcomeRow | undefined> {
    const row = await this.db.get<RawOutcome>('SELECT * FROM learning_outcomes WHERE trace_id = ?', [
      traceId,
    ]);
    return row ? toOutcome(row) : undefined;
  }

  /**
   * Settles a turn again (a correction, a reaction, a judge). The row goes back to the next
   * sweep: a verdict that arrives after the sweep read the turn still moves its procedures.
   */
  async updateOutcome(id: number, outcome: TurnOutcome, sources: OutcomeSource[]): Promise<void> {
    await this.db.execute('UPDATE learning_outcomes SET outcome = ?, sources = ?, swept = 0 WHERE id = ?', [
      outcome,
      JSON.stringify(sources),
      id,
    ]);
  }

  async unswept(agentId: string): Promise<OutcomeRow[]> {
    const rows = await this.db.query<RawOutcome>(
      'SELECT * FROM learning_outcomes WHERE agent_id = ? AND swept = 0 ORDER BY id LIMIT 5000',
      [agentId],
    );
    return rows.map(toOutcome);
  }

  /**
   * Sessions of successful, already swept turns since `since`, per procedure signature (only
   * the signatures asked for; untrusted origins left out).
   */
  async earlierSuccesses(
    agentId: string,
    signatures: readonly string[],
    since: number,
    untrustedOrigins: readonly string[],
  ): Promise<Map<string, Set<string>>> {
    const found = new Map<string, Set<string>>();
    for (let start = 0; start < signatures.length; start += 200) {
      const chunk = signatures.slice(start, start + 200);
      const rows = await this.db.query<{ signature: string; session_key: string }>(
        `SELECT DISTINCT signature, session_key FROM learning_outcomes
         WHERE agent_id = ? AND swept = 1 AND outcome = 'success' AND created_at >= ?
           AND signature IN (${chunk.map(() => '?').join(', ')})
           AND origin NOT IN (${untrustedOrigins.map(() => '?').join(', ') || "''"})`,
        [agentId, since, ...chunk, ...untrustedOrigins],
      );
      for (const row of rows) {
        const sessions = found.get(row.signature) ?? new Set<string>();
        sessions.add(row.session_key);
        found.set(row.signature, sessions);
      }
    }
    return found;
  }

  async markSwept(ids: number[], tx: Queryable = this.db): Promise<void> {
    for (let start = 0; start < ids.length; start += 500) {
      const chunk = ids.slice(start, start + 500);
      await tx.execute(
        `UPDATE learning_outcomes SET swept = 1 WHERE id IN (${chunk.map(() => '?').join(', ')})`,
        chunk,
      );
    }
  }

  /** Agents with anything to sweep: unswept outcomes, live procedures or tracked memories. */
  async agentsToSweep(): Promise<string[]> {
    const rows = await this.db.query<{ agent_id: string }>(
      `SELECT agent_id FROM learning_outcomes WHERE swept = 0
       UNION SELECT agent_id FROM learning_procedures WHERE state <> 'archived'
       UNION SELECT agent_id FROM learning_memory_stats ORDER BY agent_id`,
    );
    return rows.map((row) => row.agent_id);
  }

  async procedures(agentId: string | undefined, states?: readonly ProcedureState[]): Promise<Procedure[]> {
    // Filtered in SQL: every observed turn asks for the live ones, and archived rows only grow.
    const rows = await this.db.query<RawProcedure>(
      `SELECT * FROM learning_procedures WHERE (CAST(? AS TEXT) IS NULL OR agent_id = ?)${
        states ? ` AND state IN (${states.map(() => '?').join(', ')})` : ''
      } ORDER BY id`,
      [agentId ?? null, agentId ?? null, ...(states ?? [])],
    );
    return rows.map(toProcedure);
  }

  /**
   * Drops an agent's swept outcome rows, and its sweep rows but the last, older than `before`:
   * what the lifecycle has already read need not be kept for ever (the rows hold message starts).
   */
  async prune(agentId: string, before: number): Promise<number> {
    const removed = await this.db.execute(
      'DELETE FROM learning_outcomes WHERE agent_id = ? AND swept = 1 AND created_at < ?',
      [agentId, before],
    );
    await this.db.execute(
      `DELETE FROM learning_sweeps WHERE agent_id = ? AND at < ?
         AND id < (SELECT MAX(id) FROM learning_sweeps WHERE agent_id = ?)`,
      [agentId, before, agentId],
    );
    return removed.rowsAffected;
  }

  async insertProcedure(row: Omit<Procedure, 'id'>): Promise<void> {
    await this.db.execute(
      `INSERT INTO learning_procedures (agent_id, name, signature, description, body, state, successes, failures,
         created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.agentId,
        row.name,
        row.signature,
        row.description,
        row.body,
        row.state,
        JSON.stringify(row.successes),
        JSON.stringify(row.failures),
        row.createdAt,
        row.updatedAt,
      ],
    );
  }

  async saveProcedure(row: Procedure): Promise<void> {
    await this.db.execute(
      'UPDATE learning_procedures SET state = ?, successes = ?, failures = ?, updated_at = ? WHERE id = ?',
      [row.state, JSON.stringify(row.successes), JSON.stringify(row.failures), row.updatedAt, row.id],
    );
  }

  /** Whether the agent's latest sweep abstained from synthesis (false before any sweep). */
  async lastSweepAbstained(agentId: string): Promise<boolean> {
    const row = await this.db.get<{ synthesis_abstained: number }>(
      'SELECT synthesis_abstained FROM learning_sweeps WHERE agent_id = ? ORDER BY id DESC LIMIT 1',
      [agentId],
    );
    return row?.synthesis_abstained === 1;
  }

  async insertAnswer(
    answer: {
      channelType: string;
      channelId: string;
      messageId: string;
      sessionKey: string;
      traceId?: string | undefined;
    },
    now: number,
  ): Promise<void> {
    await this.db.execute(
      `INSERT INTO learning_answers (channel_type, channel_id, message_id, session_key, trace_id, created_at)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
      [
        answer.channelType,
        answer.channelId,
        answer.messageId,
        answer.sessionKey,
        answer.traceId ?? null,
        now,
      ],
    );
  }

  /** The turn a channel answer belongs to. */
  async answer(ref: {
    channelType: string;
    channelId: string;
    messageId: string;
  }): Promise<{ sessionKey: string; traceId?: string } | undefined> {
    const row = await this.db.get<{ session_key: string; trace_id: string | null }>(
      'SELECT session_key, trace_id FROM learning_answers WHERE channel_type = ? AND channel_id = ? AND message_id = ?',
      [ref.channelType, ref.channelId, ref.messageId],
    );
    if (!row) return undefined;
    return { sessionKey: row.session_key, ...(row.trace_id ? { traceId: row.trace_id } : {}) };
  }

  async pruneAnswers(before: number): Promise<void> {
    await this.db.execute('DELETE FROM learning_answers WHERE created_at < ?', [before]);
  }

  async countRecall(memoryId: string, agentId: string, outcome: TurnOutcome, now: number): Promise<void> {
    await this.db.execute(
      `INSERT INTO learning_memory_stats (memory_id, agent_id, recalls, helped, failed, updated_at) VALUES (?, ?, 1, ?, ?, ?)
       ON CONFLICT (memory_id) DO UPDATE SET recalls = learning_memory_stats.recalls + 1,
         helped = learning_memory_stats.helped + excluded.helped,
         failed = learning_memory_stats.failed + excluded.failed, updated_at = excluded.updated_at`,
      [
        memoryId,
        agentId,
        outcome === 'success' ? 1 : 0,
        outcome === 'failure' || outcome === 'corrected' ? 1 : 0,
        now,
      ],
    );
  }

  async memoryStats(agentId: string) {
    return this.db.query<{ memory_id: string; recalls: number; helped: number; state: string }>(
      'SELECT memory_id, recalls, helped, state FROM learning_memory_stats WHERE agent_id = ?',
      [agentId],
    );
  }

  async setMemoryState(memoryId: string, state: 'demoted' | 'evicted'): Promise<void> {
    if (state === 'evicted')
      await this.db.execute('DELETE FROM learning_memory_stats WHERE memory_id = ?', [memoryId]);
    else
      await this.db.execute('UPDATE learning_memory_stats SET state = ? WHERE memory_id = ?', [
        state,
        memoryId,
      ]);
  }
}
