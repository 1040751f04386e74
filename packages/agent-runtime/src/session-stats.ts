import type { Database } from '@agentd/storage';

/** One agent's sessions as `obs.context.dag` reports them. */
export interface AgentContextDag {
  agentId: string;
  nodes: { sessions: number; messages: number };
  /** Summary levels: one per compacted session (the store keeps a single rolling summary). */
  maxDepth: 0 | 1;
  compactions: { compactedSessions: number; summaryTokens: number };
}

/**
 * Session, message and compaction counts per agent from the session store, ordered by agent
 * id; only `agentId`'s when given (an empty list when it has no sessions).
 */
export async function contextDagByAgent(
  db: Pick<Database, 'query'>,
  agentId?: string,
): Promise<AgentContextDag[]> {
  const rows = await db.query<{
    agent_id: string;
    sessions: number;
    messages: number | null;
    compacted: number;
    summary_tokens: number | null;
  }>(
    `SELECT agent_id, COUNT(*) AS sessions, SUM(message_count) AS messages,
            SUM(CASE WHEN compacted_before_seq > 0 THEN 1 ELSE 0 END) AS compacted,
            SUM(summary_tokens) AS summary_tokens
       FROM agent_sessions WHERE (? IS NULL OR agent_id = ?) GROUP BY agent_id ORDER BY agent_id`,
    [agentId ?? null, agentId ?? null],
  );
  return rows.map((row) => ({
    agentId: row.agent_id,
    nodes: { sessions: row.sessions, messages: row.messages ?? 0 },
    maxDepth: row.compacted > 0 ? 1 : 0,
    compactions: { compactedSessions: row.compacted, summaryTokens: row.summary_tokens ?? 0 },
  }));
}
