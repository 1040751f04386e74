import { StorageError, type StorageErrorCode } from '../errors.js';
import type { Redact } from '../internal/map-error.js';

// SQLSTATE classes and codes (PostgreSQL manual, appendix A "PostgreSQL Error Codes").
const BUSY_CODES = new Set(['40001', '40P01', '55P03']);
const CONSTRAINT_CLASS = '23';
const READONLY_CODE = '25006';

interface PgDriverError {
  code: string;
  message: string;
  constraint?: string;
  table?: string;
}

function pgError(error: unknown): PgDriverError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || typeof message !== 'string' || !/^[0-9A-Z]{5}$/.test(code))
    return undefined;
  return error as PgDriverError;
}

function codeFor(sqlstate: string): StorageErrorCode {
  if (BUSY_CODES.has(sqlstate)) return 'BUSY';
  if (sqlstate.startsWith(CONSTRAINT_CLASS)) return 'CONSTRAINT';
  if (sqlstate === READONLY_CODE) return 'READONLY';
  // Class 08 (connection exception), 57 (operator intervention), 53 (insufficient resources).
  if (/^(08|57|53)/.test(sqlstate)) return 'DRIVER_ERROR';
  return 'SQL_ERROR';
}

/**
 * Turns anything `pg` throws into a {@link StorageError}: serialization failures (40001),
 * deadlocks (40P01) and lock timeouts (55P03) become a retryable `BUSY`, class 23 `CONSTRAINT`,
 * 25006 `READONLY`, connection and server-shutdown classes `DRIVER_ERROR`, the rest `SQL_ERROR`.
 * `data.sqlstate` keeps the PostgreSQL code. Messages pass through the redactor.
 */
export function pgToStorageError(error: unknown, redact: Redact, url: string, sql?: string): StorageError {
  if (error instanceof StorageError) return error;
  const data: Record<string, unknown> = { url };
  if (sql !== undefined) data.sql = sql.length > 500 ? `${sql.slice(0, 500)}…` : sql;
  const driver = pgError(error);
  const message = redact(error instanceof Error ? error.message : String(error));
  const cause = error instanceof Error && message !== error.message ? new Error(message) : error;
  if (driver === undefined) {
    return new StorageError('DRIVER_ERROR', message, { cause, data });
  }
  data.sqlstate = driver.code;
  if (driver.constraint !== undefined) data.constraint = driver.constraint;
  const code = codeFor(driver.code);
  if (code === 'BUSY') data.retryable = true;
  return new StorageError(code, message, { cause, data });
}
