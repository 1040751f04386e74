import { type DialectMigrations, type Migration, migration, ownedColumns } from '@agentd/storage';

/** The migration key this package records in `_migrations`. */
export const MIGRATION_PACKAGE = '@agentd/cron-wakegate';

/**
 * The package's schema. `cron_runs` is the evidence table the observability reports read:
 * one row per fire (ran, skipped, failed open, errored); see the README for its columns.
 */
export const cronWakegateMigrations: Migration[] = [
  migration(1, 'jobs, runs, heartbeat beats and queue', [
    `CREATE TABLE cron_jobs (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        agent_id TEXT NOT NULL,
        message TEXT NOT NULL,
        schedule TEXT NOT NULL,
        schedule_kind TEXT NOT NULL CHECK (schedule_kind IN ('cron', 'interval', 'once')),
        enabled INTEGER NOT NULL,
        timeout_ms INTEGER,
        wake_gate TEXT,
        next_run_at_ms INTEGER NOT NULL,
        last_run_at_ms INTEGER,
        last_error TEXT,
        consecutive_errors INTEGER NOT NULL DEFAULT 0,
        created_at_ms INTEGER NOT NULL,
        updated_at_ms INTEGER NOT NULL
      )`,
    `CREATE TABLE cron_runs (
        run_id TEXT PRIMARY KEY,
        job_id TEXT NOT NULL,
        job_name TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        ts INTEGER NOT NULL,
        scheduled_at_ms INTEGER,
        trigger TEXT NOT NULL CHECK (trigger IN ('schedule', 'catch-up', 'force', 'due')),
        status TEXT NOT NULL CHECK (status IN ('ok', 'error', 'skipped')),
        skip_reason TEXT CHECK (skip_reason IN ('wake-gate', 'overlap')),
        duration_ms INTEGER NOT NULL,
        summary TEXT,
        error TEXT,
        gated INTEGER NOT NULL DEFAULT 0,
        gate_outcome TEXT CHECK (gate_outcome IN ('wake', 'skip', 'failed-open')),
        gate_failure TEXT CHECK (gate_failure IN ('crash', 'timeout', 'output-cap', 'invalid-output')),
        gate_reason TEXT,
        gate_duration_ms INTEGER,
        tool_calls INTEGER,
        est_turns_saved INTEGER,
        root_run_id TEXT,
        session_key TEXT,
        tokens_total INTEGER
      )`,
    'CREATE INDEX cron_runs_job_ts ON cron_runs (job_id, ts DESC)',
    'CREATE INDEX cron_runs_ts ON cron_runs (ts)',
    `CREATE TABLE heartbeat_beats (
        id TEXT PRIMARY KEY,
        ts INTEGER NOT NULL,
        agent_id TEXT NOT NULL,
        sources TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
        duration_ms INTEGER NOT NULL,
        queued_texts INTEGER NOT NULL,
        summary TEXT,
        error TEXT
      )`,
    'CREATE INDEX heartbeat_beats_ts ON heartbeat_beats (ts DESC)',
    `CREATE TABLE heartbeat_queue (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        ts INTEGER NOT NULL,
        text TEXT NOT NULL
      )`,
  ]),
  migration(2, 'a job may belong to a tenant', ['ALTER TABLE cron_jobs ADD COLUMN tenant TEXT']),
];

/**
 * The same tables on PostgreSQL (cluster mode), written for it: epoch-ms columns are BIGINT,
 * the queue's key is an identity. `cron_jobs.fence` grows at each fire won by the
 * compare-and-set on `next_run_at_ms`, and a scheduled or catch-up fire has one run row per
 * (job, scheduled time). The service does not run on PostgreSQL yet: it still migrates the
 * libsql list, which PostgreSQL refuses.
 */
export const cronWakegatePgMigrations: Migration[] = [
  migration(1, 'jobs, runs, heartbeat beats and queue', [
    `CREATE TABLE cron_jobs (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        agent_id TEXT NOT NULL,
        message TEXT NOT NULL,
        schedule TEXT NOT NULL,
        schedule_kind TEXT NOT NULL CHECK (schedule_kind IN ('cron', 'interval', 'once')),
        enabled INTEGER NOT NULL,
        timeout_ms BIGINT,
        wake_gate TEXT,
        next_run_at_ms BIGINT NOT NULL,
        last_run_at_ms BIGINT,
        last_error TEXT,
        consecutive_errors INTEGER NOT NULL DEFAULT 0,
        created_at_ms BIGINT NOT NULL,
        updated_at_ms BIGINT NOT NULL,
        tenant TEXT,
        ${ownedColumns('pg')}
      );
    CREATE TABLE cron_runs (
        run_id TEXT PRIMARY KEY,
        job_id TEXT NOT NULL,
        job_name TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        ts BIGINT NOT NULL,
        scheduled_at_ms BIGINT,
        trigger TEXT NOT NULL CHECK (trigger IN ('schedule', 'catch-up', 'force', 'due')),
        status TEXT NOT NULL CHECK (status IN ('ok', 'error', 'skipped')),
        skip_reason TEXT CHECK (skip_reason IN ('wake-gate', 'overlap')),
        duration_ms BIGINT NOT NULL,
        summary TEXT,
        error TEXT,
        gated INTEGER NOT NULL DEFAULT 0,
        gate_outcome TEXT CHECK (gate_outcome IN ('wake', 'skip', 'failed-open')),
        gate_failure TEXT CHECK (gate_failure IN ('crash', 'timeout', 'output-cap', 'invalid-output')),
        gate_reason TEXT,
        gate_duration_ms BIGINT,
        tool_calls INTEGER,
        est_turns_saved INTEGER,
        root_run_id TEXT,
        session_key TEXT,
        tokens_total BIGINT
      );
    CREATE INDEX cron_runs_job_ts ON cron_runs (job_id, ts DESC);
    CREATE INDEX cron_runs_ts ON cron_runs (ts);
    CREATE UNIQUE INDEX cron_runs_slot ON cron_runs (job_id, scheduled_at_ms)
      WHERE trigger IN ('schedule', 'catch-up');
    CREATE TABLE heartbeat_beats (
        id TEXT PRIMARY KEY,
        ts BIGINT NOT NULL,
        agent_id TEXT NOT NULL,
        sources TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
        duration_ms BIGINT NOT NULL,
        queued_texts INTEGER NOT NULL,
        summary TEXT,
        error TEXT
      );
    CREATE INDEX heartbeat_beats_ts ON heartbeat_beats (ts DESC);
    CREATE TABLE heartbeat_queue (
        seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        ts BIGINT NOT NULL,
        text TEXT NOT NULL
      );`,
  ]),
];

/** Both dialects' lists, for `db.migrate` once the service runs on PostgreSQL. */
export const cronWakegateMigrationSet: DialectMigrations = {
  libsql: cronWakegateMigrations,
  pg: cronWakegatePgMigrations,
};
