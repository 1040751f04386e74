import type { Logger } from '@agentd/contracts';
import { z } from 'zod';
import type { DeliveryAttempt, OutboundOperation, OutboundResult } from './adapter.js';
import { ChannelsError, isChannelsError } from './errors.js';
import { createGroupCommit } from './internal/group-commit.js';
import { createLanes } from './internal/lanes.js';
import {
  type ChannelsDatabase,
  DELIVERY_STAGES,
  type DeliveryEntry,
  type DeliveryStage,
  deliveryIdAt,
  sql,
  toEntry,
} from './internal/queue-store.js';
import { parseWith } from './internal/validate.js';
import { noopLogger } from './logger.js';

/** How one attempt ended, for traces (`obs.delivery.*`) and channel activity. */
export interface AttemptOutcome {
  entry: DeliveryEntry;
  outcome: 'delivered' | 'failed';
  latencyMs: number;
  /** `rate_limit`, `retryable`, `permanent`, `in_doubt`; absent when delivered. */
  errorKind?: string;
}

/** Options of {@link createDeliveryQueue}. */
export interface DeliveryQueueOptions {
  /** The libsql handle; `channelsMigrations` must have been applied. */
  db: ChannelsDatabase;
  /** Carries one attempt to the platform (the service routes it to the adapter). */
  deliver(
    channelType: string,
    operation: OutboundOperation,
    attempt: DeliveryAttempt,
  ): Promise<OutboundResult>;
  /**
   * Asks the platform about an attempt a crash cut off: a result when it happened, `null`
   * when it did not, `undefined` when the platform cannot tell.
   */
  reconcile?(
    channelType: string,
    operation: OutboundOperation,
    attempt: DeliveryAttempt,
  ): Promise<OutboundResult | null | undefined>;
  /** Attempts before an entry goes to `deadLetter`. @default 5 */
  maxAttempts?: number;
  /** First retry delay; doubles per attempt. @default 1000 */
  baseDelayMs?: number;
  /** Longest retry delay (a platform's `retry_after` may ask for more). @default 300000 */
  maxDelayMs?: number;
  /** Pause before an entry is tried again after the database refused its claim. @default 1000 */
  pollMs?: number;
  /** Entries attempted at once. @default 8 */
  concurrency?: number;
  /** Called after every attempt. */
  onAttempt?(outcome: AttemptOutcome): void;
  now?: () => number;
  logger?: Logger;
}

const optionsSchema = z.object({
  db: z.custom<ChannelsDatabase>((value) => typeof value === 'object' && value !== null, 'a database'),
  deliver: z.function(),
  reconcile: z.function().optional(),
  maxAttempts: z.number().int().min(1).max(100).default(5),
  baseDelayMs: z.number().int().min(0).max(3_600_000).default(1000),
  maxDelayMs: z.number().int().min(0).max(86_400_000).default(300_000),
  pollMs: z.number().int().min(10).max(60_000).default(1000),
  concurrency: z.number().int().min(1).max(256).default(8),
});

/** What `enqueue` takes. */
export interface EnqueueRequest {
  channelType: string;
  operation: OutboundOperation;
  /**
   * Names the delivery once and for all: a second enqueue with the same key answers the first
   * entry (and its result once sent) instead of sending again. @default a fresh id
   */
  idempotencyKey?: string | undefined;
  /** The autonomy run asking; its sends are never repeated when a crash leaves them in doubt. */
  rootRunId?: string | undefined;
}

/** Counts by stage (`delivery.queue.status`). */
export type StageCounts = Record<DeliveryStage, number>;

/** The durable outbound queue. */
export interface DeliveryQueue {
  /** Recovers entries a crash left in `sending`, then drains continuously. */
  start(): Promise<void>;
  /** Writes the entry (before any attempt) and wakes the drain; `existing` when the key was known. */
  enqueue(request: EnqueueRequest): Promise<{ entry: DeliveryEntry; existing: boolean }>;
  /** Resolves when the entry is `sent` or `deadLetter`, or after `timeoutMs` with its stage then. */
  settled(deliveryId: string, timeoutMs: number): Promise<DeliveryEntry>;
  get(deliveryId: string): Promise<DeliveryEntry | undefined>;
  counts(channelType?: string): Promise<StageCounts>;
  /** Changes the retry policy; entries already waiting keep their next attempt time. */
  configure(policy: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number }): void;
  /** Stops the drain; attempts in flight finish. Idempotent. */
  close(): Promise<void>;
}

