import { AsyncLocalStorage } from 'node:async_hooks';
import type { Client } from '@libsql/client';
import type pg from 'pg';
import type { Database, TransactionOptions } from '../database.js';
import { StorageError } from '../errors.js';
import { withBusyRetry } from '../internal/busy-retry.js';
import { stripCredentials } from '../internal/location.js';
import type { Redact } from '../internal/map-error.js';
import { DatabaseCore } from '../internal/database-core.js';
import { toInStatement } from '../internal/results.js';
import type { StorageLogger } from '../logger.js';
import type { ExecuteResult, SqlArgs, SqlRow, Statement, Transaction, TransactionMode } from '../types.js';
import { pgToStorageError } from './errors.js';
import { bindArguments, translatePlaceholders } from './translate.js';

/** Settings the PostgreSQL adapter takes from `openDatabase`. */
export interface PgSettings {
  redact: Redact;
  logger: StorageLogger;
  now: () => number;
  random: () => number;
  busyRetryMs: number;
  poolMax: number;
}

// OIDs of the built-in types `pg` returns as strings (pg_type.dat): int8 and numeric become
// numbers (int8 past 2^53 a bigint), as libsql returns its integers and reals.
const INT8_OID = 20;
const NUMERIC_OID = 1700;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function parseInt8(text: string): number | bigint {
  const value = BigInt(text);
  return value > MAX_SAFE || value < -MAX_SAFE ? value : Number(value);
}

/** The per-pool type parsers (never the process-wide `pg.types`, which other code may rely on). */
function typeParsers(types: typeof pg.types): pg.CustomTypesConfig {
  return {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
      if (format !== 'binary') {
        if (oid === INT8_OID) return parseInt8;
        if (oid === NUMERIC_OID) return (text: string) => Number(text);
      }
      return types.getTypeParser(oid, format as 'text');
    }) as pg.CustomTypesConfig['getTypeParser'],
  };
}

interface Scope {
  owner: PgDatabase;
  open: boolean;
}

const scope = new AsyncLocalStorage<Scope>();

type Runner = Pick<pg.PoolClient, 'query'>;

function isInsert(sql: string): boolean {
  return /^\s*(?:WITH\b[\s\S]*?\)\s*)?INSERT\b/i.test(sql);
}

// libsql's lastInsertRowid, from the INSERT's RETURNING clause: its first column, last row.
function insertedId(sql: string, result: pg.QueryResult): bigint | undefined {
  if (!isInsert(sql) || result.rows.length === 0 || result.fields.length === 0) return undefined;
  const value = (result.rows.at(-1) as SqlRow)[result.fields[0]!.name];
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (typeof value === 'bigint') return value;
  return undefined;
}

async function run<Row>(
  runner: Runner,
  statement: Statement,
  args: SqlArgs | undefined,
  fail: (error: unknown, sql?: string) => never,
): Promise<ExecuteResult<Row>> {
  const normalised = toInStatement(statement, args);
  let text: string;
  let values: unknown[];
  try {
    const translated = translatePlaceholders(normalised.sql);
    text = translated.text;
    values = bindArguments(translated, normalised.args, normalised.sql);
  } catch (error) {
    return fail(error, normalised.sql);
  }
  try {
    const result = await runner.query({ text, values });
    return {
      rows: result.rows as Row[],
      columns: (result.fields ?? []).map((field) => field.name),
      rowsAffected: result.rowCount ?? 0,
      lastInsertRowid: insertedId(normalised.sql, result),
    };
  } catch (error) {
    return fail(error, normalised.sql);
  }
}

class PgTransaction implements Transaction {
  readonly mode: TransactionMode;
  readonly #client: pg.PoolClient;
  readonly #fail: (error: unknown, sql?: string) => never;
  #open = true;

  constructor(client: pg.PoolClient, mode: TransactionMode, fail: (error: unknown, sql?: string) => never) {
    this.#client = client;
    this.mode = mode;
    this.#fail = fail;
  }

  close(): void {
    this.#open = false;
  }

  #check(): void {
    if (!this.#open)
      throw new StorageError('CLOSED', 'The transaction handle was used after its callback settled');
  }

  execute<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<ExecuteResult<Row>> {
    this.#check();
    return run<Row>(this.#client, statement, args, this.#fail);
  }

  async query<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<Row[]> {
    return (await this.execute<Row>(statement, args)).rows;
  }

  async get<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<Row | undefined> {
    return (await this.execute<Row>(statement, args)).rows[0];
  }

  async batch(statements: Statement[]): Promise<ExecuteResult[]> {
    const results: ExecuteResult[] = [];
    for (const statement of statements) results.push(await this.execute(statement));
    return results;
  }

  async executeMultiple(sql: string): Promise<void> {
    this.#check();
    try {
      // Without values `pg` uses the simple query protocol, which runs `;`-separated scripts.
      await this.#client.query(sql);
    } catch (error) {
      this.#fail(error, sql);
    }
  }
}

/** A {@link Database} on a PostgreSQL server through a `pg.Pool`. */
export class PgDatabase extends DatabaseCore implements Database {
  readonly kind = 'postgres' as const;
  readonly dialect = 'pg' as const;
  readonly url: string;
  /** The pool, for the coordination module (a pinned LISTEN connection, advisory locks). */
  readonly pool: pg.Pool;
  readonly #settings: PgSettings;
  readonly #fail: (error: unknown, sql?: string) => never;
  readonly #onClose: Array<() => Promise<void>> = [];

