import { type DialectMigrations, type Migration, migration, ownedColumns } from '@agentd/storage';

/** The migration key this package records in `_migrations`. */
export const MIGRATION_PACKAGE = '@agentd/autonomy';

/**
 * The durable run table and the leases. A run row is written before its turn starts and
 * updated as it ends, so a crash loses none; a lease row keeps only the SHA-256 of its secret.
 */
export const autonomyMigrations: Migration[] = [
  migration(1, 'runs and leases', [
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
        tokens_input INTEGER NOT NULL DEFAULT 0,
        tokens_output INTEGER NOT NULL DEFAULT 0,
        tokens_total INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL NOT NULL DEFAULT 0,
        tool_calls INTEGER NOT NULL DEFAULT 0,
        response TEXT,
        error TEXT,
        revoked INTEGER NOT NULL DEFAULT 0,
        evicted INTEGER NOT NULL DEFAULT 0,
        resumed INTEGER NOT NULL DEFAULT 0,
        announced INTEGER NOT NULL DEFAULT 0,
        started_at INTEGER NOT NULL,
        completed_at INTEGER,
        updated_at INTEGER NOT NULL
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
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        revoked_at INTEGER
      )`,
    'CREATE INDEX autonomy_leases_root ON autonomy_leases (root_run_id)',
    'CREATE INDEX autonomy_leases_parent ON autonomy_leases (parent_lease_id)',
    `CREATE TABLE autonomy_signals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts INTEGER NOT NULL,
        signal TEXT NOT NULL CHECK (signal IN ('resumed', 'orphaned', 'revoked', 'killed', 'denial_breaker', 'budget_breach', 'breaker_trip')),
        run_id TEXT NOT NULL,
        root_run_id TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 1
      )`,
    'CREATE INDEX autonomy_signals_ts ON autonomy_signals (ts)',
  ]),
  migration(2, 'runs are owned and leased; stop requests and steers reach the owner', [
    ...ownedColumns('libsql')
      .split(', ')
      .map((column) => `ALTER TABLE autonomy_runs ADD COLUMN ${column}`),
    'ALTER TABLE autonomy_runs ADD COLUMN stop_reason TEXT',
    'ALTER TABLE autonomy_runs ADD COLUMN stop_detail TEXT',
    `CREATE TABLE autonomy_steers (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        message TEXT NOT NULL,
        created_at INTEGER NOT NULL
      )`,
    'CREATE INDEX autonomy_steers_run ON autonomy_steers (run_id, id)',
  ]),
];

/**
 * The same tables on PostgreSQL (cluster mode), written for it: epoch-ms and token columns are
 * BIGINT, cost is double precision, the signal key is an identity. A `running` run is owned by
 * the instance executing it (owner, lease, fence); a kill or steer asked on another instance
 * is a row flag (`stop_reason`) or an `autonomy_steers` row the owner picks up.
 */
export const autonomyPgMigrations: Migration[] = [
  migration(1, 'runs and leases', [
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
        tokens_input BIGINT NOT NULL DEFAULT 0,
        tokens_output BIGINT NOT NULL DEFAULT 0,
        tokens_total BIGINT NOT NULL DEFAULT 0,
        cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0,
        tool_calls INTEGER NOT NULL DEFAULT 0,
        response TEXT,
        error TEXT,
        revoked INTEGER NOT NULL DEFAULT 0,
        evicted INTEGER NOT NULL DEFAULT 0,
        resumed INTEGER NOT NULL DEFAULT 0,
        announced INTEGER NOT NULL DEFAULT 0,
        started_at BIGINT NOT NULL,
        completed_at BIGINT,
        updated_at BIGINT NOT NULL
      );
    CREATE INDEX autonomy_runs_root ON autonomy_runs (root_run_id);
    CREATE INDEX autonomy_runs_parent ON autonomy_runs (parent_run_id);
    CREATE INDEX autonomy_runs_parent_session ON autonomy_runs (parent_session_key);
    CREATE INDEX autonomy_runs_status ON autonomy_runs (status, started_at DESC);
    CREATE INDEX autonomy_runs_started ON autonomy_runs (started_at);
    CREATE TABLE autonomy_leases (
        lease_id TEXT PRIMARY KEY,
        secret_hash TEXT NOT NULL UNIQUE,
        run_id TEXT NOT NULL,
        root_run_id TEXT NOT NULL,
        parent_lease_id TEXT,
        agent_id TEXT NOT NULL,
        capabilities TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        revoked_at BIGINT
      );
    CREATE INDEX autonomy_leases_root ON autonomy_leases (root_run_id);
    CREATE INDEX autonomy_leases_parent ON autonomy_leases (parent_lease_id);
    CREATE TABLE autonomy_signals (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        ts BIGINT NOT NULL,
        signal TEXT NOT NULL CHECK (signal IN ('resumed', 'orphaned', 'revoked', 'killed', 'denial_breaker', 'budget_breach', 'breaker_trip')),
        run_id TEXT NOT NULL,
        root_run_id TEXT NOT NULL,
        count INTEGER NOT NULL DEFAULT 1
      );
    CREATE INDEX autonomy_signals_ts ON autonomy_signals (ts);`,
  ]),
  migration(2, 'runs are owned and leased; stop requests and steers reach the owner', [
    `ALTER TABLE autonomy_runs ADD COLUMN owner TEXT, ADD COLUMN lease_until BIGINT,
       ADD COLUMN fence BIGINT NOT NULL DEFAULT 0, ADD COLUMN stop_reason TEXT, ADD COLUMN stop_detail TEXT;
    CREATE TABLE autonomy_steers (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        run_id TEXT NOT NULL,
        message TEXT NOT NULL,
        created_at BIGINT NOT NULL
      );
    CREATE INDEX autonomy_steers_run ON autonomy_steers (run_id, id);`,
  ]),
];

/** Both dialects' lists, as `db.migrate` takes them. */
export const autonomyMigrationSet: DialectMigrations = {
  libsql: autonomyMigrations,
  pg: autonomyPgMigrations,
};
