import { type DialectMigrations, type Migration, migration } from '@agentd/storage';

/** The migration key this package records in `_migrations`. */
export const MIGRATION_PACKAGE = '@agentd/approvals';

/**
 * The package's schema: one row per approval request, written when it is asked and updated
 * when it is decided. `args_digest` is the scrubbed digest (JSON of `ArgsDigest`), never the
 * raw arguments; `fingerprint` is the SHA-256 that identical requests share.
 */
export const approvalsMigrations: Migration[] = [
  migration(1, 'approval requests', [
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
        created_at_ms INTEGER NOT NULL,
        expires_at_ms INTEGER NOT NULL,
        resolved_at_ms INTEGER
      )`,
    'CREATE INDEX approval_requests_status ON approval_requests (status, created_at_ms)',
  ]),
  migration(2, 'requests name the instance that waits on them', [
    'ALTER TABLE approval_requests ADD COLUMN owner TEXT',
  ]),
];

/**
 * The same table on PostgreSQL (cluster mode), written for it: epoch-ms columns are BIGINT.
 * `owner` is the instance whose turn waits on the request: a start denies only the requests of
 * instances whose membership lease has expired.
 */
export const approvalsPgMigrations: Migration[] = [
  migration(1, 'approval requests', [
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
        created_at_ms BIGINT NOT NULL,
        expires_at_ms BIGINT NOT NULL,
        resolved_at_ms BIGINT);
    CREATE INDEX approval_requests_status ON approval_requests (status, created_at_ms);`,
  ]),
  migration(2, 'requests name the instance that waits on them', [
    'ALTER TABLE approval_requests ADD COLUMN owner TEXT',
  ]),
];

/** Both dialects' lists, as `db.migrate` takes them. */
export const approvalsMigrationSet: DialectMigrations = {
  libsql: approvalsMigrations,
  pg: approvalsPgMigrations,
};
