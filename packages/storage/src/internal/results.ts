import type { InStatement, ResultSet, Transaction as LibsqlTransaction } from '@libsql/client';
import type { ExecuteResult, SqlArgs, SqlRow, Statement, Transaction, TransactionMode } from '../types.js';
import { toStorageError, type Redact } from './map-error.js';

/** Normalises the (statement, args) pair every method accepts into one libsql statement. */
export function toInStatement(statement: Statement, args?: SqlArgs): { sql: string; args: SqlArgs } {
  if (typeof statement === 'string') {
    return { sql: statement, args: args ?? [] };
  }
  return { sql: statement.sql, args: args ?? statement.args ?? [] };
}

/** Copies a libsql result into plain objects, dropping the array-like row shape. */
export function toExecuteResult<Row = SqlRow>(result: ResultSet): ExecuteResult<Row> {
  return {
    rows: result.rows.map((row) => ({ ...row }) as Row),
    columns: [...result.columns],
    rowsAffected: result.rowsAffected,
    lastInsertRowid: result.lastInsertRowid,
  };
}

/** How a handle turns a driver error into a StorageError for one statement. */
export type ErrorMapper = (error: unknown, sql?: string) => never;

/** Builds an {@link ErrorMapper} bound to one database's URL and redactor. */
export function createErrorMapper(url: string, redact: Redact): ErrorMapper {
  return (error, sql) => {
    throw toStorageError(error, redact, sql === undefined ? { url } : { url, sql });
  };
}

/** The {@link Transaction} given to callbacks: a libsql transaction with plain rows and mapped errors. */
export class TransactionHandle implements Transaction {
  readonly mode: TransactionMode;
  readonly #inner: LibsqlTransaction;
  readonly #fail: ErrorMapper;

  constructor(inner: LibsqlTransaction, mode: TransactionMode, fail: ErrorMapper) {
    this.#inner = inner;
    this.mode = mode;
    this.#fail = fail;
  }

  async execute<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<ExecuteResult<Row>> {
    const normalised = toInStatement(statement, args);
    try {
      return toExecuteResult<Row>(await this.#inner.execute(normalised as InStatement));
    } catch (error) {
      return this.#fail(error, normalised.sql);
    }
  }

  async query<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<Row[]> {
    return (await this.execute<Row>(statement, args)).rows;
  }

  async get<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<Row | undefined> {
    return (await this.execute<Row>(statement, args)).rows[0];
  }

  async batch(statements: Statement[]): Promise<ExecuteResult[]> {
    if (statements.length === 0) return [];
    try {
      const results = await this.#inner.batch(
        statements.map((statement) => toInStatement(statement) as InStatement),
      );
      return results.map((result) => toExecuteResult(result));
    } catch (error) {
      return this.#fail(error);
    }
  }

  async executeMultiple(sql: string): Promise<void> {
    try {
      await this.#inner.executeMultiple(sql);
    } catch (error) {
      return this.#fail(error, sql);
    }
  }
}
