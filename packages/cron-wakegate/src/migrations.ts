import type { Dialect, DialectMigrations, Migration } from '@agentd/storage';
import { columnTypes, migration, ownedColumns } from '@agentd/storage';

/** The migration key this package records in `_migrations`. */
export const MIGRATION_PACKAGE = '@agentd/cron-wakegate';

/**
 * The tables in either dialect, written once. On PostgreSQL (cluster mode) epoch-ms columns are
 * BIGINT, the queue's key is an identity, `cron_jobs.fence` grows at each fire won by the
 * compare-and-set on `next_run_at_ms`, a run in progress is a `running` row owned under a lease
 * (the cross-instance overlap check), and a scheduled or catch-up fire has one run row per
 * (job, scheduled time).
 */
function schema(dialect: Dialect): string[] {
  const pg = dialect === 'pg';
  const t = columnTypes(dialect);
  const owned = pg ? `,\n        ${ownedColumns('pg')}` : '';
  const statuses = pg ? "'ok', 'error', 'skipped', 'running'" : "'ok', 'error', 'skipped'";
  return [
    `CREATE TABLE cron_jobs (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        agent_id TEXT NOT NULL,
        message TEXT NOT NULL,
        schedule TEXT NOT NULL,
        schedule_kind TEXT NOT NULL CHECK (schedule_kind IN ('cron', 'interval', 'once')),
        enabled INTEGER NOT NULL,
        timeout_ms ${t.bigint},
        wake_gate TEXT,
        next_run_at_ms ${t.bigint} NOT NULL,
        last_run_at_ms ${t.bigint},
        last_error TEXT,
        consecutive_errors INTEGER NOT NULL DEFAULT 0,
        created_at_ms ${t.bigint} NOT NULL,
        updated_at_ms ${t.bigint} NOT NULL${pg ? ',\n        tenant TEXT' : ''}${owned}
      )`,
    `CREATE TABLE cron_runs (
        run_id TEXT PRIMARY KEY,
        job_id TEXT NOT NULL,
        job_name TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        ts ${t.bigint} NOT NULL,
        scheduled_at_ms ${t.bigint},
        trigger TEXT NOT NULL CHECK (trigger IN ('schedule', 'catch-up', 'force', 'due')),
        status TEXT NOT NULL CHECK (status IN (${statuses})),
        skip_reason TEXT CHECK (skip_reason IN ('wake-gate', 'overlap')),
        duration_ms ${t.bigint} NOT NULL,
        summary TEXT,
        error TEXT,
        gated INTEGER NOT NULL DEFAULT 0,
        gate_outcome TEXT CHECK (gate_outcome IN ('wake', 'skip', 'failed-open')),
        gate_failure TEXT CHECK (gate_failure IN ('crash', 'timeout', 'output-cap', 'invalid-output')),
        gate_reason TEXT,
        gate_duration_ms ${t.bigint},
        tool_calls INTEGER,
        est_turns_saved INTEGER,
        root_run_id TEXT,
        session_key TEXT,
        tokens_total ${t.bigint}${owned}
      )`,
    'CREATE INDEX cron_runs_job_ts ON cron_runs (job_id, ts DESC)',
    'CREATE INDEX cron_runs_ts ON cron_runs (ts)',
    ...(pg
      ? [
          `CREATE UNIQUE INDEX cron_runs_slot ON cron_runs (job_id, scheduled_at_ms)
            WHERE trigger IN ('schedule', 'catch-up')`,
          "CREATE INDEX cron_runs_running ON cron_runs (job_id) WHERE status = 'running'",
        ]
      : []),
    `CREATE TABLE heartbeat_beats (
        id TEXT PRIMARY KEY,
        ts ${t.bigint} NOT NULL,
        agent_id TEXT NOT NULL,
        sources TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
        duration_ms ${t.bigint} NOT NULL,
        queued_texts INTEGER NOT NULL,
        summary TEXT,
        error TEXT
      )`,
    'CREATE INDEX heartbeat_beats_ts ON heartbeat_beats (ts DESC)',
    `CREATE TABLE heartbeat_queue (
        seq ${t.serialKey},
        ts ${t.bigint} NOT NULL,
        text TEXT NOT NULL
      )`,
  ];
}

const FIRST = 'jobs, runs, heartbeat beats and queue';

/**
 * The package's schema on libsql. `cron_runs` is the evidence table the observability reports
 * read: one row per fire (ran, skipped, failed open, errored); see the README for its columns.
 */
export const cronWakegateMigrations: Migration[] = [
  migration(1, FIRST, schema('libsql')),
  migration(2, 'a job may belong to a tenant', ['ALTER TABLE cron_jobs ADD COLUMN tenant TEXT']),
];

/** The same tables on PostgreSQL (cluster mode), the tenant column included from the start. */
export const cronWakegatePgMigrations: Migration[] = [migration(1, FIRST, schema('pg'))];

/** Both dialects' lists: `db.migrate(MIGRATION_PACKAGE, cronWakegateMigrationSet)` picks the right one. */
export const cronWakegateMigrationSet: DialectMigrations = {
  libsql: cronWakegateMigrations,
  pg: cronWakegatePgMigrations,
};
