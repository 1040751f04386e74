import { StorageError, type StorageErrorCode } from '../errors.js';

/** Replaces every occurrence of a secret in a piece of text. */
export type Redact = (text: string) => string;

/** Builds a {@link Redact} for the given secrets (empty ones are ignored). */
export function createRedactor(secrets: ReadonlyArray<string | undefined>): Redact {
  const present = secrets.filter((secret): secret is string => secret !== undefined && secret.length > 0);
  if (present.length === 0) {
    return (text) => text;
  }
  return (text) => {
    let result = text;
    for (const secret of present) {
      result = result.split(secret).join('[REDACTED]');
    }
    return result;
  };
}

interface DriverErrorShape {
  message: string;
  code?: unknown;
  extendedCode?: unknown;
  statementIndex?: unknown;
}

function driverError(error: unknown): DriverErrorShape | undefined {
  if (error instanceof Error && typeof (error as { code?: unknown }).code === 'string') {
    return error as DriverErrorShape;
  }
  return undefined;
}

const BUSY_PATTERN = /^SQLITE_(?:BUSY|LOCKED)/;

/**
 * True for errors that mean "someone else holds the lock, try again later":
 * SQLITE_BUSY and SQLITE_LOCKED with any extended code, from a local
 * connection or relayed by a remote server.
 */
export function isBusyError(error: unknown): boolean {
  if (error instanceof StorageError) {
    return error.code === 'BUSY' && error.data?.retryable === true;
  }
  const driver = driverError(error);
  if (driver === undefined) {
    return false;
  }
  const code = String(driver.code);
  const extended = typeof driver.extendedCode === 'string' ? driver.extendedCode : '';
  return (
    BUSY_PATTERN.test(code) ||
    BUSY_PATTERN.test(extended) ||
    /database (?:table )?is locked/i.test(driver.message)
  );
}

function codeFor(driverCode: string, extended: string): StorageErrorCode {
  if (BUSY_PATTERN.test(driverCode) || BUSY_PATTERN.test(extended)) return 'BUSY';
  if (driverCode.startsWith('SQLITE_CONSTRAINT')) return 'CONSTRAINT';
  if (driverCode.startsWith('SQLITE_READONLY')) return 'READONLY';
  if (driverCode === 'CLIENT_CLOSED' || driverCode === 'TRANSACTION_CLOSED') return 'CLOSED';
  if (driverCode.startsWith('URL_')) return 'INVALID_OPTIONS';
  if (driverCode.startsWith('SQLITE_')) return 'SQL_ERROR';
  return 'DRIVER_ERROR';
}

// The raw driver error stays available as `cause`, unless its message carries
// the token, in which case a scrubbed copy takes its place.
function safeCause(error: unknown, redact: Redact): unknown {
  if (error instanceof Error && redact(error.message) !== error.message) {
    const copy = new Error(redact(error.message));
    copy.name = error.name;
    return copy;
  }
  return error;
}

/** Context that makes a mapped error useful in a log line. */
export interface ErrorContext {
  /** The safe URL of the database. */
  url: string;
  /** The statement being run, when there is a single one. */
  sql?: string;
}

/**
 * Turns anything thrown by the libsql client into a {@link StorageError},
 * keeping StorageErrors as they are and never letting the token through.
 * A BUSY produced here is marked retryable so the retry loop can see it even
 * after it crossed a transaction callback.
 */
export function toStorageError(error: unknown, redact: Redact, context: ErrorContext): StorageError {
  if (error instanceof StorageError) {
    return error;
  }
  const driver = driverError(error);
  const data: Record<string, unknown> = { url: context.url };
  if (context.sql !== undefined) {
    data.sql = context.sql.length > 500 ? `${context.sql.slice(0, 500)}…` : context.sql;
  }
  if (driver === undefined) {
    const message = error instanceof Error ? error.message : String(error);
    const code: StorageErrorCode =
      error instanceof TypeError || error instanceof RangeError ? 'INVALID_ARGUMENT' : 'DRIVER_ERROR';
    return new StorageError(code, redact(message), { cause: safeCause(error, redact), data });
  }
  const driverCode = String(driver.code);
  const extended = typeof driver.extendedCode === 'string' ? driver.extendedCode : '';
  data.driverCode = driverCode;
  if (extended !== '') data.extendedCode = extended;
  if (typeof driver.statementIndex === 'number') data.statementIndex = driver.statementIndex;
  const code = codeFor(driverCode, extended);
  if (code === 'BUSY') data.retryable = true;
  return new StorageError(code, redact(driver.message), { cause: safeCause(error, redact), data });
}
