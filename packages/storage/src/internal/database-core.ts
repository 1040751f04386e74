import type { Client } from '@libsql/client';
import type { DatabaseKind, TransactionOptions } from '../database.js';
import { StorageError } from '../errors.js';
import type { StorageLogger } from '../logger.js';
import type { AppliedMigration, Dialect, MigrationResult, MigrationSet } from '../migrations.js';
import type { ExecuteResult, SqlArgs, SqlRow, Statement, Transaction } from '../types.js';
import { type WriteBatcher, type WriteBatcherOptions, writeBatcherOptionsSchema } from '../write-batcher.js';
import { applyMigrations, listMigrations, migrationsFor } from './migrate.js';
import { Batcher } from './write-batcher.js';

/** What {@link DatabaseCore} takes from an adapter when it is built. */
export interface CoreSettings {
  logger: StorageLogger;
  now: () => number;
  /** Said when a batcher cannot flush at close: what the operator should check. */
  closeHint: string;
}

/**
 * What the libsql and PostgreSQL adapters share: the closed and nested-transaction checks, the
 * write batchers (flushed at close), migrations in the adapter's dialect, and the order of
 * close (batchers first, then the adapter's own connections, then the log line). Each adapter
 * brings its statements, its transactions and what close releases.
 */
export abstract class DatabaseCore {
  abstract readonly kind: DatabaseKind;
  abstract readonly dialect: Dialect;
  abstract readonly url: string;
  abstract readonly client: Client;
  readonly #core: CoreSettings;
  readonly #batchers = new Set<Batcher>();
  #closing: Promise<void> | undefined;

  protected constructor(core: CoreSettings) {
    this.#core = core;
  }

  abstract execute<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<ExecuteResult<Row>>;
  abstract transaction<T>(
    callback: (tx: Transaction) => Promise<T>,
    options?: TransactionOptions,
  ): Promise<T>;

  /**
   * A write transaction for a batcher. Reached without the closed check, so batchers still
   * flush while close runs.
   */
  protected abstract batchTransaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Runs `task` outside the caller's transaction context (a batcher's flush is nobody's). */
  protected abstract detached<T>(task: () => T): T;
  /** Whether the caller runs inside a transaction callback of this database. */
  protected abstract insideOwnTransaction(): boolean;
  /** Closes the adapter's own connections, once the batchers have flushed. */
  protected abstract release(): Promise<void>;

  get closed(): boolean {
    return this.#closing !== undefined;
  }

  async query<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<Row[]> {
    return (await this.execute<Row>(statement, args)).rows;
  }

  async get<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<Row | undefined> {
    return (await this.execute<Row>(statement, args)).rows[0];
  }

  createWriteBatcher(options: WriteBatcherOptions = {}): WriteBatcher {
    this.checkUsable();
    const parsed = writeBatcherOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new StorageError('INVALID_OPTIONS', `Invalid write batcher options: ${parsed.error.message}`, {
        cause: parsed.error,
      });
    }
    const host = {
      transaction: <T>(callback: (tx: Transaction) => Promise<T>) => this.batchTransaction(callback),
      detach: <T>(task: () => T) => this.detached(task),
      logger: this.#core.logger,
    };
    const batcher = new Batcher(host, parsed.data.maxBatch, parsed.data.maxDelayMs, (closed) =>
      this.#batchers.delete(closed),
    );
    this.#batchers.add(batcher);
    return batcher;
  }

  async migrate(packageName: string, migrations: MigrationSet): Promise<MigrationResult> {
    this.checkUsable();
    const list = migrationsFor(packageName, migrations, this.dialect);
    return applyMigrations(this, packageName, list, this.#core.now, this.#core.logger);
  }

  async migrations(packageName?: string): Promise<AppliedMigration[]> {
    this.checkUsable();
    return listMigrations(this, packageName);
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  /** Refuses a closed database, and a call from inside one of its own transaction callbacks. */
  protected checkUsable(): void {
    if (this.#closing !== undefined) {
      throw new StorageError('CLOSED', `The database at ${this.url} is closed`, { data: { url: this.url } });
    }
    if (this.insideOwnTransaction()) {
      throw new StorageError(
        'NESTED_TRANSACTION',
        'A database method was called inside a transaction callback; use the `tx` handle the callback ' +
          'receives, or move the call after the transaction',
        { data: { url: this.url } },
      );
    }
  }

  async #shutdown(): Promise<void> {
    const { logger, closeHint } = this.#core;
    for (const batcher of [...this.#batchers]) {
      await batcher.close().catch((error: unknown) => {
        logger.error(
          { url: this.url, err: error, errorKind: 'resource', hint: closeHint },
          'write batcher failed to flush on close',
        );
      });
    }
    await this.release();
    logger.info({ url: this.url }, 'database closed');
  }
}
