import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Client, Config, InStatement } from '@libsql/client';
import { StorageError } from './errors.js';
import { withBusyRetry } from './internal/busy-retry.js';
import { DirectWriter } from './internal/direct-writer.js';
import { credentialsIn, fileUrlFor, type Location, parseLocation } from './internal/location.js';
import { createRedactor, type Redact, toStorageError } from './internal/map-error.js';
import { DatabaseCore } from './internal/database-core.js';
import {
  createErrorMapper,
  type ErrorMapper,
  toExecuteResult,
  toInStatement,
  TransactionHandle,
} from './internal/results.js';
import { Semaphore } from './internal/semaphore.js';
import { ReaderClients } from './internal/reader-clients.js';
import { isReadOnlySql, mustRunAlone } from './internal/sql-kind.js';
import { acquireFileWriteLock } from './internal/write-locks.js';
import { noopLogger, type StorageLogger } from './logger.js';
import type { AppliedMigration, Dialect, MigrationResult, MigrationSet } from './migrations.js';
import { type OpenDatabaseOptions, openDatabaseOptionsSchema } from './options.js';
import type {
  ExecuteResult,
  Queryable,
  SqlArgs,
  SqlRow,
  Statement,
  Transaction,
  TransactionMode,
} from './types.js';
import type { WriteBatcher, WriteBatcherOptions } from './write-batcher.js';

/** Where the database lives: a local file, a remote sqld/Turso server, memory, or a PostgreSQL server. */
export type DatabaseKind = 'file' | 'remote' | 'memory' | 'postgres';

/** Options for {@link Database.transaction}. */
export interface TransactionOptions {
  /**
   * `write` serialises with every other writer of this process; `read` runs on a snapshot.
   * @default 'write'
   */
  mode?: TransactionMode | undefined;
  /**
   * PostgreSQL only: the isolation of a write transaction. `serializable` suits a multi-row
   * read-modify-write; its serialization failures are retried like BUSY. libsql transactions
   * are always serializable (one writer), so libsql ignores this.
   * @default 'read committed'
   */
  isolation?: 'read committed' | 'serializable' | undefined;
}

/**
 * An open libsql database. Writes from this process are serialised and
 * BUSY/LOCKED from other processes is retried, so callers see neither.
 */
