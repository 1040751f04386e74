import { type Migration, migration } from '@agentd/storage';

/** Package name under which the migrations are recorded. */
export const MIGRATION_PACKAGE = '@agentd/agent-runtime';

/**
 * Schema of sessions, messages and billing. Table names carry an `agent_` prefix so they
 * cannot collide with other packages sharing the database file.
 */
export const agentRuntimeMigrations: Migration[] = [
  migration(1, 'sessions, messages, billing', [
    `
CREATE TABLE agent_sessions (
  id INTEGER PRIMARY KEY,
  session_key TEXT NOT NULL UNIQUE,
  agent_id TEXT NOT NULL,
  channel_type TEXT NOT NULL,
  kind TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0,
  next_seq INTEGER NOT NULL DEFAULT 1,
  compacted_before_seq INTEGER NOT NULL DEFAULT 0,
  summary TEXT,
  summary_tokens INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0,
  steps INTEGER NOT NULL DEFAULT 0,
  last_steps INTEGER NOT NULL DEFAULT 0,
  last_provider TEXT,
  last_model TEXT,
  metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX agent_sessions_updated ON agent_sessions (updated_at);
CREATE TABLE agent_messages (
  id INTEGER PRIMARY KEY,
  session_id INTEGER NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  tool_calls TEXT,
  tool_call_id TEXT,
  tool_name TEXT,
  is_error INTEGER NOT NULL DEFAULT 0,
  tokens INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  trace_id TEXT,
  UNIQUE (session_id, seq)
);
CREATE VIRTUAL TABLE agent_messages_fts USING fts5 (content, content = 'agent_messages', content_rowid = 'id');
CREATE TRIGGER agent_messages_fts_insert AFTER INSERT ON agent_messages
  WHEN new.role IN ('user', 'assistant') AND new.content <> ''
BEGIN
  INSERT INTO agent_messages_fts (rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER agent_messages_fts_delete AFTER DELETE ON agent_messages
  WHEN old.role IN ('user', 'assistant') AND old.content <> ''
BEGIN
  INSERT INTO agent_messages_fts (agent_messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TABLE agent_billing (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  agent_id TEXT NOT NULL,
  session_key TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  cache_saved_usd REAL NOT NULL,
  calls INTEGER NOT NULL,
  trace_id TEXT
);
CREATE INDEX agent_billing_ts ON agent_billing (ts);
CREATE INDEX agent_billing_agent ON agent_billing (agent_id, ts);
CREATE INDEX agent_billing_session ON agent_billing (session_key, ts);
`,
  ]),
  migration(2, 'turn keys: a turn named by its caller runs once', [
    `
CREATE TABLE agent_turn_keys (
  turn_key TEXT PRIMARY KEY,
  session_key TEXT NOT NULL,
  response TEXT NOT NULL,
  finish_reason TEXT NOT NULL,
  end_reason TEXT NOT NULL,
  steps INTEGER NOT NULL,
  trace_id TEXT NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
`,
  ]),
  migration(3, 'context DAG: summary nodes over message ranges and earlier summaries', [
    `
CREATE TABLE agent_context_nodes (
  id INTEGER PRIMARY KEY,
  session_id INTEGER NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
  depth INTEGER NOT NULL,
  content TEXT NOT NULL,
  tokens INTEGER NOT NULL,
  from_seq INTEGER NOT NULL,
  to_seq INTEGER NOT NULL,
  parent_id INTEGER REFERENCES agent_context_nodes (id) ON DELETE SET NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX agent_context_nodes_session ON agent_context_nodes (session_id, parent_id, depth, from_seq);
`,
  ]),
];
