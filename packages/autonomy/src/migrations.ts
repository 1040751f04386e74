import type { Dialect, DialectMigrations, Migration } from '@agentd/storage';
import { columnTypes, migration, ownedColumns } from '@agentd/storage';

/** The migration key this package records in `_migrations`. */
export const MIGRATION_PACKAGE = '@agentd/autonomy';

// Each step's tables in either dialect, written once: on PostgreSQL (cluster mode) epoch-ms and
// token columns are BIGINT, cost is double precision, generated keys are identities.

/**
 * The durable run table and the leases. A run row is written before its turn starts and
 * updated as it ends, so a crash loses none; a lease row keeps only the SHA-256 of its secret.
 */
function runsAndLeases(dialect: Dialect): string[] {
  const t = columnTypes(dialect);
  return [
    `CREATE TABLE autonomy_runs (
        run_id TEXT PRIMARY KEY,
        parent_run_id TEXT,
        root_run_id TEXT NOT NULL,
        depth INTEGER NOT NULL,
        agent_id TEXT NOT NULL,
        session_key TEXT NOT NULL UNIQUE,
        parent_session_key TEXT NOT NULL,
        task TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'killed', 'timeout', 'orphaned')),
        end_reason TEXT,
        client_id TEXT,
        memory_tenant TEXT,
        capabilities TEXT NOT NULL,
        lease_id TEXT,
        budget TEXT NOT NULL,
        tokens_input ${t.bigint} NOT NULL DEFAULT 0,
        tokens_output ${t.bigint} NOT NULL DEFAULT 0,
        tokens_total ${t.bigint} NOT NULL DEFAULT 0,
        cost_usd ${t.double} NOT NULL DEFAULT 0,
        tool_calls INTEGER NOT NULL DEFAULT 0,
        response TEXT,
        error TEXT,
        revoked INTEGER NOT NULL DEFAULT 0,
        evicted INTEGER NOT NULL DEFAULT 0,
        resumed INTEGER NOT NULL DEFAULT 0,
        announced INTEGER NOT NULL DEFAULT 0,
        started_at ${t.bigint} NOT NULL,
        completed_at ${t.bigint},
        updated_at ${t.bigint} NOT NULL
      )`,
    'CREATE INDEX autonomy_runs_root ON autonomy_runs (root_run_id)',
    'CREATE INDEX autonomy_runs_parent ON autonomy_runs (parent_run_id)',
    'CREATE INDEX autonomy_runs_parent_session ON autonomy_runs (parent_session_key)',
    'CREATE INDEX autonomy_runs_status ON autonomy_runs (status, started_at DESC)',
    'CREATE INDEX autonomy_runs_started ON autonomy_runs (started_at)',
    `CREATE TABLE autonomy_leases (
        lease_id TEXT PRIMARY KEY,
        secret_hash TEXT NOT NULL UNIQUE,
        run_id TEXT NOT NULL,
        root_run_id TEXT NOT NULL,
        parent_lease_id TEXT,
        agent_id TEXT NOT NULL,
        capabilities TEXT NOT NULL,
        created_at ${t.bigint} NOT NULL,
        expires_at ${t.bigint} NOT NULL,
        revoked_at ${t.bigint}
      )`,
    'CREATE INDEX autonomy_leases_root ON autonomy_leases (root_run_id)',
    'CREATE INDEX autonomy_leases_parent ON autonomy_leases (parent_lease_id)',
    `CREATE TABLE autonomy_signals (
        id ${t.serialKey},
        ts ${t.bigint} NOT NULL,
        signal TEXT NOT NULL CHECK (signal IN ('resumed', 'orphaned', 'revoked', 'killed', 'denial_breaker', 'budget_breach', 'breaker_trip')),
        run_id TEXT NOT NULL,
        root_run_id TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 1
      )`,
    'CREATE INDEX autonomy_signals_ts ON autonomy_signals (ts)',
  ];
}

/**
 * A `running` run is owned by the instance executing it (owner, lease, fence); a kill or steer
 * asked on another instance is a row flag (`stop_reason`) or an `autonomy_steers` row the owner
 * picks up.
 */
function ownedRunsAndSteers(dialect: Dialect): string[] {
  const t = columnTypes(dialect);
  return [
    ...ownedColumns(dialect)
      .split(', ')
      .map((column) => `ALTER TABLE autonomy_runs ADD COLUMN ${column}`),
    'ALTER TABLE autonomy_runs ADD COLUMN stop_reason TEXT',
    'ALTER TABLE autonomy_runs ADD COLUMN stop_detail TEXT',
    `CREATE TABLE autonomy_steers (
        id ${t.serialKey},
        run_id TEXT NOT NULL,
        message TEXT NOT NULL,
        created_at ${t.bigint} NOT NULL
      )`,
    'CREATE INDEX autonomy_steers_run ON autonomy_steers (run_id, id)',
  ];
}

function migrations(dialect: Dialect): Migration[] {
  return [
    migration(1, 'runs and leases', runsAndLeases(dialect)),
    migration(
      2,
      'runs are owned and leased; stop requests and steers reach the owner',
      ownedRunsAndSteers(dialect),
    ),
  ];
}

/** The package's schema on libsql. */
export const autonomyMigrations: Migration[] = migrations('libsql');

/** The same tables on PostgreSQL (cluster mode). */
export const autonomyPgMigrations: Migration[] = migrations('pg');

/** Both dialects' lists, as `db.migrate` takes them. */
export const autonomyMigrationSet: DialectMigrations = {
  libsql: autonomyMigrations,
  pg: autonomyPgMigrations,
};
