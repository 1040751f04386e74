import { type Migration, migration } from '@agentd/storage';

/** Package name under which the migrations are recorded. */
export const MIGRATION_PACKAGE = '@agentd/obs-reports';

/**
 * The observability tables. `obs_diagnostics` holds diagnostic events and health-signal rows,
 * `obs_audit` the durable security-decision audit, `obs_channels` and `obs_delivery` the
 * channel-activity snapshots and delivery traces. Payload columns hold scrubbed JSON of
 * counts, ids and closed enums only.
 */
export const obsReportsMigrations: Migration[] = [
  migration(1, 'diagnostics, audit, channels, delivery', [
    `
CREATE TABLE obs_diagnostics (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  category TEXT NOT NULL,
  session_key TEXT,
  agent_id TEXT,
  data TEXT NOT NULL
);
CREATE INDEX obs_diagnostics_ts ON obs_diagnostics (ts);
CREATE INDEX obs_diagnostics_category ON obs_diagnostics (category, ts);
CREATE INDEX obs_diagnostics_session ON obs_diagnostics (session_key, ts);
CREATE TABLE obs_audit (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
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
  last_active_at INTEGER NOT NULL,
  messages_sent INTEGER NOT NULL DEFAULT 0,
  messages_received INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE obs_delivery (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  channel_id TEXT NOT NULL,
  outcome TEXT NOT NULL,
  latency_ms INTEGER NOT NULL,
  error_kind TEXT
);
CREATE INDEX obs_delivery_ts ON obs_delivery (ts);
`,
  ]),
];
