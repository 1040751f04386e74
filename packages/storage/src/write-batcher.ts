import { z } from 'zod';
import type { SqlArgs, Statement } from './types.js';

/** @internal Validates {@link WriteBatcherOptions}. */
export const writeBatcherOptionsSchema = z
  .object({
    maxBatch: z.number().int().min(1).max(10_000).default(200),
    maxDelayMs: z.number().int().min(0).max(60_000).default(20),
  })
  .strict();

/** Options for {@link Database.createWriteBatcher}. */
export interface WriteBatcherOptions {
  /**
   * Statements per transaction; reaching it commits at once without waiting for the delay.
   * @default 200
   */
  maxBatch?: number | undefined;
  /**
   * How long the first queued statement may wait for company before its transaction starts.
   * @default 20
   */
  maxDelayMs?: number | undefined;
}

/** Counters of one batcher since it was created. */
export interface WriteBatcherStats {
  /** Transactions committed. */
  transactions: number;
  /** Statements committed. */
  statements: number;
  /** Statements whose `write()` was rejected. */
  failed: number;
  /** Statements queued and not yet committed or rejected. */
  pending: number;
}

/**
 * Coalesces many small writes into few transactions. Each `write()` resolves
 * once its statement is committed; a statement that fails on its own (for
 * example a constraint) rejects only its own `write()`, the others still commit.
 */
export interface WriteBatcher {
  /** Queues one statement; resolves when it is committed. */
  write(statement: Statement, args?: SqlArgs): Promise<void>;
  /** Commits everything queued so far and resolves when that is done. */
  flush(): Promise<void>;
  /** Flushes, then rejects further writes with `CLOSED`. Idempotent. */
  close(): Promise<void>;
  /** True once `close()` was called. */
  readonly closed: boolean;
  /** A snapshot of the counters. */
  readonly stats: WriteBatcherStats;
}
