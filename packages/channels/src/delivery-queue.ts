import type { Logger } from '@agentd/contracts';
import { z } from 'zod';
import type { DeliveryAttempt, OutboundOperation, OutboundResult } from './adapter.js';
import { ChannelsError } from './errors.js';
import { createAttemptStep } from './internal/attempt.js';
import { createGroupCommit } from './internal/group-commit.js';
import { createHeld, type HeldEntry } from './internal/held.js';
import { settleInDoubt } from './internal/in-doubt.js';
import {
  type ClusterLanes,
  createClusterLanes,
  type LaneCoordinator,
  SETTLED_TOPIC,
} from './internal/cluster-lanes.js';
import { createLanes } from './internal/lanes.js';
import {
  type ChannelsDatabase,
  DELIVERY_STAGES,
  type DeliveryEntry,
  type DeliveryStage,
  deliveryIdAt,
  sql,
  storableText,
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
  /**
   * Ceiling of the first retry's delay; it doubles per attempt. The delay is half the ceiling
   * plus a random part of the other half (`backoffDelay` of `@agentd/async-control`). @default 1000
   */
  baseDelayMs?: number;
  /** Largest retry delay ceiling (a platform's `retry_after` may ask for more). @default 300000 */
  maxDelayMs?: number;
  /** Pause before an entry is tried again after the database refused its claim. @default 1000 */
  pollMs?: number;
  /** Entries attempted at once. @default 8 */
  concurrency?: number;
  /** Called after every attempt. */
  onAttempt?(outcome: AttemptOutcome): void;
  /**
   * Cluster mode (a coordinator on PostgreSQL): each chat's lane is worked by the instance
   * holding its lease, entries are written `queued` by any instance and named on the bus, and
   * the holder's writes are fenced (see `cluster-lanes.ts`). Without it the lanes are this
   * process's own, in memory.
   */
  cluster?: {
    coordinator: LaneCoordinator;
    /** How often a held lane lease is renewed; under a third of the coordinator's lease. @default 3000 */
    renewMs?: number;
    /** How often every instance looks for lanes with due entries nobody works on. @default 2000 */
    scanMs?: number;
  };
  now?: () => number;
  /** Jitter source of the retry delays, answering in [0, 1). @default Math.random */
  random?: () => number;
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
  /**
   * Recovers entries a crash left in `sending`, then takes the waiting ones into its lanes and
   * delivers continuously. Before it, `enqueue` only writes (`queued`).
   */
  start(): Promise<void>;
  /**
   * Writes the entry (committed before any attempt; already claimed when its chat is idle) and
   * hands it to its chat's lane; `existing` when the key was known.
   */
  enqueue(request: EnqueueRequest): Promise<{ entry: DeliveryEntry; existing: boolean }>;
  /**
   * Enqueues the parts of one message, in order, all in the same commit: each part is attempted
   * only after the one before it has left the queue (sent or dead-lettered), retries included.
   */
  enqueueAll(
    requests: readonly EnqueueRequest[],
  ): Promise<Array<{ entry: DeliveryEntry; existing: boolean }>>;
  /** Resolves when the entry is `sent` or `deadLetter`, or after `timeoutMs` with its stage then. */
  settled(deliveryId: string, timeoutMs: number): Promise<DeliveryEntry>;
  get(deliveryId: string): Promise<DeliveryEntry | undefined>;
  counts(channelType?: string): Promise<StageCounts>;
  /** Changes the retry policy; entries already waiting keep their next attempt time. */
  configure(policy: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number }): void;
  /** Stops the lanes; attempts in flight finish (5 s at most) and their records commit. Idempotent. */
  close(): Promise<void>;
}

/**
 * Creates the delivery queue: every outbound operation is a row written before it is
 * attempted, claimed (`sending`, committed) before the platform is called, and recorded
 * (`sent`) after. Retryable failures wait with exponential backoff with jitter (at least
 * the platform's `retry_after`) in `failed`; a permanent failure or the last attempt moves to `deadLetter`.
 *
 * Pending entries are held in memory in per-chat lanes, so an attempt needs no read; writes
 * are group-committed, and an entry whose chat is idle is written already claimed.
 */
