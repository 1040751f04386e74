import { StorageError } from '../errors.js';
import type { Dialect } from '../migrations.js';
import type { Migration } from '../migrations.js';
import { migration } from '../migrations.js';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Refuses anything but a plain identifier, since table and column names go into SQL text. */
export function identifier(name: string, what: string): string {
  if (!IDENTIFIER.test(name)) {
    throw new StorageError(
      'INVALID_ARGUMENT',
      `${what} ${JSON.stringify(name)} is not a plain SQL identifier`,
    );
  }
  return name;
}

/**
 * The database's clock in epoch milliseconds. On PostgreSQL `now()` (the transaction's start),
 * so every instance measures leases against one clock; on libsql the process's own clock.
 */
export function nowMs(dialect: Dialect): string {
  return dialect === 'pg'
    ? '(extract(epoch from now()) * 1000)::bigint'
    : "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
}

/**
 * On PostgreSQL, the WHERE term true only while `owner` holds singleton `name` at `fence`; the
 * singleton's row is locked `FOR SHARE` until the write's transaction ends.
 */
export function singletonHeld(
  name: string,
  owner: string,
  fence: number,
): { sql: string; args: [string, string, number] } {
  return {
    sql: `EXISTS (SELECT 1 FROM cluster_singletons WHERE name = ? AND owner = ? AND fence = ? AND lease_until >= ${nowMs('pg')} FOR SHARE)`,
    args: [name, owner, fence],
  };
}

/** The columns an owned-rows table adds, for a package's migration of either dialect. */
export function ownedColumns(dialect: Dialect): string {
  return dialect === 'pg'
    ? 'owner TEXT, lease_until BIGINT, fence BIGINT NOT NULL DEFAULT 0'
    : 'owner TEXT, lease_until INTEGER, fence INTEGER NOT NULL DEFAULT 0';
}

/** The coordination tables on PostgreSQL (libsql keeps this state in process). */
export const coordinationPgMigrations: Migration[] = [
  migration(1, 'membership, singletons and large bus events', [
    `CREATE TABLE cluster_instances (
      instance_id TEXT PRIMARY KEY,
      advertise_url TEXT NOT NULL,
      started_at BIGINT NOT NULL,
      heartbeat_at BIGINT NOT NULL,
      lease_until BIGINT NOT NULL,
      config_sections TEXT NOT NULL,
      version TEXT NOT NULL
    );
    CREATE TABLE cluster_singletons (
      name TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      fence BIGINT NOT NULL,
      lease_until BIGINT NOT NULL
    );
    CREATE TABLE cluster_events (
      id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      topic TEXT NOT NULL,
      payload TEXT NOT NULL,
      created_at BIGINT NOT NULL
    );`,
  ]),
];
