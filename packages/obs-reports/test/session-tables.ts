import type { Database } from '@agentd/storage';

/**
 * The read model the reports hold of the agent runtime's session store: only the columns they
 * read (`agent_sessions` for a session's creation and the fleet's recent-session count,
 * `agent_billing` for the billing summary), with the index the count uses. The runtime's
 * migrations own the full tables; tests and the benchmark create this narrower shape instead,
 * so this package never depends on @agentd/agent-runtime and a report that starts reading
 * another column has to say so here.
 */
export async function createSessionTables(db: Database): Promise<void> {
  const ms = db.dialect === 'pg' ? 'BIGINT' : 'INTEGER';
  await db.execute(`CREATE TABLE agent_sessions (
    session_key TEXT NOT NULL UNIQUE,
    created_at ${ms} NOT NULL,
    updated_at ${ms} NOT NULL
  )`);
  await db.execute('CREATE INDEX agent_sessions_updated ON agent_sessions (updated_at)');
  await db.execute(`CREATE TABLE agent_billing (
    provider TEXT NOT NULL,
    cache_read_tokens ${ms} NOT NULL,
    cache_saved_usd ${db.dialect === 'pg' ? 'DOUBLE PRECISION' : 'REAL'} NOT NULL
  )`);
}
