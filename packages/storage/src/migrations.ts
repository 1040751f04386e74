import type { Transaction } from './types.js';

/**
 * One schema change shipped by a package. `up` is a SQL script (several
 * statements separated by `;` are fine), a list of such scripts run in order,
 * or a function given the migration's write transaction.
 */
export interface Migration {
  /** Positive integer; strictly increasing through the list. */
  version: number;
  /** Short human-readable name, stored with the record. */
  name: string;
  /** The change itself; runs in the same transaction as its record. */
  up: string | string[] | ((tx: Transaction) => Promise<void>);
}

/**
 * One {@link Migration}, written as a call so a package's list reads as its history, one line
 * a step: `migration(2, 'a job may belong to a tenant', ['ALTER TABLE …'])`. The list is checked
 * as before by `db.migrate` (positive, strictly increasing versions; a name; a non-empty `up`).
 */
export function migration(version: number, name: string, up: Migration['up']): Migration {
  return { version, name, up };
}

/** One row of the `_migrations` table. */
export interface AppliedMigration {
  /** The package that shipped the migration, e.g. `@agentd/memory-store`. */
  package: string;
  version: number;
  name: string;
  /** ISO 8601 time the migration was committed. */
  appliedAt: string;
}

/** What {@link Database.migrate} did. */
export interface MigrationResult {
  package: string;
  /** The migrations this call applied, in order; empty when the database was up to date. */
  applied: AppliedMigration[];
  /** The package's schema version after the call. */
  version: number;
}

/** Which SQL dialect a database speaks: embedded libsql (SQLite) or PostgreSQL. */
export type Dialect = 'libsql' | 'pg';

/**
 * A package's migrations per dialect. PostgreSQL's DDL differs (BIGINT epoch-ms columns,
 * identity keys, `tsvector`), so a package that runs on PostgreSQL ships a hand-written `pg`
 * list beside its `libsql` one; the two keep their own version sequences.
 */
export interface DialectMigrations {
  libsql: Migration[];
  pg?: Migration[] | undefined;
}

/** What `db.migrate` accepts: one list (libsql only) or a list per dialect. */
export type MigrationSet = Migration[] | DialectMigrations;
