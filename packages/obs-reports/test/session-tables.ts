import type { Database } from '@agentd/storage';

/**
 * The columns of the agent runtime's session store that the reports read (`agent_sessions`
 * for a session's creation and the fleet's session count, `agent_billing` for the billing
 * summary), with the runtime's index on `updated_at`. Tests and the benchmark create them
 * instead of running @agentd/agent-runtime's migrations, so this package never depends on it.
 */
export async function createSessionTables(db: Database): Promise<void> {
  await db.execute(`CREATE TABLE agent_sessions (
    id INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL UNIQUE,
    agent_id TEXT NOT NULL,
    channel_type TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  )`);
  await db.execute('CREATE INDEX agent_sessions_updated ON agent_sessions (updated_at)');
  await db.execute(`CREATE TABLE agent_billing (
    id INTEGER PRIMARY KEY,
    provider TEXT NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    cache_saved_usd REAL NOT NULL
  )`);
}