/** A delivery held in memory from its write until its final record is committed. */
interface Held {
  entry: DeliveryEntry;
  /** Its row is stored: `false` when its idempotency key was taken or the write failed. */
  written: Promise<boolean>;
  /** Its stored row is `sending` for the attempt about to be made. */
  claimed: boolean;
  dueAt(): number;
}

/**
 * Creates the delivery queue: every outbound operation is a row written before it is
 * attempted, claimed (`sending`, committed) before the platform is called, and recorded
 * (`sent`) after. Retryable failures wait with exponential backoff (at least the platform's
 * `retry_after`) in `failed`; a permanent failure or the last attempt moves to `deadLetter`.
 *
 * Pending entries are held in memory in per-chat lanes, so an attempt needs no read; writes
 * are group-committed, and an entry whose chat is idle is written already claimed.
 */
export function createDeliveryQueue(options: DeliveryQueueOptions): DeliveryQueue {
  const settings = parseWith(optionsSchema, options, 'delivery queue options');
  const { db } = options;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? noopLogger;
  const commits = createGroupCommit(db, now);
  /** Entries in the lanes, by delivery id. */
  const held = new Map<string, Held>();
  const waiters = new Map<string, Array<(entry: DeliveryEntry) => void>>();
  /** Record writes not yet committed; a stop waits for them. */
  const records = new Set<Promise<unknown>>();
  let starting: Promise<void> | undefined;
  let started = false;
  let closed = false;

  const get = async (deliveryId: string): Promise<DeliveryEntry | undefined> => {
    const [row] = (await db.execute(sql.byId, [deliveryId])).rows;
    return row ? toEntry(row) : undefined;
  };
  const report = (entry: DeliveryEntry, began: number, errorKind?: string) => {
    try {
      options.onAttempt?.({
        entry,
        outcome: errorKind === undefined ? 'delivered' : 'failed',
        latencyMs: now() - began,
        ...(errorKind !== undefined ? { errorKind } : {}),
      });
    } catch {
      // Observability must never stop a delivery.
    }
  };
  const track = (record: Promise<unknown>): void => {
    const done = record.finally(() => records.delete(done));
    records.add(done);
  };
  /** A write the lanes do not wait for: a failure leaves the row as it was, recovered at start. */
  const logged = (what: string, deliveryId: string) => (err: unknown) =>
    logger.error(
      {
        err,
        deliveryId,
        errorKind: 'resource',
        hint: 'the database may be unavailable; recovered at the next start',
      },
      `delivery ${what} not recorded`,
    );

  /**
   * The entry's last state: once its record is committed the entry leaves memory and its
   * waiters hear it. A record that fails leaves the row in `sending`, which the next start
   * reconciles; the waiters then answer what is stored when they time out.
   */
  const finish = (item: Held, entry: DeliveryEntry, record: Promise<boolean>): void => {
    item.entry = entry;
    track(
      record
        .then(
          (wrote) => {
            if (!wrote) {
              logger.warn(
                {
                  deliveryId: entry.deliveryId,
                  errorKind: 'internal',
                  hint: 'the stored row was not in sending',
                },
                `delivery ${entry.stage} not recorded`,
              );
              return;
            }
            const list = waiters.get(entry.deliveryId) ?? [];
            waiters.delete(entry.deliveryId);
            for (const resolve of list) resolve(entry);
          },
          logged(entry.stage, entry.deliveryId),
        )
        .finally(() => held.delete(entry.deliveryId)),
    );
  };

  /** One due entry of a lane: claim it unless it was written claimed, attempt it, record it. */
  const step = async (item: Held): Promise<boolean> => {
    const { deliveryId } = item.entry;
    if (!(await item.written)) {
      held.delete(deliveryId);
      return false;
    }
    if (!item.claimed) {
      const at = now();
      let won: boolean;
      try {
        won = await commits.run(sql.claim, [at, deliveryId]);
      } catch (err) {
        logged('claim', deliveryId)(err);
        // The database refused the claim: nothing was attempted; try again after a pause.
        item.entry = { ...item.entry, nextAttemptAt: now() + settings.pollMs };
        return true;
      }
      if (!won) {
        held.delete(deliveryId);
        return false;
      }
      item.entry = { ...item.entry, stage: 'sending', attempts: item.entry.attempts + 1, updatedAt: at };
    }
    item.claimed = false;
    const entry = item.entry;
    const began = now();
    try {
      const result = await options.deliver(entry.channelType, entry.operation, {
        deliveryId,
        attempt: entry.attempts,
      });
      const sent: DeliveryEntry = {
        ...entry,
        stage: 'sent',
        messageId: result.messageId,
        lastError: undefined,
        updatedAt: now(),
      };
      finish(item, sent, commits.sent(deliveryId, result.messageId));
      report(sent, began);
      return false;
    } catch (error) {
      return recordFailure(item, error, began);
    }
  };

  /** Records a failed attempt; answers whether the entry stays in its lane for a retry. */
  const recordFailure = (item: Held, error: unknown, began: number): boolean => {
    const { entry } = item;
    const message = describe(error);
    const data = isChannelsError(error) ? error.data : undefined;
    // Unknown throws (network, a library bug) are treated as transient; a platform's own
    // refusal says whether it is.
    const retryable =
      !isChannelsError(error) ||
      (error.code === 'PLATFORM_ERROR' && data?.retryable === true) ||
      error.code === 'UNCONFIGURED';
    const kind = data?.retryAfterMs !== undefined ? 'rate_limit' : retryable ? 'retryable' : 'permanent';
    const at = now();
    if (!retryable || entry.attempts >= settings.maxAttempts) {
      const why = retryable ? `gave up after ${entry.attempts} attempts: ${message}` : message;
      const dead: DeliveryEntry = { ...entry, stage: 'deadLetter', lastError: why, updatedAt: at };
      finish(item, dead, commits.run(sql.deadLetter, [why, at, entry.deliveryId]));
      logger.warn(
        {
          deliveryId: entry.deliveryId,
          channelType: entry.channelType,
          attempts: entry.attempts,
          errorKind: 'network',
          hint: 'see lastError of the entry; fix the target or the platform config and send again',
        },
        'delivery dead-lettered',
      );
      report(dead, began, kind);
      return false;
    }
    const backoff = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (entry.attempts - 1));
    const nextAttemptAt = at + Math.max(backoff, data?.retryAfterMs ?? 0);
    item.entry = { ...entry, stage: 'failed', lastError: message, nextAttemptAt, updatedAt: at };
    // The retry's claim is committed after this record (the commits keep their order).
    track(
      commits
        .run(sql.failed, [message, nextAttemptAt, at, entry.deliveryId])
        .catch(logged('failure', entry.deliveryId)),
    );
    report(item.entry, began, kind);
    return true;
  };

  const lanes = createLanes<Held>({
    concurrency: settings.concurrency,
    now,
    run: step,
    onError: (err, item) => {
      held.delete(item.entry.deliveryId);
      logger.error(
        { err, errorKind: 'internal', hint: 'the entry is attempted again at the next start' },
        'delivery lane failed',
      );
    },
  });
  const hold = (entry: DeliveryEntry, written: Promise<boolean>, claimed: boolean): void => {
    const item: Held = { entry, written, claimed, dueAt: () => item.entry.nextAttemptAt };
    held.set(entry.deliveryId, item);
    lanes.add(chatOf(entry), item);
  };

  return {
    async start() {
      if (started) return;
      starting ??= (async () => {
        // Writes handed over before the start are committed before the stored entries are read.
        await commits.idle();
        await recoverInDoubt({ db, options, now, logger });
        const rows = (await db.execute(sql.pending)).rows;
        started = true;
        for (const row of rows) hold(toEntry(row), Promise.resolve(true), false);
      })().finally(() => {
        starting = undefined;
      });
      await starting;
    },
    async enqueue(request) {
      if (closed) throw new ChannelsError('CLOSED', 'the delivery queue is closed');
      // An entry written while the start reads the stored ones would be held twice.
      if (starting) await starting;
      const at = now();
      const deliveryId = deliveryIdAt(at);
      const live = started && !closed;
      const chat = chatOf({ channelType: request.channelType, operation: request.operation });
      // A chat with nothing ahead and a free lane is attempted at once, so its row is written
      // already claimed: one commit before the platform call instead of two.
      const claimed = live && lanes.startsAt(chat);
      const entry: DeliveryEntry = {
        deliveryId,
        idempotencyKey: request.idempotencyKey ?? deliveryId,
        channelType: request.channelType,
        operation: request.operation,
        stage: claimed ? 'sending' : 'queued',
        attempts: claimed ? 1 : 0,
        nextAttemptAt: at,
        createdAt: at,
        updatedAt: at,
        rootRunId: request.rootRunId,
        messageId: undefined,
        lastError: undefined,
      };
      const written = commits.insert(entry);
      if (live)
        hold(
          entry,
          written.catch(() => false),
          claimed,
        );
      if (await written) return { entry, existing: false };
      const [row] = (await db.execute(sql.byKey, [entry.idempotencyKey])).rows;
      if (!row) throw new ChannelsError('NOT_FOUND', `delivery not found: ${entry.idempotencyKey}`);
      return { entry: toEntry(row), existing: true };
    },
    settled(deliveryId, timeoutMs) {
      return new Promise((resolve, reject) => {
        const done = (entry: DeliveryEntry) => {
          clearTimeout(limit);
          resolve(entry);
        };
        const list = waiters.get(deliveryId) ?? [];
        list.push(done);
        waiters.set(deliveryId, list);
        const limit = setTimeout(() => {
          const rest = (waiters.get(deliveryId) ?? []).filter((item) => item !== done);
          if (rest.length > 0) waiters.set(deliveryId, rest);
          else waiters.delete(deliveryId);
          get(deliveryId).then((entry) => {
            if (entry) resolve(entry);
            else reject(new ChannelsError('NOT_FOUND', `delivery not found: ${deliveryId}`));
          }, reject);
        }, timeoutMs);
        // An entry in memory is answered when its record commits; any other may be settled already.
        if (held.has(deliveryId)) return;
        get(deliveryId).then((entry) => {
          if (entry && (entry.stage === 'sent' || entry.stage === 'deadLetter')) {
            const rest = (waiters.get(deliveryId) ?? []).filter((item) => item !== done);
            if (rest.length > 0) waiters.set(deliveryId, rest);
            else waiters.delete(deliveryId);
            done(entry);
          }
        }, reject);
      });
    },
    get,
    configure(policy) {
      const next = parseWith(
        optionsSchema.pick({ maxAttempts: true, baseDelayMs: true, maxDelayMs: true }),
        { ...settings, ...policy },
        'delivery policy',
      );
      Object.assign(settings, next);
    },
    async counts(channelType) {
      const rows =
        channelType === undefined
          ? (await db.execute(sql.counts)).rows
          : (await db.execute(sql.countsOf, [channelType])).rows;
      const counts = Object.fromEntries(DELIVERY_STAGES.map((stage) => [stage, 0])) as StageCounts;
      for (const row of rows) {
        const stage = String(row.stage) as DeliveryStage;
        if (DELIVERY_STAGES.includes(stage)) counts[stage] = Number(row.n);
      }
      return counts;
    },
    async close() {
      closed = true;
      // Attempts in flight may finish (each platform client has its own timeout), but a stop
      // does not wait on a platform longer than this: an unrecorded attempt is recovered at start.
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([lanes.close(), new Promise((resolve) => (wait = setTimeout(resolve, 5000)))]);
      clearTimeout(wait);
      await Promise.all(records);
      await commits.idle();
    },
  };
}

