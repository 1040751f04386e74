import { backoffDelay } from '@agentd/async-control';
import type { Logger } from '@agentd/contracts';
import type { DeliveryAttempt, OutboundOperation, OutboundResult } from '../adapter.js';
import type { AttemptOutcome } from '../delivery-queue.js';
import { isChannelsError } from '../errors.js';
import type { GroupCommit } from './group-commit.js';
import type { Held, HeldEntry } from './held.js';
import { type DeliveryEntry, sql, storableText } from './queue-store.js';

/** What one step of a lane needs. */
export interface AttemptContext {
  /** Read at each failure, so a changed policy applies to the next one. */
  policy: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number; pollMs: number };
  commits: GroupCommit;
  held: Held;
  deliver(
    channelType: string,
    operation: OutboundOperation,
    attempt: DeliveryAttempt,
  ): Promise<OutboundResult>;
  onAttempt?: ((outcome: AttemptOutcome) => void) | undefined;
  now(): number;
  /** Jitter source of the retry delay, answering in [0, 1). */
  random: () => number;
  logger: Logger;
}

/**
 * One step of a lane for its first due entry: claim it (unless it was written claimed), call
 * the platform, and hand the outcome to the group commit. Answers whether the entry stays in
 * its lane (a retry waiting for its backoff).
 */
export function createAttemptStep(context: AttemptContext): (item: HeldEntry) => Promise<boolean> {
  const { policy, commits, held, now } = context;

  const report = (entry: DeliveryEntry, began: number, errorKind?: string) =>
    reportAttempt(context, entry, began, errorKind);

  /** The claim: the commit point before the attempt. `undefined` when the database refused it. */
  const claim = async (item: HeldEntry): Promise<boolean | undefined> => {
    const at = now();
    try {
      if (!(await commits.run(sql.claim, [at, item.entry.deliveryId]))) return false;
    } catch (err) {
      context.logger.error(
        { err, deliveryId: item.entry.deliveryId, errorKind: 'resource', hint: 'tried again shortly' },
        'delivery claim not recorded',
      );
      return undefined;
    }
    item.entry = { ...item.entry, stage: 'sending', attempts: item.entry.attempts + 1, updatedAt: at };
    return true;
  };

  const failed = (item: HeldEntry, error: unknown, began: number): boolean => {
    const { entry } = item;
    const at = now();
    const plan = planFailure(entry, error, policy, at, context.random);
    if (plan.deadLetter !== undefined) {
      const why = plan.deadLetter;
      const dead: DeliveryEntry = { ...entry, stage: 'deadLetter', lastError: why, updatedAt: at };
      held.finish(item, dead, commits.run(sql.deadLetter, [why, at, entry.deliveryId]));
      logDeadLetter(context.logger, entry);
      report(dead, began, plan.kind);
      return false;
    }
    const { message, nextAttemptAt } = plan;
    item.entry = { ...entry, stage: 'failed', lastError: message, nextAttemptAt, updatedAt: at };
    // The retry's claim is committed after this record: the commits keep their order.
    held.track(
      commits.run(sql.failed, [message, nextAttemptAt, at, entry.deliveryId]),
      'failure',
      entry.deliveryId,
    );
    report(item.entry, began, plan.kind);
    return true;
  };

  return async (item) => {
    const { deliveryId } = item.entry;
    const claimed = !(await item.written) ? false : item.claimed || (await claim(item));
    if (claimed === undefined) {
      // Nothing was attempted; the lane tries the claim again after a pause.
      item.entry = { ...item.entry, nextAttemptAt: now() + policy.pollMs };
      return true;
    }
    if (!claimed) {
      held.drop(deliveryId);
      return false;
    }
    item.claimed = false;
    const entry = item.entry;
    const began = now();
    let result: OutboundResult;
    try {
      result = await context.deliver(entry.channelType, entry.operation, {
        deliveryId,
        attempt: entry.attempts,
      });
    } catch (error) {
      return failed(item, error, began);
    }
    const sent: DeliveryEntry = {
      ...entry,
      stage: 'sent',
      messageId: result.messageId,
      lastError: undefined,
      updatedAt: now(),
    };
    held.finish(item, sent, commits.sent(deliveryId, result.messageId, sent.updatedAt));
    report(sent, began);
    return false;
  };
}

/** Tells `onAttempt` how an attempt ended; an observer that throws never stops a delivery. */
export function reportAttempt(
  context: Pick<AttemptContext, 'onAttempt' | 'now'>,
  entry: DeliveryEntry,
  began: number,
  errorKind?: string,
): void {
  try {
    context.onAttempt?.({
      entry,
      outcome: errorKind === undefined ? 'delivered' : 'failed',
      latencyMs: context.now() - began,
      ...(errorKind !== undefined ? { errorKind } : {}),
    });
  } catch {
    // Observability must never stop a delivery.
  }
}

/** What a failed attempt leads to: `deadLetter` (its reason) or a retry at `nextAttemptAt`. */
export interface FailurePlan {
  /** `rate_limit`, `retryable` or `permanent`, for traces. */
  kind: string;
  /** The error as stored (`lastError`). */
  message: string;
  /** Set when the entry goes to `deadLetter`: the reason stored. */
  deadLetter: string | undefined;
  nextAttemptAt: number;
}

/**
 * Decides what a failed attempt leads to. Unknown throws (network, a library bug) are treated as
 * transient; a platform's own refusal says whether it is. A permanent refusal or the last
 * attempt goes to `deadLetter`; otherwise the retry waits `backoffDelay` (at least `retry_after`).
 */
export function planFailure(
  entry: DeliveryEntry,
  error: unknown,
  policy: AttemptContext['policy'],
  at: number,
  random: () => number,
): FailurePlan {
  const message = storableText(describe(error));
  const data = isChannelsError(error) ? error.data : undefined;
  const retryable =
    !isChannelsError(error) ||
    (error.code === 'PLATFORM_ERROR' && data?.retryable === true) ||
    error.code === 'UNCONFIGURED';
  const kind = data?.retryAfterMs !== undefined ? 'rate_limit' : retryable ? 'retryable' : 'permanent';
  if (!retryable || entry.attempts >= policy.maxAttempts) {
    const why = retryable ? `gave up after ${entry.attempts} attempts: ${message}` : message;
    return { kind, message, deadLetter: why, nextAttemptAt: entry.nextAttemptAt };
  }
  const nextAttemptAt =
    at +
    backoffDelay(entry.attempts, {
      initialMs: policy.baseDelayMs,
      maxMs: policy.maxDelayMs,
      retryAfterMs: data?.retryAfterMs,
      random,
    });
  return { kind, message, deadLetter: undefined, nextAttemptAt };
}

/** The warning of an entry given up. */
export function logDeadLetter(logger: Logger, entry: DeliveryEntry): void {
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
}

/** An error's message, kept short; adapters already keep tokens out of their messages. */
function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}
