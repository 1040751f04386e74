import { type Migration, migration } from '@agentd/storage';

/** Package name under which the migrations are recorded. */
export const MIGRATION_PACKAGE = '@agentd/learning';

/** Turn outcomes, learned procedures, memory recall statistics and sweeps (`learning_` prefix). */
export const learningMigrations: Migration[] = [
  migration(1, 'outcomes, procedures, memory stats, sweeps', [
    `
CREATE TABLE learning_outcomes (
  id INTEGER PRIMARY KEY,
  trace_id TEXT NOT NULL UNIQUE,
  session_key TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  origin TEXT NOT NULL,
  outcome TEXT NOT NULL,
  sources TEXT NOT NULL,
  signature TEXT NOT NULL,
  message TEXT NOT NULL,
  skills_used TEXT NOT NULL,
  memories TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  swept INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX learning_outcomes_session ON learning_outcomes (session_key, id);
CREATE INDEX learning_outcomes_sweep ON learning_outcomes (agent_id, swept);
CREATE TABLE learning_procedures (
  id INTEGER PRIMARY KEY,
  agent_id TEXT NOT NULL,
  name TEXT NOT NULL,
  signature TEXT NOT NULL,
  description TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL,
  successes TEXT NOT NULL DEFAULT '[]',
  failures TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (agent_id, name)
);
CREATE INDEX learning_procedures_signature ON learning_procedures (agent_id, signature);
CREATE TABLE learning_memory_stats (
  memory_id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  recalls INTEGER NOT NULL DEFAULT 0,
  helped INTEGER NOT NULL DEFAULT 0,
  failed INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'active',
  updated_at INTEGER NOT NULL
);
CREATE TABLE learning_sweeps (
  id INTEGER PRIMARY KEY,
  agent_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  scanned INTEGER NOT NULL,
  promoted INTEGER NOT NULL,
  demoted INTEGER NOT NULL,
  evicted INTEGER NOT NULL,
  admission_outcome TEXT,
  synthesis_abstained INTEGER NOT NULL,
  result TEXT NOT NULL
);
CREATE INDEX learning_sweeps_agent ON learning_sweeps (agent_id, at);
`,
  ]),
  migration(2, 'channel answers of turns (reactions)', [
    `
CREATE TABLE learning_answers (
  channel_type TEXT NOT NULL,
  channel_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  session_key TEXT NOT NULL,
  trace_id TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (channel_type, channel_id, message_id)
);
CREATE INDEX learning_answers_session ON learning_answers (session_key);
CREATE INDEX learning_answers_created ON learning_answers (created_at);
`,
  ]),
];