export interface Database extends Queryable {
  /** Where the database lives. */
  readonly kind: DatabaseKind;
  /** The SQL dialect: `libsql` (SQLite) for file, memory and remote, `pg` for PostgreSQL. */
  readonly dialect: Dialect;
  /** The database URL without credentials, safe to log. */
  readonly url: string;
  /**
   * The libsql client that carries writes, for what this API does not cover. On PostgreSQL
   * there is none: reading it throws `INVALID_OPTIONS`.
   * Writes through it bypass the write lock; a write transaction opened here
   * holds the only writer connection of a local file until it settles, and
   * makes a write batch (which runs on a connection of its own) wait in
   * SQLite's busy handler, blocking the event loop.
   */
  readonly client: Client;
  /** True once `close()` was called. */
  readonly closed: boolean;
  /**
   * Runs `callback` in a transaction: commits when it resolves, rolls back when
   * it throws, and returns its result. Use `tx` inside, never the database
   * itself (that throws `NESTED_TRANSACTION` instead of waiting on itself).
   * If the lock is lost to another process midway, the transaction is rolled
   * back and the callback runs again, so keep side effects outside it.
   */
  transaction<T>(callback: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Runs statements atomically in one transaction. */
  batch(statements: Statement[], mode?: TransactionMode): Promise<ExecuteResult[]>;
  /** Creates a batcher that coalesces many small writes into few transactions. */
  createWriteBatcher(options?: WriteBatcherOptions): WriteBatcher;
  /**
   * Applies the package's pending migrations, each in its own transaction with its record.
   * Throws `MIGRATION_INVALID`, `SCHEMA_TOO_NEW` or `MIGRATION_FAILED`.
   */
  migrate(packageName: string, migrations: MigrationSet): Promise<MigrationResult>;
  /** Lists applied migrations, of one package or of all, oldest first. */
  migrations(packageName?: string): Promise<AppliedMigration[]>;
  /** Flushes batchers, waits for queued writes, closes connections. Idempotent. */
  close(): Promise<void>;
}

const QUERY_ONLY_ON = 'PRAGMA query_only = ON';
// Write batches of a local file keep this many prepared statements (a few per package's writes).
const DIRECT_STATEMENT_CACHE = 64;
// The commit that finds the WAL past this many frames checkpoints it, and a checkpoint fsyncs the
// WAL and the database file while the event loop waits. Write batches are the hot path (the
// delivery queue's group commit writes ~7 frames per commit), and at SQLite's default of 1000
// those fsyncs took ~10% of the queue's wall time under load; at 4000 (a WAL of up to 16 MB)
// they come a quarter as often. What a commit guarantees is unchanged: `synchronous` decides it.
const DIRECT_AUTOCHECKPOINT_PAGES = 4000;

interface TransactionScope {
  // The write lock (or read semaphore) the transaction holds; a handle on the
  // same file shares it, so it identifies "would wait on itself" exactly.
  lock: Semaphore;
  open: boolean;
}

// Lets a call made from inside a transaction callback be recognised, so it
// fails fast instead of queueing behind the very lock its caller holds.
const transactionScope = new AsyncLocalStorage<TransactionScope>();

interface Settings {
  location: Location;
  redact: Redact;
  logger: StorageLogger;
  now: () => number;
  random: () => number;
  busyRetryMs: number;
  readConcurrency: number;
  synchronous: 'normal' | 'full';
  writeLock: Semaphore;
  releaseWriteLock: () => void;
  /** A local file's synchronous batch writer, beside the client's writer connection. */
  direct: DirectWriter | undefined;
}

type LibsqlTransaction = Awaited<ReturnType<Client['transaction']>>;

// Marks a BUSY raised while taking the write lock through `exec`, which
// finalises its statement, so the connection needs no repair afterwards.
const cleanBusy = new WeakSet<object>();

class LibsqlDatabase extends DatabaseCore implements Database {
  readonly kind: DatabaseKind;
  readonly dialect = 'libsql' as const;
  readonly url: string;
  readonly client: Client;
  readonly #readers: ReaderClients | undefined;
  readonly #settings: Settings;
  readonly #fail: ErrorMapper;
  readonly #writeLock: Semaphore;
  readonly #readLock: Semaphore;
  // A memory database has one connection, so reads must queue behind writes too.
  readonly #readsShareWriteLock: boolean;
  #closed = false;

  constructor(writer: Client, readers: ReaderClients | undefined, settings: Settings) {
    super({
      logger: settings.logger,
      now: settings.now,
      closeHint:
        'writes queued at shutdown may be lost; check disk space and permissions of the database file',
    });
    this.kind = settings.location.kind;
    this.url = settings.location.safeUrl;
    this.client = writer;
    this.#readers = readers;
    this.#settings = settings;
    this.#fail = createErrorMapper(this.url, settings.redact);
    this.#writeLock = settings.writeLock;
    this.#readsShareWriteLock = this.kind === 'memory';
    this.#readLock = new Semaphore(settings.readConcurrency);
  }

  async execute<Row = SqlRow>(statement: Statement, args?: SqlArgs): Promise<ExecuteResult<Row>> {
    this.checkUsable();
    const normalised = toInStatement(statement, args);
    const run = async (client: Client) => {
      try {
        return toExecuteResult<Row>(await client.execute(normalised as InStatement));
      } catch (error) {
        return this.#fail(error, normalised.sql);
      }
    };
    if (isReadOnlySql(normalised.sql)) {
      return this.#read(run);
    }
    if (this.kind === 'file' && !mustRunAlone(normalised.sql)) {
      // Inside a transaction the write lock is taken by BEGIN IMMEDIATE through
      // exec, so a BUSY cannot leave a half-run statement on the connection.
      return this.#transaction((tx) => tx.execute<Row>(normalised), 'write');
    }
    return this.#writeLock.run(() => this.#retry(() => run(this.client), this.#repairWriterAfterBusy()));
  }

