import { randomUUID } from 'node:crypto';
import type { Logger } from '@agentd/contracts';
import { z } from 'zod';
import type { DeliveryAttempt, OutboundOperation, OutboundResult } from './adapter.js';
import { ChannelsError, isChannelsError } from './errors.js';
import {
  type ChannelsDatabase,
  DELIVERY_STAGES,
  type DeliveryEntry,
  type DeliveryStage,
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
  /** Longest sleep of the drain loop between checks. @default 1000 */
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

/**
 * Creates the delivery queue: every outbound operation is a row written before it is
 * attempted, claimed (`sending`, committed) before the platform is called, and recorded
 * (`sent`) after. Retryable failures wait with exponential backoff (at least the platform's
 * `retry_after`) in `failed`; a permanent failure or the last attempt moves to `deadLetter`.
 */
export function createDeliveryQueue(options: DeliveryQueueOptions): DeliveryQueue {
  const settings = parseWith(optionsSchema, options, 'delivery queue options');
  const { db } = options;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? noopLogger;
  const inFlight = new Set<string>();
  /** Running lanes by chat (`<type>\0<id>`). */
  const lanes = new Map<string, Promise<unknown>>();
  const waiters = new Map<string, Array<(entry: DeliveryEntry) => void>>();
  let timer: NodeJS.Timeout | undefined;
  let draining: Promise<void> | undefined;
  let again = false;
  let started = false;
  let closed = false;

  const get = async (deliveryId: string): Promise<DeliveryEntry | undefined> => {
    const [row] = (await db.execute(sql.byId, [deliveryId])).rows;
    return row ? toEntry(row) : undefined;
  };
  const settle = async (deliveryId: string): Promise<void> => {
    const list = waiters.get(deliveryId);
    if (!list) return;
    const entry = await get(deliveryId);
    if (!entry || (entry.stage !== 'sent' && entry.stage !== 'deadLetter')) return;
    waiters.delete(deliveryId);
    for (const resolve of list) resolve(entry);
  };
  const report = (entry: DeliveryEntry, started: number, errorKind?: string) => {
    try {
      options.onAttempt?.({
        entry,
        outcome: errorKind === undefined ? 'delivered' : 'failed',
        latencyMs: now() - started,
        ...(errorKind !== undefined ? { errorKind } : {}),
      });
    } catch {
      // Observability must never stop a delivery.
    }
  };

  /** One claimed attempt: platform call, then the recorded outcome. */
  const attempt = async (entry: DeliveryEntry): Promise<void> => {
    const began = now();
    const claimed = await db.execute(sql.claim, [began, entry.deliveryId]);
    if (claimed.rowsAffected !== 1) return;
    const number = entry.attempts + 1;
    try {
      const result = await options.deliver(entry.channelType, entry.operation, {
        deliveryId: entry.deliveryId,
        attempt: number,
      });
      await db.execute(sql.sent, [result.messageId, now(), entry.deliveryId]);
      report({ ...entry, stage: 'sent', attempts: number, messageId: result.messageId }, began);
    } catch (error) {
      await recordFailure(entry, number, error, began);
    }
    await settle(entry.deliveryId);
  };

  const recordFailure = async (entry: DeliveryEntry, number: number, error: unknown, began: number) => {
    const message = describe(error);
    const data = isChannelsError(error) ? error.data : undefined;
    // Unknown throws (network, a library bug) are treated as transient; a platform's own
    // refusal says whether it is.
    const retryable =
      !isChannelsError(error) ||
      (error.code === 'PLATFORM_ERROR' && data?.retryable === true) ||
      error.code === 'UNCONFIGURED';
    const kind = data?.retryAfterMs !== undefined ? 'rate_limit' : retryable ? 'retryable' : 'permanent';
    if (!retryable || number >= settings.maxAttempts) {
      const why = retryable ? `gave up after ${number} attempts: ${message}` : message;
      await db.execute(sql.deadLetter, [why, now(), entry.deliveryId]);
      logger.warn(
        {
          deliveryId: entry.deliveryId,
          channelType: entry.channelType,
          attempts: number,
          errorKind: 'network',
          hint: 'see lastError of the entry; fix the target or the platform config and send again',
        },
        'delivery dead-lettered',
      );
      report({ ...entry, stage: 'deadLetter', attempts: number, lastError: why }, began, kind);
      return;
    }
    const backoff = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (number - 1));
    const wait = Math.max(backoff, data?.retryAfterMs ?? 0);
    await db.execute(sql.failed, [message, now() + wait, now(), entry.deliveryId]);
    report({ ...entry, stage: 'failed', attempts: number, lastError: message }, began, kind);
  };

  /**
   * One chat's lane: its due entries in order, one at a time, until none is due. Lanes run
   * independently, so a platform that hangs holds back only its own chat.
   */
  const runLane = async (sample: string): Promise<number> => {
    let attempted = 0;
    for (;;) {
      if (closed) return attempted;
      const rows = (await db.execute(sql.dueOfChat, [sample, now(), 16])).rows.map(toEntry);
      if (rows.length === 0) return attempted;
      attempted += rows.length;
      for (const entry of rows) {
        if (closed) return attempted;
        inFlight.add(entry.deliveryId);
        try {
          await attempt(entry);
        } finally {
          inFlight.delete(entry.deliveryId);
        }
      }
    }
  };

  /** Starts a lane for every chat with due entries and no lane yet, up to `concurrency` lanes. */
  const drainOnce = async (): Promise<void> => {
    const free = settings.concurrency - lanes.size;
    if (free <= 0) return;
    const chats = (await db.execute(sql.dueChats, [now(), settings.concurrency * 4])).rows;
    let opened = 0;
    for (const row of chats) {
      if (opened >= free || closed) break;
      const lane = `${String(row.channel_type)}\u0000${String(row.channel_id)}`;
      if (lanes.has(lane)) continue;
      opened++;
      const run = runLane(String(row.sample)).then(
        (attempted) => {
          lanes.delete(lane);
          // A lane that found nothing to do must not wake the drain at once, or it would spin.
          if (attempted > 0) kick();
        },
        (err: unknown) => {
          lanes.delete(lane);
          logger.error(
            { err, errorKind: 'resource', hint: 'the database may be unavailable; the drain retries' },
            'delivery lane failed',
          );
        },
      );
      lanes.set(lane, run);
    }
  };

  const schedule = async (): Promise<void> => {
    if (closed) return;
    const [row] = (await db.execute(sql.nextDue)).rows;
    const at = row?.at === null || row?.at === undefined ? undefined : Number(row.at);
    // Due work that found no free lane (its chat is busy, or every lane is) is picked up when a
    // lane ends, which kicks the drain; the timer only covers retries coming due.
    const wait = at === undefined ? settings.pollMs : at - now();
    const delay = wait <= 0 ? settings.pollMs : Math.min(settings.pollMs, wait);
    clearTimeout(timer);
    timer = setTimeout(kick, delay);
    timer.unref?.();
  };

  /** Runs the drain; a kick during a run makes it go round once more. */
  function kick(): void {
    if (closed || !started) return;
    if (draining) {
      again = true;
      return;
    }
    draining = (async () => {
      do {
        again = false;
        await drainOnce();
      } while (again && !closed);
      await schedule();
    })()
      .catch((err: unknown) =>
        logger.error(
          { err, errorKind: 'resource', hint: 'the database may be unavailable; the drain retries' },
          'delivery drain failed',
        ),
      )
      .finally(() => {
        draining = undefined;
        // A kick that came while the next wake was being scheduled.
        if (again && !closed) kick();
      });
  }

  return {
    async start() {
      if (started) return;
      started = true;
      await recoverInDoubt({ db, options, now, logger });
      kick();
    },
    async enqueue(request) {
      if (closed) throw new ChannelsError('CLOSED', 'the delivery queue is closed');
      const deliveryId = randomUUID();
      const key = request.idempotencyKey ?? deliveryId;
      const at = now();
      await db.execute(sql.insert, [
        deliveryId,
        key,
        request.channelType,
        request.operation.channelId,
        JSON.stringify(request.operation),
        at,
        at,
        at,
        request.rootRunId ?? null,
      ]);
      const [row] = (await db.execute(sql.byKey, [key])).rows;
      if (!row) throw new ChannelsError('NOT_FOUND', `delivery not found: ${key}`);
      const entry = toEntry(row);
      if (entry.deliveryId === deliveryId) kick();
      return { entry, existing: entry.deliveryId !== deliveryId };
    },
    settled(deliveryId, timeoutMs) {
      return new Promise((resolve, reject) => {
        const list = waiters.get(deliveryId) ?? [];
        const done = (entry: DeliveryEntry) => {
          clearTimeout(limit);
          resolve(entry);
        };
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
        // It may have settled before the waiter was added.
        void settle(deliveryId);
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
      clearTimeout(timer);
      // Attempts in flight may finish (each platform client has its own timeout), but a stop
      // does not wait on a platform longer than this: an unrecorded attempt is recovered at start.
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([draining, ...lanes.values()]),
        new Promise((resolve) => (wait = setTimeout(resolve, 5000))),
      ]);
      clearTimeout(wait);
    },
  };
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
