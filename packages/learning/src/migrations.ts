import type { Dialect, DialectMigrations, Migration } from '@agentd/storage';
import { columnTypes, migration } from '@agentd/storage';

/** Package name under which the migrations are recorded. */
export const MIGRATION_PACKAGE = '@agentd/learning';

// Each step's tables in either dialect, written once: on PostgreSQL (cluster mode) row keys are
// identities, epoch-ms and recall-count columns BIGINT.

function outcomesAndProcedures(dialect: Dialect): string {
  const t = columnTypes(dialect);
  return `
CREATE TABLE learning_outcomes (
  id ${t.rowKey},
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
  created_at ${t.bigint} NOT NULL,
  swept INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX learning_outcomes_session ON learning_outcomes (session_key, id);
CREATE INDEX learning_outcomes_sweep ON learning_outcomes (agent_id, swept);
CREATE TABLE learning_procedures (
  id ${t.rowKey},
  agent_id TEXT NOT NULL,
  name TEXT NOT NULL,
  signature TEXT NOT NULL,
  description TEXT NOT NULL,
  body TEXT NOT NULL,
  state TEXT NOT NULL,
  successes TEXT NOT NULL DEFAULT '[]',
  failures TEXT NOT NULL DEFAULT '[]',
  created_at ${t.bigint} NOT NULL,
  updated_at ${t.bigint} NOT NULL,
  UNIQUE (agent_id, name)
);
CREATE INDEX learning_procedures_signature ON learning_procedures (agent_id, signature);
CREATE TABLE learning_memory_stats (
  memory_id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,
  recalls ${t.bigint} NOT NULL DEFAULT 0,
  helped ${t.bigint} NOT NULL DEFAULT 0,
  failed ${t.bigint} NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'active',
  updated_at ${t.bigint} NOT NULL
);
CREATE TABLE learning_sweeps (
  id ${t.rowKey},
  agent_id TEXT NOT NULL,
  at ${t.bigint} NOT NULL,
  scanned INTEGER NOT NULL,
  promoted INTEGER NOT NULL,
  demoted INTEGER NOT NULL,
  evicted INTEGER NOT NULL,
  admission_outcome TEXT,
  synthesis_abstained INTEGER NOT NULL,
  result TEXT NOT NULL
);
CREATE INDEX learning_sweeps_agent ON learning_sweeps (agent_id, at);
`;
}

function answers(dialect: Dialect): string {
  const t = columnTypes(dialect);
  return `
CREATE TABLE learning_answers (
  channel_type TEXT NOT NULL,
  channel_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  session_key TEXT NOT NULL,
  trace_id TEXT,
  created_at ${t.bigint} NOT NULL,
  PRIMARY KEY (channel_type, channel_id, message_id)
);
CREATE INDEX learning_answers_session ON learning_answers (session_key);
CREATE INDEX learning_answers_created ON learning_answers (created_at);
`;
}

/** Turn outcomes, learned procedures, memory recall statistics and sweeps (`learning_` prefix). */
export const learningMigrations: Migration[] = [
  migration(1, 'outcomes, procedures, memory stats, sweeps', [outcomesAndProcedures('libsql')]),
  migration(2, 'channel answers of turns (reactions)', [answers('libsql')]),
];

/** The same tables on PostgreSQL (cluster mode), in one step since it shipped with all of them. */
export const learningPgMigrations: Migration[] = [
  migration(1, 'outcomes, procedures, memory stats, sweeps, answers', [
    outcomesAndProcedures('pg'),
    answers('pg'),
  ]),
];

/** Both dialects' lists, as `db.migrate` takes them. */
export const learningMigrationSet: DialectMigrations = {
  libsql: learningMigrations,
  pg: learningPgMigrations,
};
