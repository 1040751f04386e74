import type { WebhookOutcome } from '../handler.js';
import type { WebhookLogger } from '../logger.js';
import type { WebhookDatabase } from '../store.js';

/**
 * Request outcomes counted per UTC day, endpoint, outcome, reason and mapping:
 * summed in memory and written in one transaction `flushMs` after the first
 * unwritten count (a failed write keeps the counts for the next flush).
 */
export class OutcomeCounters {
  readonly #db: WebhookDatabase;
  readonly #logger: WebhookLogger;
  readonly #flushMs: number;
  readonly #pending = new Map<string, number>();
  #flushTimer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;

  constructor(db: WebhookDatabase, logger: WebhookLogger, flushMs: number) {
    this.#db = db;
    this.#logger = logger;
    this.#flushMs = flushMs;
  }

  /** Counts one outcome at `at` (epoch ms) and arms the flush timer. */
  record(outcome: Pick<WebhookOutcome, 'endpoint' | 'outcome' | 'reason' | 'mappingId'>, at: number): void {
    const day = new Date(at).toISOString().slice(0, 10);
    const key = JSON.stringify([
      day,
      outcome.endpoint,
      outcome.outcome,
      outcome.reason,
      outcome.mappingId ?? '',
    ]);
    this.#pending.set(key, (this.#pending.get(key) ?? 0) + 1);
    if (!this.#flushTimer) {
      this.#flushTimer = setTimeout(() => {
        this.#flushTimer = undefined;
        void this.flush();
      }, this.#flushMs);
      this.#flushTimer.unref();
    }
  }

  /** Writes the counts now (after any flush in progress). */
  async flush(): Promise<void> {
    await this.#flushing;
    if (this.#pending.size === 0) return;
    const entries = [...this.#pending.entries()];
    this.#pending.clear();
    this.#flushing = this.#db
      .transaction(async (tx) => {
        for (const [key, count] of entries) {
          const [day, endpoint, outcome, reason, mappingId] = JSON.parse(key) as string[];
          await tx.execute(
            `INSERT INTO webhook_counters (day, endpoint, outcome, reason, mapping_id, count) VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT (day, endpoint, outcome, reason, mapping_id) DO UPDATE SET count = webhook_counters.count + excluded.count`,
            [day ?? '', endpoint ?? '', outcome ?? '', reason ?? '', mappingId ?? '', count],
          );
        }
      })
      .catch((error: unknown) => {
        // Put the counts back so the next flush retries them.
        for (const [key, count] of entries) this.#pending.set(key, (this.#pending.get(key) ?? 0) + count);
        this.#logger.warn(
          { err: error, hint: 'webhook counters are retried on the next flush', errorKind: 'resource' },
          'writing webhook counters failed',
        );
      })
      .finally(() => {
        this.#flushing = undefined;
      });
    await this.#flushing;
  }

  /** Stops the timer and writes what is counted. */
  async close(): Promise<void> {
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    await this.flush();
  }
}
