import type { Dialect, DialectMigrations, Migration } from '@agentd/storage';
import { columnTypes, migration } from '@agentd/storage';

/** The migration key this package records in `_migrations`. */
export const MIGRATION_PACKAGE = '@agentd/approvals';

/**
 * The table in either dialect, written once: one row per approval request, written when it is
 * asked and updated when it is decided. `args_digest` is the scrubbed digest (JSON of
 * `ArgsDigest`), never the raw arguments; `fingerprint` is the SHA-256 that identical requests
 * share. Epoch-ms columns are BIGINT on PostgreSQL.
 */
function requests(dialect: Dialect): string[] {
  const t = columnTypes(dialect);
  return [
    `CREATE TABLE approval_requests (
        id TEXT PRIMARY KEY,
        session_key TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        args_digest TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied')),
        reason TEXT,
        resolved_by TEXT,
        created_at_ms ${t.bigint} NOT NULL,
        expires_at_ms ${t.bigint} NOT NULL,
        resolved_at_ms ${t.bigint}
      )`,
    'CREATE INDEX approval_requests_status ON approval_requests (status, created_at_ms)',
  ];
}

/**
 * The steps, the same in both dialects. `owner` is the instance whose turn waits on the request:
 * in cluster mode a start denies only the requests of instances whose membership lease has expired.
 */
function migrations(dialect: Dialect): Migration[] {
  return [
    migration(1, 'approval requests', requests(dialect)),
    migration(2, 'requests name the instance that waits on them', [
      'ALTER TABLE approval_requests ADD COLUMN owner TEXT',
    ]),
  ];
}

/** The package's schema on libsql. */
export const approvalsMigrations: Migration[] = migrations('libsql');

/** The same table on PostgreSQL (cluster mode). */
export const approvalsPgMigrations: Migration[] = migrations('pg');

/** Both dialects' lists, as `db.migrate` takes them. */
export const approvalsMigrationSet: DialectMigrations = {
  libsql: approvalsMigrations,
  pg: approvalsPgMigrations,
};
