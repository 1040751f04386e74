import { Buffer } from 'node:buffer';
import type Libsql from 'libsql';
import type { ExecuteResult, SqlArgs, SqlValue } from '../types.js';

type Connection = Libsql.Database;
type Prepared = Libsql.Statement;

/** How the writer opens its connection; the same settings as the client's writer. */
export interface DirectWriterOptions {
  /** The database file (already created, in WAL mode, by the client's writer). */
  filePath: string;
  busyTimeoutMs: number;
  synchronous: 'normal' | 'full';
  /** Prepared statements kept; the least recently used is dropped beyond it. */
  cacheSize: number;
  /** WAL frames after which a commit on this connection checkpoints (`wal_autocheckpoint`). */
  autocheckpointPages: number;
}

interface CachedStatement {
  statement: Prepared;
  /** True when the statement returns rows (a SELECT, or a write with RETURNING). */
  reader: boolean;
}

/**
 * A second connection to a local file that runs a whole write batch synchronously, in one
 * turn of the event loop, with statements prepared once and kept.
 *
 * Through @libsql/client every statement is prepared again and BEGIN/COMMIT each raise and
 * catch an exception inside the client (`raw()` on a statement that returns no rows); for a
 * short batch that is most of its cost. Because the batch never yields, the SQLite write lock
 * it takes is released before any other code of this process runs, so it cannot deadlock with
 * the client's writer connection as long as both queue on the same in-process write lock.
 *
 * Values are converted exactly as @libsql/client converts them (integers as numbers, a
 * RangeError past 2^53, blobs as ArrayBuffers), so results do not depend on the path taken.
 */
export class DirectWriter {
  readonly #options: DirectWriterOptions;
  readonly #open: (path: string, options: { timeout: number }) => Connection;
  readonly #cache = new Map<string, CachedStatement>();
  #connection: Connection | undefined;
  #closed = false;

  constructor(
    open: (path: string, options: { timeout: number }) => Connection,
    options: DirectWriterOptions,
  ) {
    this.#open = open;
    this.#options = options;
  }