  async batch(statements: Statement[], mode: TransactionMode = 'write'): Promise<ExecuteResult[]> {
    this.checkUsable();
    if (statements.length === 0) return [];
    const direct = this.#settings.direct;
    if (mode === 'write' && direct !== undefined) {
      const plain = statements.map((statement) => toInStatement(statement));
      // Runs start to finish in one turn of the event loop, under the same lock as every writer.
      return this.#writeLock.run(() =>
        this.#retry(async () => {
          try {
            return direct.batch(plain);
          } catch (error) {
            return this.#fail(error);
          }
        }),
      );
    }
    const normalised = statements.map((statement) => toInStatement(statement) as InStatement);
    if (mode === 'write' && this.kind === 'file') {
      return this.#transaction((tx) => tx.batch(normalised), 'write');
    }
    const guarded = this.#guardsReads(mode);
    const run = async (client: Client) => {
      try {
        const results = await client.batch(guarded ? [QUERY_ONLY_ON, ...normalised] : normalised, mode);
        return results.slice(guarded ? 1 : 0).map((result) => toExecuteResult(result));
      } catch (error) {
        return this.#fail(error);
      } finally {
        await this.#liftReadGuard(mode);
      }
    };
    if (mode === 'write') {
      return this.#writeLock.run(() => this.#retry(() => run(this.client)));
    }
    // A memory database's reads already queue on the write lock inside #read: taking it here too
    // would wait on itself.
    if (this.#readsShareWriteLock) return this.#read(run);
    return this.#readLock.run(() => this.#read(run));
  }

  async transaction<T>(
    callback: (tx: Transaction) => Promise<T>,
    options: TransactionOptions = {},
  ): Promise<T> {
    this.checkUsable();
    return this.#transaction(callback, options.mode ?? 'write');
  }

  protected batchTransaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.#transaction(callback, 'write');
  }

  protected detached<T>(task: () => T): T {
    return transactionScope.exit(task);
  }

  protected insideOwnTransaction(): boolean {
    const scope = transactionScope.getStore();
    return scope?.open === true && scope.lock === this.#writeLock;
  }

  protected async release(): Promise<void> {
    this.#closed = true;
    // Writes queued before close() still run; the lock hands over in order.
    await this.#writeLock.run(async () => {});
    this.client.close();
    this.#settings.direct?.close();
    this.#readers?.close();
    this.#settings.releaseWriteLock();
  }

  // Plain reads: a file uses its reader pool (replaced after a BUSY), memory
  // queues behind writes on its single connection, remote goes straight out.
  #read<T>(run: (client: Client) => Promise<T>): Promise<T> {
    const readers = this.#readers;
    if (readers !== undefined) {
      return this.#retry(
        () => readers.use(run),
        async () => readers.replace(),
      );
    }
    if (this.#readsShareWriteLock) {
      return this.#writeLock.run(() => this.#retry(() => run(this.client)));
    }
    return this.#retry(() => run(this.client));
  }

  // After a BUSY outside the exec path, the writer connection may hold a
  // statement that was never reset; reopen it and restore its pragmas.
  #repairWriterAfterBusy(): ((error: unknown) => Promise<void>) | undefined {
    if (this.kind !== 'file') return undefined;
    return async (error) => {
      if (typeof error === 'object' && error !== null && cleanBusy.has(error)) return;
      await this.client.reconnect();
      await this.client.execute(
        `PRAGMA synchronous = ${this.#settings.synchronous === 'full' ? 'FULL' : 'NORMAL'}`,
      );
      await this.client.execute('PRAGMA foreign_keys = ON');
      this.#settings.logger.debug({ url: this.url }, 'writer connection reopened after BUSY');
    };
  }

  // Local libsql accepts writes after BEGIN TRANSACTION READONLY, so read
  // transactions on local connections set query_only to make the mode real. A
  // remote server enforces READONLY itself.
  #guardsReads(mode: TransactionMode): boolean {
    return mode === 'read' && this.kind !== 'remote';
  }

  // Reader connections of a file keep query_only for good; the one connection
  // of a memory database also carries writes, so it gets it back.
  async #liftReadGuard(mode: TransactionMode): Promise<void> {
    if (mode === 'read' && this.kind === 'memory' && !this.#closed) {
      await this.client.execute('PRAGMA query_only = OFF');
    }
  }

  #lockFor(mode: TransactionMode): Semaphore {
    return mode === 'write' || this.#readsShareWriteLock ? this.#writeLock : this.#readLock;
  }

  #retry<T>(operation: () => Promise<T>, onBusy?: (error: unknown) => Promise<void>): Promise<T> {
    let lastError: unknown;
    return withBusyRetry(
      async () => {
        try {
          return await operation();
        } catch (error) {
          lastError = error;
          throw error;
        }
      },
      {
        budgetMs: this.#settings.busyRetryMs,
        now: this.#settings.now,
        random: this.#settings.random,
        logger: this.#settings.logger,
        url: this.url,
        onBusy: onBusy === undefined ? undefined : () => onBusy(lastError),
      },
    );
  }

  async #begin(client: Client, mode: TransactionMode): Promise<LibsqlTransaction> {
    if (mode === 'write' && this.kind === 'file') {
      // @libsql/client runs BEGIN IMMEDIATE as a prepared statement and does
      // not reset it when it fails with BUSY; the connection then keeps an
      // active statement and later autocommit writes never commit. exec()
      // finalises its statements, so the lock is taken through it instead.
      const inner = await client.transaction('deferred');
      try {
        await inner.executeMultiple('COMMIT; BEGIN IMMEDIATE');
      } catch (error) {
        inner.close();
        const mapped = toStorageError(error, this.#settings.redact, {
          url: this.url,
          sql: 'BEGIN IMMEDIATE',
        });
        cleanBusy.add(mapped);
        throw mapped;
      }
      return inner;
    }
    return client.transaction(mode);
  }

  // The batchers come in here directly so they can still flush while close() runs.
  #transaction<T>(callback: (tx: Transaction) => Promise<T>, mode: TransactionMode): Promise<T> {
    const lock = this.#lockFor(mode);
    // No closed check here: work queued before close() must still run, and
    // anything later was refused by checkUsable or meets a closed client.
    const attempt = async (client: Client): Promise<T> => {
      let inner: LibsqlTransaction;
      try {
        inner = await this.#begin(client, mode);
      } catch (error) {
        return this.#fail(error);
      }
      const scope: TransactionScope = { lock, open: true };
      try {
        if (this.#guardsReads(mode)) {
          try {
            await inner.execute(QUERY_ONLY_ON);
          } catch (error) {
            return this.#fail(error, QUERY_ONLY_ON);
          }
        }
        const result = await transactionScope.run(scope, () =>
          callback(new TransactionHandle(inner, mode, this.#fail)),
        );
        scope.open = false;
        try {
          await inner.commit();
        } catch (error) {
          return this.#fail(error, 'COMMIT');
        }
        return result;
      } catch (error) {
        scope.open = false;
        await inner.rollback().catch(() => {
          // The connection may already be gone; close() below still releases it.
        });
        throw error;
      } finally {
        scope.open = false;
        inner.close();
        await this.#liftReadGuard(mode);
      }
    };
    const readers = this.#readers;
    if (mode === 'read' && readers !== undefined) {
      return lock.run(() =>
        this.#retry(
          () => readers.use(attempt),
          async () => readers.replace(),
        ),
      );
    }
    return lock.run(() => this.#retry(() => attempt(this.client), this.#repairWriterAfterBusy()));
  }
}

