import type { Dialect, DialectMigrations, Migration } from '@agentd/storage';
import { columnTypes, migration } from '@agentd/storage';

/** Package name under which the migrations are recorded. */
export const MIGRATION_PACKAGE = '@agentd/agent-runtime';

// Each step's tables in either dialect, written once. Table names carry an `agent_` prefix so
// they cannot collide with other packages sharing the database. On PostgreSQL epoch-ms columns,
// sequences and token totals are BIGINT, keys identities, costs double precision.

// Message search on libsql: an external-content FTS5 index of user and assistant messages, kept
// by triggers.
const LIBSQL_MESSAGE_SEARCH = `CREATE VIRTUAL TABLE agent_messages_fts USING fts5 (content, content = 'agent_messages', content_rowid = 'id');
CREATE TRIGGER agent_messages_fts_insert AFTER INSERT ON agent_messages
  WHEN new.role IN ('user', 'assistant') AND new.content <> ''
BEGIN
  INSERT INTO agent_messages_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER agent_messages_fts_delete AFTER DELETE ON agent_messages
  WHEN old.role IN ('user', 'assistant') AND old.content <> ''
BEGIN
  INSERT INTO agent_messages_fts (agent_messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;`;

// Message search on PostgreSQL: `content_tsv`, a generated `tsvector` ('simple' configuration:
// lower-cased words, no stemming, as FTS5's default tokenizer) of user and assistant messages,
// with a GIN index.
const PG_MESSAGE_TSV = `
  content_tsv tsvector GENERATED ALWAYS AS (
    CASE WHEN role IN ('user', 'assistant') THEN to_tsvector('simple', content) END
  ) STORED,`;
const PG_MESSAGE_SEARCH = `CREATE INDEX agent_messages_fts ON agent_messages USING GIN (content_tsv);`;

function sessionsMessagesBilling(dialect: Dialect): string {
  const pg = dialect === 'pg';
  const t = columnTypes(dialect);
  return `
CREATE TABLE agent_sessions (
  id ${t.rowKey},
  session_key TEXT NOT NULL UNIQUE,
  agent_id TEXT NOT NULL,
  channel_type TEXT NOT NULL,
  kind TEXT NOT NULL,
  created_at ${t.bigint} NOT NULL,
  updated_at ${t.bigint} NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0,
  next_seq ${t.bigint} NOT NULL DEFAULT 1,
  compacted_before_seq ${t.bigint} NOT NULL DEFAULT 0,
  summary TEXT,
  summary_tokens ${t.bigint} NOT NULL DEFAULT 0,
  input_tokens ${t.bigint} NOT NULL DEFAULT 0,
  output_tokens ${t.bigint} NOT NULL DEFAULT 0,
  cache_read_tokens ${t.bigint} NOT NULL DEFAULT 0,
  cache_write_tokens ${t.bigint} NOT NULL DEFAULT 0,
  cost_usd ${t.double} NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0,
  steps INTEGER NOT NULL DEFAULT 0,
  last_steps INTEGER NOT NULL DEFAULT 0,
  last_provider TEXT,
  last_model TEXT,
  metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX agent_sessions_updated ON agent_sessions (updated_at);
CREATE TABLE agent_messages (
  id ${t.rowKey},
  session_id ${t.bigint} NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
  seq ${t.bigint} NOT NULL,
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  tool_calls TEXT,
  tool_call_id TEXT,
  tool_name TEXT,
  is_error INTEGER NOT NULL DEFAULT 0,
  tokens INTEGER NOT NULL,
  created_at ${t.bigint} NOT NULL,
  trace_id TEXT,${pg ? PG_MESSAGE_TSV : ''}
  UNIQUE (session_id, seq)
);
${pg ? PG_MESSAGE_SEARCH : LIBSQL_MESSAGE_SEARCH}
CREATE TABLE agent_billing (
  id ${t.rowKey},
  ts ${t.bigint} NOT NULL,
  agent_id TEXT NOT NULL,
  session_key TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  input_tokens ${t.bigint} NOT NULL,
  output_tokens ${t.bigint} NOT NULL,
  cache_read_tokens ${t.bigint} NOT NULL,
  cache_write_tokens ${t.bigint} NOT NULL,
  cost_usd ${t.double} NOT NULL,
  cache_saved_usd ${t.double} NOT NULL,
  calls INTEGER NOT NULL,
  trace_id TEXT
);
CREATE INDEX agent_billing_ts ON agent_billing (ts);
CREATE INDEX agent_billing_agent ON agent_billing (agent_id, ts);
CREATE INDEX agent_billing_session ON agent_billing (session_key, ts);
`;
}

function turnKeys(dialect: Dialect): string {
  const t = columnTypes(dialect);
  return `
CREATE TABLE agent_turn_keys (
  turn_key TEXT PRIMARY KEY,
  session_key TEXT NOT NULL,
  response TEXT NOT NULL,
  finish_reason TEXT NOT NULL,
  end_reason TEXT NOT NULL,
  steps INTEGER NOT NULL,
  trace_id TEXT NOT NULL,
  input_tokens ${t.bigint} NOT NULL,
  output_tokens ${t.bigint} NOT NULL,
  created_at ${t.bigint} NOT NULL
);
`;
}

function contextNodes(dialect: Dialect): string {
  const t = columnTypes(dialect);
  return `
CREATE TABLE agent_context_nodes (
  id ${t.rowKey},
  session_id ${t.bigint} NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
  depth INTEGER NOT NULL,
  content TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  from_seq ${t.bigint} NOT NULL,
  to_seq ${t.bigint} NOT NULL,
  parent_id ${t.bigint} REFERENCES agent_context_nodes (id) ON DELETE SET NULL,
  created_at ${t.bigint} NOT NULL
);
CREATE INDEX agent_context_nodes_session ON agent_context_nodes (session_id, parent_id, depth, from_seq);
`;
}

/** Schema of sessions, messages and billing on libsql, step by step as it shipped. */
export const agentRuntimeMigrations: Migration[] = [
  migration(1, 'sessions, messages, billing', [sessionsMessagesBilling('libsql')]),
  migration(2, 'turn keys: a turn named by its caller runs once', [turnKeys('libsql')]),
  migration(3, 'context DAG: summary nodes over message ranges and earlier summaries', [
    contextNodes('libsql'),
  ]),
];

/** The same tables on PostgreSQL, in one step since it shipped with all of them. */
export const agentRuntimePgMigrations: Migration[] = [
  migration(1, 'sessions, messages, billing, turn keys, context DAG', [
    sessionsMessagesBilling('pg'),
    turnKeys('pg'),
    contextNodes('pg'),
  ]),
];

/** Both dialects' lists, as `db.migrate(MIGRATION_PACKAGE, agentRuntimeMigrationSet)` takes them. */
export const agentRuntimeMigrationSet: DialectMigrations = {
  libsql: agentRuntimeMigrations,
  pg: agentRuntimePgMigrations,
};