  /**
   * Runs the statements in order inside BEGIN IMMEDIATE … COMMIT: all commit, or none. The
   * caller holds the process's write lock. A BUSY at BEGIN leaves nothing behind (exec
   * finalises its statement); any failure later rolls back and drops the connection, so no
   * statement is ever left half-run on it.
   */
  batch(statements: ReadonlyArray<{ sql: string; args: SqlArgs }>): ExecuteResult[] {
    let connection: Connection;
    try {
      connection = this.#connect();
      connection.exec('BEGIN IMMEDIATE');
    } catch (error) {
      throw driverError(error);
    }
    const results: ExecuteResult[] = [];
    let index = 0;
    try {
      for (; index < statements.length; index++) {
        const { sql, args } = statements[index]!;
        results.push(this.#run(connection, sql, args));
      }
      index = -1;
      connection.exec('COMMIT');
      return results;
    } catch (error) {
      this.#discard(connection);
      throw driverError(error, index >= 0 ? index : undefined);
    }
  }

  /** Closes the connection for good; a later batch fails with `CLIENT_CLOSED`. Idempotent. */
  close(): void {
    this.#closed = true;
    const connection = this.#connection;
    if (connection !== undefined) this.#discard(connection);
  }

  #connect(): Connection {
    if (this.#connection !== undefined) return this.#connection;
    if (this.#closed) {
      throw Object.assign(new Error('The database is closed'), { code: 'CLIENT_CLOSED' });
    }
    const { filePath, busyTimeoutMs, synchronous, autocheckpointPages } = this.#options;
    const connection = this.#open(filePath, { timeout: busyTimeoutMs });
    try {
      // Per-connection settings, as on the client's writer; journal_mode=WAL is stored in the file.
      connection.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
      connection.exec(`PRAGMA synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
      connection.exec('PRAGMA foreign_keys = ON');
      connection.exec(`PRAGMA wal_autocheckpoint = ${autocheckpointPages}`);
    } catch (error) {
      connection.close();
      throw driverError(error);
    }
    this.#connection = connection;
    return connection;
  }

  #discard(connection: Connection): void {
    this.#cache.clear();
    this.#connection = undefined;
    try {
      if (connection.open && connection.inTransaction) connection.exec('ROLLBACK');
    } catch {
      // Closing below discards the transaction anyway.
    }
    try {
      if (connection.open) connection.close();
    } catch {
      // Nothing more to release.
    }
  }

  #prepared(connection: Connection, sql: string): CachedStatement {
    const cached = this.#cache.get(sql);
    if (cached !== undefined) {
      // Map order is insertion order: moving the hit to the end keeps the eviction LRU.
      this.#cache.delete(sql);
      this.#cache.set(sql, cached);
      return cached;
    }
    const statement = connection.prepare(sql);
    statement.safeIntegers(true);
    const reader = statement.reader;
    if (reader) statement.raw(true);
    const entry = { statement, reader };
    this.#cache.set(sql, entry);
    if (this.#cache.size > this.#options.cacheSize) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    return entry;
  }

  #run(connection: Connection, sql: string, args: SqlArgs): ExecuteResult {
    const { statement, reader } = this.#prepared(connection, sql);
    const bound = bindable(args);
    if (reader) {
      const raw = statement.all(bound) as unknown[][];
      // Read after the run: SQLite re-prepares a statement whose tables changed, columns too.
      const columns = statement.columns().map((column) => column.name);
      return {
        rows: raw.map((values) => rowOf(values, columns)),
        columns,
        rowsAffected: 0,
        lastInsertRowid: undefined,
      };
    }
    const info = statement.run(bound);
    return {
      rows: [],
      columns: [],
      rowsAffected: info.changes,
      lastInsertRowid: BigInt(info.lastInsertRowid),
    };
  }
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_INTEGER = -9223372036854775808n;
const MAX_INTEGER = 9223372036854775807n;

// The first column of a name wins, and defineProperty keeps a column named `__proto__` a plain key.
function rowOf(raw: unknown[], columns: string[]): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (let i = 0; i < raw.length; i++) {
    const column = columns[i] ?? String(i);
    if (Object.hasOwn(row, column)) continue;
    Object.defineProperty(row, column, {
      value: fromSql(raw[i]),
      enumerable: true,
      configurable: true,
      writable: true,
    });
  }
  return row;
}

function fromSql(value: unknown): unknown {
  if (typeof value === 'bigint') {
    if (value < MIN_SAFE || value > MAX_SAFE) {
      throw new RangeError('Received integer which cannot be safely represented as a JavaScript number');
    }
    return Number(value);
  }
  if (value instanceof Buffer) return value.buffer;
  return value;
}

function bindable(args: SqlArgs): unknown {
  if (Array.isArray(args)) return args.map(toSql);
  const named: Record<string, unknown> = {};
  for (const name of Object.keys(args)) {
    const bare = name[0] === '@' || name[0] === '$' || name[0] === ':' ? name.slice(1) : name;
    named[bare] = toSql(args[name] as SqlValue);
  }
  return named;
}

function toSql(value: SqlValue): unknown {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) {
      throw new RangeError('Only finite numbers (not Infinity or NaN) can be passed as arguments');
    }
    return value;
  }
  if (typeof value === 'bigint') {
    if (value < MIN_INTEGER || value > MAX_INTEGER) {
      throw new RangeError(
        'bigint is too large to be represented as a 64-bit integer and passed as argument',
      );
    }
    return value;
  }
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  if (value instanceof Date) return value.valueOf();
  if (value === undefined) throw new TypeError('undefined cannot be passed as argument to the database');
  return value;
}

/** SQLite's primary result codes, by number, as @libsql/client names them. */
const BASE_CODES = [
  'SQLITE_OK',
  'SQLITE_ERROR',
  'SQLITE_INTERNAL',
  'SQLITE_PERM',
  'SQLITE_ABORT',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_NOMEM',
  'SQLITE_READONLY',
  'SQLITE_INTERRUPT',
  'SQLITE_IOERR',
  'SQLITE_CORRUPT',
  'SQLITE_NOTFOUND',
  'SQLITE_FULL',
  'SQLITE_CANTOPEN',
  'SQLITE_PROTOCOL',
  'SQLITE_EMPTY',
  'SQLITE_SCHEMA',
  'SQLITE_TOOBIG',
  'SQLITE_CONSTRAINT',
  'SQLITE_MISMATCH',
  'SQLITE_MISUSE',
  'SQLITE_NOLFS',
  'SQLITE_AUTH',
  'SQLITE_FORMAT',
  'SQLITE_RANGE',
  'SQLITE_NOTADB',
  'SQLITE_NOTICE',
  'SQLITE_WARNING',
];

/**
 * A libsql SqliteError in the shape @libsql/client gives (`code` the primary code,
 * `extendedCode` the extended one, `statementIndex` in a batch), so the storage error mapping
 * sees the same thing on either path. Anything else (a RangeError for a bad argument) passes.
 */
function driverError(error: unknown, statementIndex?: number): unknown {
  if (!(error instanceof Error) || typeof (error as { code?: unknown }).code !== 'string') return error;
  const { code, rawCode } = error as Error & { code: string; rawCode?: number };
  const base =
    typeof rawCode === 'number' ? (BASE_CODES[rawCode & 0xff] ?? `SQLITE_UNKNOWN_${rawCode & 0xff}`) : code;
  const mapped = new Error(error.message, { cause: error }) as Error & Record<string, unknown>;
  mapped.name = 'LibsqlError';
  mapped.code = base;
  mapped.extendedCode = code;
  mapped.rawCode = rawCode;
  if (statementIndex !== undefined) mapped.statementIndex = statementIndex;
  return mapped;
}