/** True for a `postgres://` or `postgresql://` URL, which selects the PostgreSQL adapter. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(url);
}

function invalidOptions(message: string, cause?: unknown): StorageError {
  return new StorageError('INVALID_OPTIONS', message, cause === undefined ? {} : { cause });
}

async function configureFile(
  client: Client,
  synchronous: 'normal' | 'full',
  busyTimeoutMs: number,
  logger: StorageLogger,
  url: string,
): Promise<void> {
  const journal = await client.execute('PRAGMA journal_mode = WAL');
  const mode = String(journal.rows[0]?.journal_mode ?? '').toLowerCase();
  if (mode !== 'wal') {
    logger.warn(
      {
        url,
        journalMode: mode,
        errorKind: 'platform',
        hint: 'keep the data directory on a local file system (network and some container mounts cannot share WAL memory)',
      },
      'the file system refused WAL mode; readers will block writers',
    );
  }
  // These three are per connection, which is why writes use a single connection.
  await client.execute(`PRAGMA synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  await client.execute('PRAGMA foreign_keys = ON');
  await client.execute(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
}

/**
 * Opens a libsql database: a local file (created with its directory, WAL,
 * busy_timeout, synchronous and foreign keys set), `:memory:`, or a remote
 * sqld/Turso server reached with `authToken`.
 *
 * @throws {StorageError} `INVALID_OPTIONS` for bad options or an unresolved
 * `${secret:…}` token, `OPEN_FAILED` when the database cannot be opened, `BUSY`
 * when another process keeps it locked past the retry budget.
 */