/** The lane of an entry: its chat (`<type>\0<id>`; a channel type never holds a NUL). */
function chatOf(entry: Pick<DeliveryEntry, 'channelType' | 'operation'>): string {
  return `${entry.channelType}\u0000${entry.operation.channelId}`;
}

/**
 * At start, every `sending` row is an attempt a crash cut off between the claim and the
 * record. The platform is asked where it can tell; otherwise a run's send (exactly-once) goes
 * to `deadLetter` as in doubt, and any other send is queued again (at-least-once).
 */
async function recoverInDoubt(context: {
  db: ChannelsDatabase;
  options: DeliveryQueueOptions;
  now: () => number;
  logger: Logger;
}): Promise<void> {
  const { db, options, now, logger } = context;
  for (const row of (await db.execute(sql.inDoubt)).rows) {
    const entry = toEntry(row);
    const attempt = { deliveryId: entry.deliveryId, attempt: entry.attempts };
    let found: OutboundResult | null | undefined;
    try {
      found = await options.reconcile?.(entry.channelType, entry.operation, attempt);
    } catch (err) {
      // The platform could not be asked now: a later start asks again; nothing is re-sent.
      logger.warn(
        { err, deliveryId: entry.deliveryId, errorKind: 'network', hint: 'reconciled at the next start' },
        'in-doubt delivery not reconciled',
      );
      continue;
    }
    if (found) await db.execute(sql.sent, [found.messageId, now(), entry.deliveryId]);
    else if (found === null || entry.rootRunId === undefined)
      await db.execute(sql.requeue, [now(), now(), entry.deliveryId]);
    else
      await db.execute(sql.deadLetter, [
        'in doubt: the daemon stopped during the attempt and the platform cannot say whether it was sent',
        now(),
        entry.deliveryId,
      ]);
  }
}

/** An error's message, kept short; adapters already keep tokens out of their messages. */
function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
