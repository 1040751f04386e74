import type { Logger } from '@agentd/contracts';
import type { Coordinator } from '@agentd/storage';
import type { DeliveryAttempt, OutboundOperation, OutboundResult } from '../adapter.js';
import type { AttemptOutcome } from '../delivery-queue.js';
import { type AttemptContext, logDeadLetter, planFailure, reportAttempt } from './attempt.js';
import type { GroupCommit } from './group-commit.js';
import { settleInDoubt } from './in-doubt.js';
import { type ChannelsDatabase, type DeliveryEntry, QUEUE_TABLE, sql, toEntry } from './queue-store.js';

/**
 * What a cluster coordinator gives the channels: singletons (the lane leases and connectors),
 * the bus, and owned rows (the inbound journal's).
 */
export type LaneCoordinator = Pick<
  Coordinator,
  'singleton' | 'bus' | 'instanceId' | 'mode' | 'ownedRows' | 'instances'
>;

/** The bus topic an enqueue names its lane on. */
export const LANE_TOPIC = 'channels:lane';
/** The bus topic a lane owner announces a settled entry on (its waiters may be on any instance). */
export const SETTLED_TOPIC = 'channels:settled';
/** A topic nobody publishes: its watch is the polling backstop and the re-check after a reconnect. */
const SCAN_TOPIC = 'channels:lane-scan';

/** One chat's lane as stored: the channel type and the `channel_id` column. */
export interface LaneKey {
  channelType: string;
  channelId: string;
}

/** Options of {@link createClusterLanes}. */
export interface ClusterLanesOptions {
  db: ChannelsDatabase;
  coordinator: LaneCoordinator;
  commits: GroupCommit;
  policy: AttemptContext['policy'] & { concurrency: number };
  deliver(
    channelType: string,
    operation: OutboundOperation,
    attempt: DeliveryAttempt,
  ): Promise<OutboundResult>;
  reconcile?:
    | ((
        channelType: string,
        operation: OutboundOperation,
        attempt: DeliveryAttempt,
      ) => Promise<OutboundResult | null | undefined>)
    | undefined;
  /** How often a held lane lease is renewed (under a third of the coordinator's lease). */
  renewMs: number;
  /** How often every instance looks for lanes with due entries that nobody works on. */
  scanMs: number;
  onAttempt?: ((outcome: AttemptOutcome) => void) | undefined;
  now(): number;
  random(): number;
  logger: Logger;
}

/** The lanes of a cluster: see {@link createClusterLanes}. */
export interface ClusterLanes {
  start(): void;
  /** Tells every instance that `lane` has a new entry (after its write committed). */
  announce(lane: LaneKey): Promise<void>;
  /** Stops taking lanes; lanes in flight finish their attempt (at most `graceMs`) and are released. */
  close(graceMs: number): Promise<void>;
}

const PENDING = `SELECT * FROM ${QUEUE_TABLE} WHERE channel_type = ? AND channel_id = ?
  AND stage IN ('queued', 'failed', 'sending') ORDER BY created_at, rowid`;
const DUE_LANES = `SELECT channel_type, channel_id FROM ${QUEUE_TABLE}
  WHERE stage = 'sending' OR (stage IN ('queued', 'failed') AND next_attempt_at <= ?)
  GROUP BY channel_type, channel_id`;
const RETURNING = /\s+RETURNING delivery_id\s*$/;
/** The idempotency key of one part of a split message: `<base>#<index>`. */
const PART_KEY = /^(.*)#(\d{1,6})$/s;

/**
 * The delivery lanes of several instances on one PostgreSQL: each chat's lane is worked by the
 * instance holding the singleton `channels:lane:<type>:<chat>` (a lease renewed every `renewMs`).
 * Any instance writes `queued` rows and names the lane on the bus; the instances try to take
 * its lease, and the holder sends the lane's due entries in stored order (per-chat FIFO), reading
 * them from the table until none is due, then releases it. Every write of the holder (claim,
 * record) carries the lease's fence term, so an owner that stalled past its lease writes
 * nothing. The `sending` rows a holder finds were cut off (a dead owner, or a record that failed)
 * and are settled by the package's in-doubt rule. A scan every `scanMs` is the backstop for lost
 * notices and for retries coming due.
 */
