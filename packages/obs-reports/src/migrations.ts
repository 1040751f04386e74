import type { Dialect, DialectMigrations, Migration } from '@agentd/storage';
import { columnTypes, migration } from '@agentd/storage';

/** Package name under which the migrations are recorded. */
export const MIGRATION_PACKAGE = '@agentd/obs-reports';

/**
 * The observability tables in either dialect, written once. `obs_diagnostics` holds diagnostic
 * events and health-signal rows, `obs_audit` the durable security-decision audit, `obs_channels`
 * and `obs_delivery` the channel-activity snapshots and delivery traces. Payload columns hold
 * scrubbed JSON of counts, ids and closed enums only. On PostgreSQL (cluster mode) row keys are
 * identities, epoch-ms and counter columns BIGINT.
 */
function schema(dialect: Dialect): string {
  const t = columnTypes(dialect);
  return `
CREATE TABLE obs_diagnostics (
  id ${t.rowKey},
  ts ${t.bigint} NOT NULL,
  category TEXT NOT NULL,
  session_key TEXT,
  agent_id TEXT,
  data TEXT NOT NULL
);
CREATE INDEX obs_diagnostics_ts ON obs_diagnostics (ts);
CREATE INDEX obs_diagnostics_category ON obs_diagnostics (category, ts);
CREATE INDEX obs_diagnostics_session ON obs_diagnostics (session_key, ts);
CREATE TABLE obs_audit (
  id ${t.rowKey},
  ts ${t.bigint} NOT NULL,
  kind TEXT NOT NULL,
  classification TEXT NOT NULL,
  outcome TEXT NOT NULL,
  severity TEXT NOT NULL,
  agent_id TEXT,
  session_key TEXT,
  refs TEXT NOT NULL
);
CREATE INDEX obs_audit_ts ON obs_audit (ts);
CREATE TABLE obs_channels (
  channel_id TEXT PRIMARY KEY,
  channel_type TEXT NOT NULL,
  last_active_at ${t.bigint} NOT NULL,
  messages_sent ${t.bigint} NOT NULL DEFAULT 0,
  messages_received ${t.bigint} NOT NULL DEFAULT 0
);
CREATE TABLE obs_delivery (
  id ${t.rowKey},
  ts ${t.bigint} NOT NULL,
  channel_id TEXT NOT NULL,
  outcome TEXT NOT NULL,
  latency_ms ${t.bigint} NOT NULL,
  error_kind TEXT
);
CREATE INDEX obs_delivery_ts ON obs_delivery (ts);
`;
}

const FIRST = 'diagnostics, audit, channels, delivery';

/** The tables on libsql. */
export const obsReportsMigrations: Migration[] = [migration(1, FIRST, [schema('libsql')])];

/** The same tables on PostgreSQL (cluster mode). */
export const obsReportsPgMigrations: Migration[] = [migration(1, FIRST, [schema('pg')])];

/** Both dialects' lists, as `db.migrate` takes them. */
export const obsReportsMigrationSet: DialectMigrations = {
  libsql: obsReportsMigrations,
  pg: obsReportsPgMigrations,
};
