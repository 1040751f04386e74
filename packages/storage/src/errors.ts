import type { AgentdErrorOptions } from '@agentd/contracts';
import { AgentdError, errorGuard } from '@agentd/errors';

/**
 * Every `code` a {@link StorageError} can carry.
 *
 * - `BUSY`: another process kept the database locked for longer than the whole retry budget.
 * - `CONSTRAINT`: a UNIQUE, NOT NULL, CHECK, PRIMARY KEY or FOREIGN KEY constraint failed.
 * - `SCHEMA_TOO_NEW`: the database was migrated by a newer build than this one.
 * - `MIGRATION_INVALID`: a package shipped a migration list that cannot be applied as given.
 * - `MIGRATION_FAILED`: one migration threw; it was rolled back together with its record.
 * - `CLOSED`: the database (or a transaction handle) was used after it was closed.
 * - `NESTED_TRANSACTION`: a `db.*` call was made inside a transaction callback instead of on `tx`.
 * - `READONLY`: a write was attempted in a read transaction or on a read-only database.
 * - `INVALID_OPTIONS`: options failed validation, or the URL cannot be used.
 * - `INVALID_ARGUMENT`: a statement argument cannot be bound (for example `undefined`).
 * - `OPEN_FAILED`: the database could not be opened or configured.
 * - `SQL_ERROR`: any other SQLite error (syntax, missing table, ...).
 * - `DRIVER_ERROR`: any other error from the libsql client (network, protocol, ...).
 * - `DATA_DIR_LOCKED`: another running process (its pid in the message and `data.pid`) holds the
 *   data directory's lock.
 * - `LOCK_FAILED`: the data directory's lock file could not be written, read or replaced.
 */
export type StorageErrorCode =
  | 'BUSY'
  | 'CONSTRAINT'
  | 'SCHEMA_TOO_NEW'
  | 'MIGRATION_INVALID'
  | 'MIGRATION_FAILED'
  | 'CLOSED'
  | 'NESTED_TRANSACTION'
  | 'READONLY'
  | 'INVALID_OPTIONS'
  | 'INVALID_ARGUMENT'
  | 'OPEN_FAILED'
  | 'SQL_ERROR'
  | 'DRIVER_ERROR'
  | 'DATA_DIR_LOCKED'
  | 'LOCK_FAILED'
  | 'LEASE_LOST';

/**
 * Options accepted by the {@link StorageError} constructor. `data`: structured detail for logs, such
 * as the SQLite code or the versions involved.
 */
export type StorageErrorOptions = AgentdErrorOptions;

/** The one error class thrown by this package; switch on `code`, not on the message. `data` never holds the auth token. */
export class StorageError extends AgentdError<StorageErrorCode> {
  override readonly name = 'StorageError';
}

/** True when `error` is a {@link StorageError}, optionally with the given code. */
export const isStorageError = errorGuard(StorageError);