/**
 * The libsql client factory for a location. A file or in-memory database needs only the
 * SQLite entry point; the full client adds the HTTP/WebSocket (hrana) protocol code, ~10 MB
 * of memory, so it is loaded only for a remote URL.
 */
async function clientFactory(kind: Location['kind']): Promise<(config: Config) => Client> {
  const module =
    kind === 'file' || kind === 'memory'
      ? await import('@libsql/client/sqlite3')
      : await import('@libsql/client');
  return module.createClient;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const { migrations, ...connection } = options;
  const database = await connect(connection);
  if (migrations) {
    try {
      for (const [packageName, list] of Object.entries(migrations)) await database.migrate(packageName, list);
    } catch (error) {
      await database.close();
      throw error;
    }
  }
  return database;
}

async function connect(options: Omit<OpenDatabaseOptions, 'migrations'>): Promise<Database> {
  const { logger = noopLogger, now = Date.now, random = Math.random, ...rest } = options;
  const parsed = openDatabaseOptionsSchema.safeParse(rest);
  if (!parsed.success) {
    throw invalidOptions(
      `Invalid storage options: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`,
    );
  }
  const settings = parsed.data;
  if (settings.authToken !== undefined && /\$\{secret:[^}]*\}/.test(settings.authToken)) {
    throw invalidOptions(
      'storage.authToken is still an unresolved secret reference; resolve it before opening the database',
    );
  }
  const url = settings.url ?? fileUrlFor(settings.dataDir!, settings.fileName);
  const redact = createRedactor([settings.authToken, ...credentialsIn(url)]);
  if (isPostgresUrl(url)) {
    // Loaded only here, so an embedded daemon never loads `pg`.
    const { openPgDatabase } = await import('./pg/pg-database.js');
    return openPgDatabase(url, { redact, logger, now, random, ...settings });
  }
  let location: Location;
  try {
    location = parseLocation(url);
  } catch (error) {
    throw invalidOptions(redact(error instanceof Error ? error.message : String(error)));
  }
  const context = { url: location.safeUrl };
  const retry = <T>(operation: () => Promise<T>, onBusy?: () => Promise<void>) =>
    withBusyRetry(
      async () => {
        try {
          return await operation();
        } catch (error) {
          throw toStorageError(error, redact, context);
        }
      },
      { budgetMs: settings.busyRetryMs, now, random, logger, url: location.safeUrl, onBusy },
    );

  const opened: Array<{ close(): void }> = [];
  let releaseWriteLock = (): void => {};
  let direct: DirectWriter | undefined;
  try {
    let writer: Client;
    let readers: ReaderClients | undefined;
    let writeLock: Semaphore;
    const createClient = await clientFactory(location.kind);
    if (location.kind === 'file') {
      mkdirSync(dirname(location.filePath!), { recursive: true });
      // One writer connection, so the per-connection pragmas below cover every write.
      writer = createClient({ url: location.clientUrl, concurrency: 1, timeout: settings.busyTimeoutMs });
      opened.push(writer);
      // The client's first probe has created the file, so its real path exists now.
      const realPath = realpathSync(location.filePath!);
      const shared = acquireFileWriteLock(realPath);
      ({ lock: writeLock, release: releaseWriteLock } = shared);
      const fileWriter = writer;
      await writeLock.run(() =>
        retry(
          () =>
            configureFile(fileWriter, settings.synchronous, settings.busyTimeoutMs, logger, location.safeUrl),
          // A BUSY pragma can leave an unreset statement behind; start again on a fresh connection.
          async () => {
            await fileWriter.reconnect();
          },
        ),
      );
      const readerUrl = location.clientUrl;
      // One more connection than read transactions, so a plain read always finds one free.
      readers = new ReaderClients(() =>
        createClient({
          url: readerUrl,
          concurrency: settings.readConcurrency + 1,
          timeout: settings.busyTimeoutMs,
        }),
      );
      opened.push(readers);
      const { default: openConnection } = await import('libsql');
      direct = new DirectWriter((path, options) => new openConnection(path, options), {
        filePath: realPath,
        busyTimeoutMs: settings.busyTimeoutMs,
        synchronous: settings.synchronous,
        cacheSize: DIRECT_STATEMENT_CACHE,
        autocheckpointPages: DIRECT_AUTOCHECKPOINT_PAGES,
      });
      opened.push(direct);
    } else if (location.kind === 'memory') {
      writer = createClient({ url: location.clientUrl });
      opened.push(writer);
      await retry(() => writer.execute('PRAGMA foreign_keys = ON'));
      writeLock = new Semaphore(1);
    } else {
      writer = createClient(
        settings.authToken === undefined
          ? { url: location.clientUrl }
          : { url: location.clientUrl, authToken: settings.authToken },
      );
      opened.push(writer);
      // Fail at open, not at the first query, when the server is unreachable or the token is wrong.
      await retry(() => writer.execute('SELECT 1'));
      writeLock = new Semaphore(1);
    }
    logger.info({ url: location.safeUrl, kind: location.kind }, 'database opened');
    const database = new LibsqlDatabase(writer, readers, {
      writeLock,
      releaseWriteLock,
      location,
      redact,
      logger,
      now,
      random,
      busyRetryMs: settings.busyRetryMs,
      readConcurrency: settings.readConcurrency,
      synchronous: settings.synchronous,
      direct,
    });
    return database;
  } catch (error) {
    for (const client of opened) client.close();
    releaseWriteLock();
    if (error instanceof StorageError && error.code !== 'SQL_ERROR' && error.code !== 'DRIVER_ERROR') {
      throw error;
    }
    const reason = redact(error instanceof Error ? error.message : String(error));
    throw new StorageError('OPEN_FAILED', `Could not open the database at ${location.safeUrl}: ${reason}`, {
      cause: error instanceof StorageError ? error : toStorageError(error, redact, context),
      data: { url: location.safeUrl, kind: location.kind },
    });
  }
}
