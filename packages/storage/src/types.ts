/** A value that can be bound to a statement parameter. */
export type SqlValue = null | string | number | bigint | boolean | ArrayBuffer | Uint8Array | Date;

/** Positional (`?`) or named (`:name`, `@name`, `$name`) statement arguments. */
export type SqlArgs = SqlValue[] | Record<string, SqlValue>;

/** One SQL statement, with or without arguments. */
export type Statement = string | { sql: string; args?: SqlArgs | undefined };

/** A result row as a plain object keyed by column name. */
export type SqlRow = Record<string, unknown>;

/**
 * `write` takes the write lock up front (BEGIN IMMEDIATE); `read` opens a
 * read-only snapshot (BEGIN TRANSACTION READONLY) that never blocks writers.
 */
export type TransactionMode = 'write' | 'read';

/** What running one statement produced. */
export interface ExecuteResult<Row = SqlRow> {
  /** Rows as plain objects; empty for statements that return none. */
  rows: Row[];
  /** Column names in select order. */
  columns: string[];
  /** Rows changed by INSERT, UPDATE or DELETE. */
  rowsAffected: number;
  /** Rowid of the last inserted row, when the statement inserted one. */
  lastInsertRowid: bigint | undefined;
}

/** The statement-running methods shared by a database and a transaction. */
export interface Queryable {
  /** Runs one statement and returns everything it produced. */
  execute<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<ExecuteResult<Row>>;
  /** Runs one statement and returns its rows as plain objects. */
  query<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<Row[]>;
  /** Runs one statement and returns its first row, or `undefined` when there is none. */
  get<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<Row | undefined>;
}

/** The handle a transaction callback receives; valid only until the callback settles. */
export interface Transaction extends Queryable {
  /** The mode the transaction was opened in. */
  readonly mode: TransactionMode;
  /** Runs statements in order inside this transaction. */
  batch(statements: Statement[]): Promise<ExecuteResult[]>;
  /** Runs a script of several `;`-separated statements inside this transaction. */
  executeMultiple(sql: string): Promise<void>;
}