export function createDeliveryQueue(options: DeliveryQueueOptions): DeliveryQueue {
  const settings = parseWith(optionsSchema, options, 'delivery queue options');
  const { db } = options;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? noopLogger;
  // Several instances write one queue: each chat's stored order must be its commit order.
  const commits = createGroupCommit(db, { chatOrdered: options.cluster !== undefined });
  const get = async (deliveryId: string): Promise<DeliveryEntry | undefined> => {
    const [row] = (await db.execute(sql.byId, [deliveryId])).rows;
    return row ? toEntry(row) : undefined;
  };
  const held = createHeld({ get, logger });
  const lanes = createLanes<HeldEntry>({
    concurrency: settings.concurrency,
    now,
    run: createAttemptStep({
      policy: settings,
      commits,
      held,
      deliver: options.deliver,
      onAttempt: options.onAttempt,
      now,
      random: options.random ?? Math.random,
      logger,
    }),
    onError: (err, item) => {
      held.drop(item.entry.deliveryId);
      logger.error(
        { err, errorKind: 'internal', hint: 'the entry is attempted again at the next start' },
        'delivery lane failed',
      );
    },
  });
  const cluster: ClusterLanes | undefined = options.cluster
    ? createClusterLanes({
        db,
        coordinator: options.cluster.coordinator,
        commits,
        policy: settings,
        deliver: options.deliver,
        reconcile: options.reconcile,
        renewMs: options.cluster.renewMs ?? 3000,
        scanMs: options.cluster.scanMs ?? 2000,
        onAttempt: options.onAttempt,
        now,
        random: options.random ?? Math.random,
        logger,
      })
    : undefined;
  let unsubscribeSettled: (() => void) | undefined;
  let starting: Promise<void> | undefined;
  let started = false;
  let closed = false;
  const hold = (
    entry: DeliveryEntry,
    written: Promise<boolean>,
    claimed: boolean,
    after?: HeldEntry,
  ): HeldEntry => {
    const item: HeldEntry = { entry, written, claimed, dueAt: () => item.entry.nextAttemptAt, after };
    held.add(item);
    lanes.add(chatOf(entry), item);
    return item;
  };

  /**
   * Builds the entry, hands it to the group commit and, once the queue runs, to its chat's lane
   * (after `after`, the previous part of the same message); answers without waiting for the commit.
   */
  const write = (request: EnqueueRequest, after?: HeldEntry) => {
    const at = now();
    const deliveryId = deliveryIdAt(at);
    // In a cluster the lane's holder (perhaps another instance) claims it; nothing is held here.
    const live = started && !closed && cluster === undefined;
    // A chat with nothing ahead and a free lane is attempted at once, so its row is written
    // already claimed: one commit before the platform call instead of two.
    const claimed = live && lanes.startsAt(chatOf(request));
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
    const item = live
      ? hold(
          entry,
          written.catch(() => false),
          claimed,
          after,
        )
      : undefined;
    return { entry, written, item };
  };
  /** The caller's answer once the write committed: the new entry, or the one holding its key. */
  const answerWrite = async (write: { entry: DeliveryEntry; written: Promise<boolean> }, announce = true) => {
    const { entry } = write;
    if (await write.written) {
      if (cluster && announce) await announceLane(entry);
      return { entry, existing: false };
    }
    const [row] = (await db.execute(sql.byKey, [entry.idempotencyKey])).rows;
    if (!row) throw new ChannelsError('NOT_FOUND', `delivery not found: ${entry.idempotencyKey}`);
    return { entry: toEntry(row), existing: true };
  };
  /** Names the entry's lane on the bus; a lost notice only waits for the next scan. */
  const announceLane = (entry: DeliveryEntry): Promise<void> =>
    (cluster as ClusterLanes)
      .announce({ channelType: entry.channelType, channelId: storableText(entry.operation.channelId) })
      .catch((err: unknown) =>
        logger.warn(
          {
            err,
            deliveryId: entry.deliveryId,
            errorKind: 'dependency',
            hint: 'the lane scan finds the entry',
          },
          'lane notice not published',
        ),
      );
  return {
    async start() {
      if (started) return;
      starting ??= (async () => {
        // Writes handed over before the start are committed before the stored entries are read.
        await commits.idle();
        if (cluster && options.cluster) {
          // In-doubt rows are settled by each lane's next holder, not by whoever starts.
          unsubscribeSettled = options.cluster.coordinator.bus.subscribe(SETTLED_TOPIC, (message) => {
            const id = (message.payload as { deliveryId?: unknown } | null)?.deliveryId;
            if (typeof id === 'string') held.recheck(id);
          });
          started = true;
          cluster.start();
          return;
        }
        await recoverInDoubt({ db, options, now, logger });
        const rows = (await db.execute(sql.pending)).rows;
        started = true;
        // The parts of a split message (keys `<base>#<index>`) keep their order across a restart.
        const parts = new Map<string, HeldEntry>();
        for (const row of rows) {
          const entry = toEntry(row);
          const part = PART_KEY.exec(entry.idempotencyKey);
          const after = part && part[2] !== '0' ? parts.get(`${part[1]}#${Number(part[2]) - 1}`) : undefined;
          const item = hold(entry, Promise.resolve(true), false, after);
          if (part) parts.set(entry.idempotencyKey, item);
        }
      })().finally(() => {
        starting = undefined;
      });
      await starting;
    },
    async enqueue(request) {
      if (closed) throw new ChannelsError('CLOSED', 'the delivery queue is closed');
      // An entry written while the start reads the stored ones would be held twice.
      if (starting) await starting;
      return answerWrite(write(request));
    },
    async enqueueAll(requests) {
      if (closed) throw new ChannelsError('CLOSED', 'the delivery queue is closed');
      if (starting) await starting;
      let previous: HeldEntry | undefined;
      const writes = requests.map((request) => {
        const written = write(request, previous);
        previous = written.item;
        return written;
      });
      const answers = await Promise.all(writes.map((written) => answerWrite(written, false)));
      // The parts share a chat: one notice names its lane once every part is stored.
      const first = answers.find((answer) => !answer.existing);
      if (cluster && first) await announceLane(first.entry);
      return answers;
    },
    settled: (deliveryId, timeoutMs) => held.settled(deliveryId, timeoutMs),
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
      unsubscribeSettled?.();
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([
        cluster ? cluster.close(5000) : lanes.close(),
        new Promise((resolve) => (wait = setTimeout(resolve, 5000))),
      ]);
      clearTimeout(wait);
      await held.idle();
      await commits.idle();
    },
  };
}

/** The idempotency key of one part of a split message: `<base>#<index>`. */
const PART_KEY = /^(.*)#(\d{1,6})$/s;

/** The lane of an entry: its chat (`<type>\0<id>`; a channel type never holds a NUL). */
function chatOf(entry: { channelType: string; operation: OutboundOperation }): string {
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
    const outcome = await settleInDoubt(entry, options.reconcile);
    if (outcome.kind === 'unknown') {
      // The platform could not be asked now: a later start asks again; nothing is re-sent.
      logger.warn(
        {
          err: outcome.error,
          deliveryId: entry.deliveryId,
          errorKind: 'network',
          hint: 'reconciled at the next start',
        },
        'in-doubt delivery not reconciled',
      );
      continue;
    }
    if (outcome.kind === 'sent') await db.execute(sql.sent, [outcome.messageId, now(), entry.deliveryId]);
    else if (outcome.kind === 'requeue') await db.execute(sql.requeue, [now(), now(), entry.deliveryId]);
    else await db.execute(sql.deadLetter, [outcome.reason, now(), entry.deliveryId]);
  }
}