export function createClusterLanes(options: ClusterLanesOptions): ClusterLanes {
  const { db, coordinator, commits, policy, now, logger } = options;
  const running = new Map<string, { dirty: boolean; done: Promise<void> }>();
  let stopScan: (() => void) | undefined;
  let closed = false;
  let skipped = false;

  const keyOf = (lane: LaneKey) => `${lane.channelType}\u0000${lane.channelId}`;

  const tryLane = (lane: LaneKey): void => {
    if (closed) return;
    const key = keyOf(lane);
    const current = running.get(key);
    if (current) {
      current.dirty = true;
      return;
    }
    if (running.size >= policy.concurrency) {
      skipped = true;
      return;
    }
    const state = { dirty: false, done: Promise.resolve() };
    running.set(key, state);
    state.done = work(lane, state)
      .catch((err: unknown) =>
        logger.error(
          {
            err,
            channelType: lane.channelType,
            errorKind: 'internal',
            hint: 'the lane is taken up again by the next scan',
          },
          'delivery lane failed',
        ),
      )
      .finally(() => {
        running.delete(key);
        if (closed) return;
        if (state.dirty) tryLane(lane);
        if (skipped) {
          skipped = false;
          void scan();
        }
      });
  };

  const scan = async (): Promise<void> => {
    if (closed) return;
    const { rows } = await db.execute(DUE_LANES, [now()]);
    for (const row of rows)
      tryLane({ channelType: String(row.channel_type), channelId: String(row.channel_id) });
  };

  /** Holds the lane's lease while it has due entries; answers once it released it. */
  const work = async (lane: LaneKey, state: { dirty: boolean }): Promise<void> => {
    const singleton = coordinator.singleton(`channels:lane:${lane.channelType}:${lane.channelId}`);
    const taking = Date.now();
    const fence = await singleton.acquire();
    // Captured once: a later acquire of the same handle (after a lapse) must not widen it.
    const term = singleton.heldTerm();
    if (fence === undefined || term === undefined) return;
    let renewedAt = taking;
    let lost = false;
    const renew = setInterval(() => {
      // Measured from before the renewal is asked: the lease runs from the database's answer.
      const asked = Date.now();
      singleton.acquire().then(
        (now) => {
          if (now === fence) renewedAt = asked;
          else {
            lost = true;
            clearInterval(renew);
          }
        },
        () => undefined, // retried at the next tick; the lease outlives two renewals
      );
    }, options.renewMs);
    renew.unref?.();
    // Before each platform call: the lease was renewed recently enough that no other instance can
    // hold the lane yet (a paused owner stops here instead of sending beside the new one).
    const holds = () => !closed && !lost && Date.now() - renewedAt < 2 * options.renewMs;
    const run: Run = (statement, args) =>
      commits.run(`${statement.replace(RETURNING, '')} AND ${term.sql} RETURNING delivery_id`, [
        ...args,
        ...(term.args as Array<string | number>),
      ]);
    let pass: Pass = 'progress';
    try {
      while (pass === 'progress') {
        state.dirty = false;
        pass = await drainOnce(lane, run, holds);
      }
    } finally {
      clearInterval(renew);
      await singleton.release().catch(() => undefined);
    }
    // An entry written after the last read while the lease was held: whoever tried the lane then
    // was refused, so the owner looks once more now that the lease is free. A pass that stopped
    // (lease lost, platform unreachable) leaves the lane to the next scan.
    if (pass === 'idle' && !closed && (state.dirty || (await hasDue(lane)))) state.dirty = true;
    else state.dirty = false;
  };

  const hasDue = async (lane: LaneKey): Promise<boolean> => {
    const { rows } = await db.execute(PENDING, [lane.channelType, lane.channelId]);
    return rows.some((row) => String(row.stage) === 'sending' || Number(row.next_attempt_at) <= now());
  };

  /** One pass over the lane's stored entries in order. */
  const drainOnce = async (lane: LaneKey, run: Run, holds: () => boolean): Promise<Pass> => {
    const entries = (await db.execute(PENDING, [lane.channelType, lane.channelId])).rows.map(toEntry);
    const waiting = new Set(entries.map((entry) => entry.idempotencyKey));
    let pass: Pass = 'idle';
    for (const found of entries) {
      if (!holds()) return 'stopped';
      let entry = found;
      if (entry.stage === 'sending') {
        const settled = await settle(entry, run);
        if (settled === undefined) return 'stopped';
        pass = 'progress';
        if (settled !== 'queued') {
          waiting.delete(entry.idempotencyKey);
          continue;
        }
        // Queued again: attempted now, before the entries behind it (per-chat order).
        entry = { ...entry, stage: 'queued', nextAttemptAt: now() };
      }
      if (entry.nextAttemptAt > now()) continue;
      // A later part of a split message waits until the part before it has left the queue.
      const part = PART_KEY.exec(entry.idempotencyKey);
      if (part && part[2] !== '0' && waiting.has(`${part[1]}#${Number(part[2]) - 1}`)) continue;
      const outcome = await attempt(entry, run, holds);
      if (outcome === undefined) return 'stopped';
      if (outcome !== 'failed') waiting.delete(entry.idempotencyKey);
      pass = 'progress';
    }
    return pass;
  };

  /** A write of the lane's holder: applied only while it holds the lease at its fence. */
  type Run = (statement: string, args: Array<string | number | null>) => Promise<boolean>;
  /** How a pass over a lane ended: something done, nothing due, or stopped (lease or platform). */
  type Pass = 'progress' | 'idle' | 'stopped';

  /**
   * A `sending` row found by the lane's holder, settled by the package's in-doubt rule under the
   * lease: the stage it is left in, undefined when nothing could be written (lease, platform).
   */
  const settle = async (
    entry: DeliveryEntry,
    run: Run,
  ): Promise<'queued' | 'sent' | 'deadLetter' | undefined> => {
    const outcome = await settleInDoubt(entry, options.reconcile);
    const at = now();
    if (outcome.kind === 'unknown') {
      logger.warn(
        {
          err: outcome.error,
          deliveryId: entry.deliveryId,
          errorKind: 'network',
          hint: 'asked again at the next scan',
        },
        'in-doubt delivery not reconciled',
      );
      return undefined;
    }
    if (outcome.kind === 'requeue')
      return (await run(sql.requeue, [at, at, entry.deliveryId])) ? 'queued' : undefined;
    const wrote =
      outcome.kind === 'sent'
        ? await run(`${sql.sent} AND stage = 'sending'`, [outcome.messageId, at, entry.deliveryId])
        : await run(sql.deadLetter, [outcome.reason, at, entry.deliveryId]);
    if (!wrote) return undefined;
    await announceSettled(entry.deliveryId);
    return outcome.kind;
  };

  /**
   * Claims, attempts and records one due entry under the lease: the stage it left the entry in,
   * undefined when the lease is gone (nothing more may be written).
   */
  const attempt = async (
    entry: DeliveryEntry,
    run: Run,
    holds: () => boolean,
  ): Promise<'sent' | 'failed' | 'deadLetter' | undefined> => {
    const at = now();
    if (!(await run(sql.claim, [at, entry.deliveryId]))) return undefined;
    const claimed: DeliveryEntry = {
      ...entry,
      stage: 'sending',
      attempts: entry.attempts + 1,
      updatedAt: at,
    };
    // The claim committed, but the lease may have lapsed while it did.
    if (!holds()) return undefined;
    const began = now();
    let result: OutboundResult;
    try {
      result = await options.deliver(claimed.channelType, claimed.operation, {
        deliveryId: claimed.deliveryId,
        attempt: claimed.attempts,
      });
    } catch (error) {
      const failedAt = now();
      const plan = planFailure(claimed, error, policy, failedAt, options.random);
      if (plan.deadLetter !== undefined) {
        const wrote = await run(sql.deadLetter, [plan.deadLetter, failedAt, claimed.deliveryId]);
        logDeadLetter(logger, claimed);
        reportAttempt(
          options,
          { ...claimed, stage: 'deadLetter', lastError: plan.deadLetter },
          began,
          plan.kind,
        );
        if (wrote) await announceSettled(claimed.deliveryId);
        return wrote ? 'deadLetter' : undefined;
      }
      const wrote = await run(sql.failed, [plan.message, plan.nextAttemptAt, failedAt, claimed.deliveryId]);
      reportAttempt(
        options,
        { ...claimed, stage: 'failed', lastError: plan.message, nextAttemptAt: plan.nextAttemptAt },
        began,
        plan.kind,
      );
      return wrote ? 'failed' : undefined;
    }
    const sentAt = now();
    const wrote = await run(`${sql.sent} AND stage = 'sending'`, [
      result.messageId,
      sentAt,
      claimed.deliveryId,
    ]);
    reportAttempt(
      options,
      { ...claimed, stage: 'sent', messageId: result.messageId, updatedAt: sentAt },
      began,
    );
    if (wrote) await announceSettled(claimed.deliveryId);
    return wrote ? 'sent' : undefined;
  };

  const announceSettled = (deliveryId: string): Promise<void> =>
    coordinator.bus.publish(SETTLED_TOPIC, { deliveryId }).catch((err: unknown) => {
      logger.warn(
        { err, deliveryId, errorKind: 'dependency', hint: 'waiters read the entry at their time-out' },
        'settled notice not published',
      );
    });

  let unsubscribe: (() => void) | undefined;
  return {
    start() {
      unsubscribe = coordinator.bus.subscribe(LANE_TOPIC, (message) => {
        const payload = message.payload as Partial<LaneKey> | null;
        if (typeof payload?.channelType === 'string' && typeof payload.channelId === 'string')
          tryLane({ channelType: payload.channelType, channelId: payload.channelId });
      });
      stopScan = coordinator.bus.watch(SCAN_TOPIC, scan, { pollMs: options.scanMs });
      void scan().catch((err: unknown) =>
        logger.warn(
          { err, errorKind: 'dependency', hint: 'scanned again shortly' },
          'delivery lane scan failed',
        ),
      );
    },
    async announce(lane) {
      await coordinator.bus.publish(LANE_TOPIC, lane);
    },
    async close(graceMs) {
      closed = true;
      unsubscribe?.();
      stopScan?.();
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([...running.values()].map((state) => state.done)),
        new Promise((resolve) => (wait = setTimeout(resolve, graceMs))),
      ]);
      clearTimeout(wait);
    },
  };
}