  constructor(pool: pg.Pool, url: string, settings: PgSettings) {
    super({
      logger: settings.logger,
      now: settings.now,
      closeHint: 'check that the PostgreSQL server is reachable',
    });
    this.pool = pool;
    this.url = url;
    this.#settings = settings;
    this.#fail = (error, sql) => {
      throw pgToStorageError(error, settings.redact, url, sql);
    };
  }

  get client(): Client {
    throw new StorageError('INVALID_OPTIONS', 'A PostgreSQL database has no libsql client; use its methods', {
      data: { url: this.url },
    });
  }

  /** The redactor for errors raised outside this class on its connections. */
  get redact(): Redact {
    return this.#settings.redact;
  }

  /** Runs `task` at close, before the pool ends (the coordination module's listener). */
  onClose(task: () => Promise<void>): void {
    this.#onClose.push(task);
  }

  async execute<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<ExecuteResult<Row>> {
    this.checkUsable();
    return this.#retry(() => run<Row>(this.pool, statement, args, this.#fail));
  }

  async batch(statements: Statement[], mode: TransactionMode = 'write'): Promise<ExecuteResult[]> {
    this.checkUsable();
    if (statements.length === 0) return [];
    return this.#transaction((tx) => tx.batch(statements), mode, 'read committed');
  }

  transaction<T>(callback: (tx: Transaction) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    this.checkUsable();
    return this.#transaction(callback, options.mode ?? 'write', options.isolation ?? 'read committed');
  }

  protected batchTransaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.#transaction(callback, 'write', 'read committed');
  }

  protected detached<T>(task: () => T): T {
    return scope.exit(task);
  }

  protected insideOwnTransaction(): boolean {
    const current = scope.getStore();
    return current?.open === true && current.owner === this;
  }

  protected async release(): Promise<void> {
    for (const task of this.#onClose.splice(0)) await task().catch(() => undefined);
    await this.pool.end();
  }

  #retry<T>(operation: () => Promise<T>): Promise<T> {
    return withBusyRetry(operation, {
      budgetMs: this.#settings.busyRetryMs,
      now: this.#settings.now,
      random: this.#settings.random,
      logger: this.#settings.logger,
      url: this.url,
    });
  }

  // One attempt holds one pooled connection from BEGIN to COMMIT; a serialization failure or a
  // deadlock rolls it back and runs the callback again, within the busy-retry budget.
  #transaction<T>(
    callback: (tx: Transaction) => Promise<T>,
    mode: TransactionMode,
    isolation: 'read committed' | 'serializable',
  ): Promise<T> {
    const begin =
      mode === 'read'
        ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY'
        : `BEGIN ISOLATION LEVEL ${isolation === 'serializable' ? 'SERIALIZABLE' : 'READ COMMITTED'}`;
    return this.#retry(async () => {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (error) {
        return this.#fail(error);
      }
      const state: Scope = { owner: this, open: true };
      const handle = new PgTransaction(client, mode, this.#fail);
      let broken = false;
      try {
        try {
          await client.query(begin);
        } catch (error) {
          return this.#fail(error, begin);
        }
        const result = await scope.run(state, () => callback(handle));
        state.open = false;
        try {
          await client.query('COMMIT');
        } catch (error) {
          return this.#fail(error, 'COMMIT');
        }
        return result;
      } catch (error) {
        state.open = false;
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw error;
      } finally {
        state.open = false;
        handle.close();
        client.release(broken);
      }
    });
  }
}

/** Opens a pool on `url` and checks it answers; the caller loaded this module only for such a URL. */
export async function openPgDatabase(
  url: string,
  options: PgSettings & { logger: StorageLogger },
): Promise<PgDatabase> {
  const safeUrl = stripCredentials(url);
  // A dynamic import even inside this lazily loaded module: a bundle without code splitting
  // would otherwise hoist `pg` into the entry file and load it in every embedded daemon.
  const { default: driver } = await import('pg');
  const pool = new driver.Pool({
    connectionString: url,
    max: options.poolMax,
    types: typeParsers(driver.types),
  });
  // An idle client that loses its server emits here; without a listener the process would die.
  pool.on('error', (error) => {
    options.logger.warn(
      {
        url: safeUrl,
        err: options.redact(error.message),
        errorKind: 'dependency',
        hint: 'check the PostgreSQL server',
      },
      'idle PostgreSQL connection failed',
    );
  });
  const database = new PgDatabase(pool, safeUrl, options);
  try {
    await database.execute('SELECT 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    const reason = error instanceof Error ? error.message : String(error);
    throw new StorageError('OPEN_FAILED', `Could not open the database at ${safeUrl}: ${reason}`, {
      cause: error,
      data: { url: safeUrl, kind: 'postgres' },
    });
  }
  options.logger.info({ url: safeUrl, kind: 'postgres' }, 'database opened');
  return database;
}
