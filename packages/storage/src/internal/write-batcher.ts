import type { InStatement } from '@libsql/client';
import { StorageError, type StorageErrorCode } from '../errors.js';
import type { StorageLogger } from '../logger.js';
import type { SqlArgs, Statement, Transaction } from '../types.js';
import type { WriteBatcher, WriteBatcherStats } from '../write-batcher.js';
import { isBusyError } from './map-error.js';
import { toInStatement } from './results.js';

/** What a batcher needs from its database. */
export interface BatcherHost {
  /** Runs a write transaction through the database's write lock and retry loop. */
  transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Runs `task` outside any caller's transaction context. */
  detach<T>(task: () => T): T;
  logger: StorageLogger;
}

interface Pending {
  statement: { sql: string; args: SqlArgs };
  resolve: () => void;
  reject: (error: unknown) => void;
}

// Failures that say nothing about an individual statement: retrying the
// chunk statement by statement would only fail the same way again.
const WHOLE_BATCH_FAILURES = new Set<StorageErrorCode>([
  'BUSY',
  'CLOSED',
  'DRIVER_ERROR',
  'NESTED_TRANSACTION',
]);

function failsWholeBatch(error: unknown): boolean {
  return !(error instanceof StorageError) || WHOLE_BATCH_FAILURES.has(error.code);
}

/** The {@link WriteBatcher} implementation. */
export class Batcher implements WriteBatcher {
  readonly #host: BatcherHost;
  readonly #maxBatch: number;
  readonly #maxDelayMs: number;
  readonly #onClosed: (batcher: Batcher) => void;
  #queue: Pending[] = [];
  #timer: NodeJS.Timeout | undefined;
  #draining: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #transactions = 0;
  #statements = 0;
  #failed = 0;

  constructor(host: BatcherHost, maxBatch: number, maxDelayMs: number, onClosed: (batcher: Batcher) => void) {
    this.#host = host;
    this.#maxBatch = maxBatch;
    this.#maxDelayMs = maxDelayMs;
    this.#onClosed = onClosed;
  }

  get closed(): boolean {
    return this.#closing !== undefined;
  }

  get stats(): WriteBatcherStats {
    return {
      transactions: this.#transactions,
      statements: this.#statements,
      failed: this.#failed,
      pending: this.#queue.length,
    };
  }

  write(statement: Statement, args?: SqlArgs): Promise<void> {
    if (this.#closing !== undefined) {
      return Promise.reject(new StorageError('CLOSED', 'The write batcher is closed'));
    }
    const normalised = toInStatement(statement, args);
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ statement: normalised, resolve, reject });
      if (this.#queue.length >= this.#maxBatch) {
        void this.#start();
      } else if (this.#timer === undefined && this.#draining === undefined) {
        // While a drain runs it picks up whatever arrives, so only an idle batcher needs a timer.
        this.#timer = this.#host.detach(() => setTimeout(() => void this.#start(), this.#maxDelayMs));
      }
    });
  }

  async flush(): Promise<void> {
    for (;;) {
      if (this.#draining !== undefined) {
        await this.#draining;
      } else if (this.#queue.length > 0) {
        await this.#start();
      } else {
        return;
      }
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.flush().finally(() => this.#onClosed(this));
    return this.#closing;
  }

  #start(): Promise<void> {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.#draining ??= this.#host
      .detach(() => this.#drain())
      .finally(() => {
        this.#draining = undefined;
      });
    return this.#draining;
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      await this.#commit(this.#queue.splice(0, this.#maxBatch));
    }
  }

  // Never throws: every outcome is delivered through the callers' promises.
  async #commit(chunk: Pending[]): Promise<void> {
    let firstError: unknown;
    try {
      await this.#host.transaction((tx) =>
        tx.batch(chunk.map((pending) => pending.statement as InStatement)),
      );
      this.#settleAll(chunk);
      return;
    } catch (error) {
      firstError = error;
    }
    if (chunk.length === 1 || failsWholeBatch(firstError)) {
      this.#settleAll(chunk, firstError);
      return;
    }
    // Some statement is bad. Run the chunk again with a savepoint around each
    // statement, so the bad ones are undone alone and the rest commit together.
    let outcomes: unknown[] = [];
    try {
      await this.#host.transaction(async (tx) => {
        outcomes = [];
        for (const pending of chunk) {
          await tx.execute('SAVEPOINT batched_write');
          try {
            await tx.execute(pending.statement);
            outcomes.push(undefined);
          } catch (error) {
            if (isBusyError(error) || failsWholeBatch(error)) throw error;
            await tx.execute('ROLLBACK TO batched_write');
            outcomes.push(error);
          }
          await tx.execute('RELEASE batched_write');
        }
      });
    } catch (error) {
      this.#settleAll(chunk, error);
      return;
    }
    this.#transactions += 1;
    let rejected = 0;
    chunk.forEach((pending, index) => {
      const outcome = outcomes[index];
      if (outcome === undefined) {
        this.#statements += 1;
        pending.resolve();
      } else {
        rejected += 1;
        this.#failed += 1;
        pending.reject(outcome);
      }
    });
    this.#host.logger.warn(
      {
        statements: chunk.length,
        rejected,
        err: firstError,
        errorKind: 'validation',
        hint: 'the rejected statements were reported to their callers; the first failure is in err',
      },
      'batched write had failing statements; committed the others',
    );
  }

  #settleAll(chunk: Pending[], error?: unknown): void {
    if (error === undefined) {
      this.#transactions += 1;
      this.#statements += chunk.length;
      for (const pending of chunk) pending.resolve();
      return;
    }
    this.#failed += chunk.length;
    for (const pending of chunk) pending.reject(error);
  }
}
