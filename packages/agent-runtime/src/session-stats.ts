import type { Database } from '@agentd/storage';

/** One agent's context DAG as `obs.context.dag` reports it. */
export interface AgentContextDag {
  agentId: string;
  /** Sessions, their messages (the DAG's leaves) and the summary nodes over them. */
  nodes: { sessions: number; messages: number; summaries: number };
  /**
   * Deepest summary level: 0 without compaction, 1 for summaries of messages, more for
   * summaries of summaries (a session compacted before the DAG existed counts as 1).
   */
  maxDepth: number;
  /** Summary nodes per depth (`"1"`, `"2"`, ...). */
  nodesByDepth: Record<string, number>;
  /** Sessions compacted, tokens of their stored summaries, and when the newest summary node was written. */
  compactions: { compactedSessions: number; summaryTokens: number; lastAt?: number };
}

/**
 * The context DAG per agent from the session store, ordered by agent id; only `agentId`'s
 * when given (an empty list when it has no sessions).
 */
export async function contextDagByAgent(
  db: Pick<Database, 'query'>,
  agentId?: string,
): Promise<AgentContextDag[]> {
  const filter = [agentId ?? null, agentId ?? null];
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
       FROM agent_sessions WHERE (CAST(? AS TEXT) IS NULL OR agent_id = ?) GROUP BY agent_id ORDER BY agent_id`,
    filter,
  );
  const levels = await db.query<{ agent_id: string; depth: number; nodes: number; last_at: number }>(
    `SELECT s.agent_id, n.depth, COUNT(*) AS nodes, MAX(n.created_at) AS last_at
       FROM agent_context_nodes n JOIN agent_sessions s ON s.id = n.session_id
      WHERE (CAST(? AS TEXT) IS NULL OR s.agent_id = ?) GROUP BY s.agent_id, n.depth`,
    filter,
  );
  return rows.map((row) => {
    const own = levels.filter((level) => level.agent_id === row.agent_id);
    const nodesByDepth = Object.fromEntries(own.map((level) => [String(level.depth), level.nodes]));
    const lastAt = own.length > 0 ? Math.max(...own.map((level) => level.last_at)) : undefined;
    return {
      agentId: row.agent_id,
      nodes: {
        sessions: row.sessions,
        messages: row.messages ?? 0,
        summaries: own.reduce((sum, level) => sum + level.nodes, 0),
      },
      maxDepth: Math.max(row.compacted > 0 ? 1 : 0, ...own.map((level) => level.depth)),
      nodesByDepth,
      compactions: {
        compactedSessions: row.compacted,
        summaryTokens: row.summary_tokens ?? 0,
        ...(lastAt === undefined ? {} : { lastAt }),
      },
    };
  });
}
