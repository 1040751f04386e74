import { backoffDelay } from '@agentd/async-control';
import type { AgentTurnRunner, EventSink, Injected, SpanSink } from '@agentd/contracts';
import { z } from 'zod';
import { WebhookError } from './errors.js';
import { parseWith } from './internal/validate.js';
import { noopLogger, type WebhookLogger } from './logger.js';
import type { AgentJob, WebhookStore } from './store.js';
import { isCluster, QUEUE_TOPIC, type WebhookCoordinator } from './cluster.js';

export type { AgentTurnRunner } from '@agentd/contracts';

/**
 * Sends an agent's answer to a channel, for mappings with `deliver: true`. A job re-run after a
 * crash calls it again with the same `idempotencyKey` (`webhook-queue:<jobId>`): a deliverer
 * that records the key before it sends (a channel delivery queue) sends the answer once.
 */
export type HookResponseDeliverer = (delivery: {
  idempotencyKey: string;
  channel: string | undefined;
  to: string | undefined;
  text: string;
  sessionKey: string;
  agentId: string | undefined;
  mappingId: string;
}) => Promise<void>;

/**
 * Options of {@link createQueueDrainer}.
 * From {@link Injected}: `logger` and `now`.
 */
export interface QueueDrainerOptions extends Pick<Injected<WebhookLogger>, 'logger' | 'now'> {
  store: WebhookStore;
  runner: AgentTurnRunner;
  /** Channel delivery for `deliver: true`; without it the answer is kept in the job row (`no_target`). */
  deliver?: HookResponseDeliverer;
  /** Turns run at once. @default 1 */
  concurrency?: number;
  /** Attempts before a job is marked failed. @default 3 */
  maxAttempts?: number;
  /**
   * Ceiling of the delay before a failed attempt is retried, doubled each further attempt up to
   * `maxRetryDelayMs`; the delay is jittered between half and all of the ceiling.
   * @default 5000
   */
  retryDelayMs?: number;
  /** Largest retry delay, however many attempts failed. @default 300000 (5 minutes) */
  maxRetryDelayMs?: number;
  /** Jitter source, answering in [0, 1). @default Math.random */
  random?: () => number;
  /** Told `webhook:job_finished {outcome: completed|retry|failed, mapping}` after each attempt. */
  events?: EventSink;
  /** Receives each attempt as a `webhook.job` span (trace id: the turn's, else `webhook-job-<id>`). */
  spans?: SpanSink;
  /**
   * The cluster coordinator, the store's own. In `postgres` mode `kick()` is also published on
   * the bus, and the drainer looks at the queue on every peer's notice and on the bus's polling
   * backstop (which also finds jobs whose owner stopped renewing their lease).
   */
  coordinator?: WebhookCoordinator | undefined;
}

/** How long the drainer waits to read the queue again after a read failed. */
const REREAD_AFTER_FAILURE_MS = 1000;
/** The longest delay setTimeout honours. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const drainerOptionsSchema = z.object({
  concurrency: z.number().int().min(1).max(64).default(1),
  maxAttempts: z.number().int().min(1).max(100).default(3),
  retryDelayMs: z.number().int().min(0).default(5000),
  maxRetryDelayMs: z.number().int().min(0).max(MAX_TIMER_MS).default(300_000),
  random: z.custom<() => number>((value) => typeof value === 'function').default(() => Math.random),
});

/** Runs queued webhook agent turns through an {@link AgentTurnRunner}. */
export interface QueueDrainer {
  /** Puts jobs left running by a previous process back in the queue, then runs what is due. */
  start(): Promise<void>;
  /** Looks at the queue now (call after enqueueing); in cluster mode every instance's drainer does. */
  kick(): void;
  /** Resolves once no due job is queued and none is running (tests, shutdown checks). */
  idle(): Promise<void>;
  /** Stops, aborts running turns and puts them back in the queue. Idempotent. */
  stop(): Promise<void>;
  /** Turns running now. */
  readonly active: number;
}

/**
 * Creates the drainer. A job is marked running before its turn starts and done after it
 * ends, so a crash in between takes it up again on the next start; each turn carries the
 * job's `turnKey`, so a runner that honours it (agentd's runtime commits the key with the
 * turn) answers a turn that had already committed instead of running it twice: exactly
 * once. A turn interrupted by `stop()` is put back without counting the attempt.
 * @throws {WebhookError} `INVALID_OPTIONS` naming the offending option.
 */
export function createQueueDrainer(options: QueueDrainerOptions): QueueDrainer {
  const {
    store,
    runner,
    deliver,
    events,
    spans,
    coordinator,
    logger = noopLogger,
    now = Date.now,
    ...rest
  } = options;
  const settings = parseWith(drainerOptionsSchema, rest, 'queue drainer options');
  const jobSpan = (job: AgentJob, began: number, outcome: string, traceId: string | undefined) => {
    try {
      spans?.({
        name: 'webhook.job',
        traceId: traceId ?? `webhook-job-${job.id}`,
        startedAt: began,
        durationMs: now() - began,
        ok: outcome === 'completed',
        attributes: {
          'agentd.mapping': job.mappingId,
          'agentd.outcome': outcome,
          'agentd.attempt': job.attempts,
        },
      });
    } catch {
      // Tracing never fails a job.
    }
  };
  if (!runner || typeof runner.runTurn !== 'function') {
    throw new WebhookError(
      'INVALID_OPTIONS',
      'Invalid queue drainer options: runner: expected an AgentTurnRunner',
    );
  }
  const controllers = new Map<number, AbortController>();
  const running = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let started = false;
  let stopped = false;
  let pumping: Promise<void> | undefined;
  let again = false;
  let unwatch: (() => void) | undefined;
  const idleWaiters: Array<() => void> = [];

  // No polling: an idle daemon does no work. The queue is looked at when a job is enqueued
  // (`kick()`), when a turn ends, and at the earliest retry time of a queued job.
  const wakeAt = (delayMs: number) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      kick();
    }, delayMs);
    timer.unref();
  };

  const schedule = async () => {
    if (stopped || !started) return;
    let next: number | undefined;
    try {
      next = await store.nextAttemptAt();
    } catch {
      // The read failed (logged by the pump's own read); look again shortly.
      if (!stopped) wakeAt(REREAD_AFTER_FAILURE_MS);
      return;
    }
    if (stopped) return;
    const wait = next === undefined ? undefined : next - now();
    if (wait === undefined || (wait <= 0 && running.size >= settings.concurrency)) {
      // Nothing queued, or a due job waits for a slot: the end of a running turn kicks.
      if (timer) clearTimeout(timer);
      timer = undefined;
      return;
    }
    // A due job with a free slot was not claimed (the claim failed, or the job fell due just
    // after it): look again shortly rather than at once, which would spin on a failing claim.
    // A far retry sleeps in steps, since setTimeout fires at once past 2^31 - 1 ms.
    wakeAt(wait <= 0 ? REREAD_AFTER_FAILURE_MS : Math.min(wait + 1, MAX_TIMER_MS));
  };

  const notifyIdle = async () => {
    if (running.size > 0 || pumping || idleWaiters.length === 0) return;
    // Only due jobs keep the drainer busy; a job waiting for its retry time does not.
    const due = await store.dueJobCount().catch(() => 1);
    if (due === 0 && running.size === 0 && !pumping) {
      for (const resolve of idleWaiters.splice(0)) resolve();
    }
  };

  // Aborted because the lease was lost: another instance owns the job now, so this one writes nothing.
  const lostClaims = new WeakSet<AbortController>();
  const staleClaim = (job: AgentJob) =>
    logger.warn(
      {
        jobId: job.id,
        mapping: job.mappingId,
        hint: 'the lease of this job expired (the instance was paused or cut off) and another instance took it over; its write was rejected',
        errorKind: 'dependency',
      },
      'webhook job claim lost',
    );
  /** In cluster mode, renews the claim's lease every third of it; a lost lease aborts the turn. */
  const renewWhileRunning = (job: AgentJob, controller: AbortController) => {
    const leaseMs = store.jobLeaseMs;
    if (leaseMs === undefined) return undefined;
    const timer = setInterval(
      () => {
        store.renewJob(job.id, job.fence).then(
          (held) => {
            if (held || controller.signal.aborted) return;
            lostClaims.add(controller);
            controller.abort(new Error('the webhook job was taken over by another instance'));
          },
          // A failed renewal is retried at the next tick; the lease covers two more.
          () => undefined,
        );
      },
      Math.max(50, Math.floor(leaseMs / 3)),
    );
    timer.unref();
    return timer;
  };

  const runJob = async (job: AgentJob): Promise<void> => {
    const controller = new AbortController();
    controllers.set(job.id, controller);
    const began = now();
    const renewal = renewWhileRunning(job, controller);
    try {
      const result = await runner.runTurn({
        message: job.message,
        sessionKey: job.sessionKey,
        signal: controller.signal,
        origin: 'hook',
        // The runtime commits the turn under this key with its messages, so a job re-run after
        // a crash (marked running, turn committed, process gone before 'done') answers the
        // recorded turn instead of running it twice.
        turnKey: `webhook-queue:${job.id}`,
        ...(job.agentId !== undefined ? { agentId: job.agentId } : {}),
        ...(job.model !== undefined ? { model: job.model } : {}),
        ...(job.timeoutMs !== undefined ? { timeoutMs: job.timeoutMs } : {}),
      });
      let deliveryStatus: 'not_requested' | 'delivered' | 'no_target' | 'failed' = 'not_requested';
      if (job.deliver) {
        if (!deliver) {
          deliveryStatus = 'no_target';
          logger.warn(
            {
              jobId: job.id,
              mapping: job.mappingId,
              hint: 'no channel delivery is configured; the answer is kept in webhook_agent_queue',
              errorKind: 'config',
            },
            'webhook answer not delivered',
          );
        } else {
          try {
            await deliver({
              idempotencyKey: `webhook-queue:${job.id}`,
              channel: job.channel,
              to: job.to,
              text: result.response,
              sessionKey: result.sessionKey,
              agentId: job.agentId,
              mappingId: job.mappingId,
            });
            deliveryStatus = 'delivered';
          } catch (error) {
            deliveryStatus = 'failed';
            logger.warn(
              {
                err: error,
                jobId: job.id,
                mapping: job.mappingId,
                hint: 'check the channel named by the mapping; the answer is kept in webhook_agent_queue',
                errorKind: 'dependency',
              },
              'webhook answer delivery failed',
            );
          }
        }
      }
      events?.emit('webhook:job_finished', { outcome: 'completed', mapping: job.mappingId });
      jobSpan(job, began, 'completed', result.traceId);
      const recorded = await store.completeJob(
        job.id,
        {
          finishReason: result.finishReason,
          responseChars: result.response.length,
          deliveryStatus,
          ...(deliveryStatus === 'no_target' || deliveryStatus === 'failed'
            ? { undeliveredResponse: result.response }
            : {}),
        },
        job.fence,
      );
      if (!recorded) staleClaim(job);
      logger.info(
        {
          jobId: job.id,
          mapping: job.mappingId,
          sessionKey: result.sessionKey,
          stopReason: result.finishReason,
          tokensTotal: result.tokensUsed.total,
          responseLen: result.response.length,
          durationMs: now() - began,
        },
        'webhook agent turn finished',
      );
    } catch (error) {
      if (stopped) {
        await store.releaseJob(job.id, job.fence).catch(() => undefined);
        return;
      }
      if (lostClaims.has(controller)) {
        staleClaim(job);
        return;
      }
      const finalAttempt = job.attempts >= settings.maxAttempts;
      const retryAt = finalAttempt
        ? undefined
        : now() +
          backoffDelay(job.attempts, {
            initialMs: settings.retryDelayMs,
            maxMs: settings.maxRetryDelayMs,
            random: settings.random,
          });
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : 'non-error thrown';
      await store.failJob(job.id, reason, retryAt, job.fence).catch(() => undefined);
      events?.emit('webhook:job_finished', {
        outcome: finalAttempt ? 'failed' : 'retry',
        mapping: job.mappingId,
      });
      jobSpan(job, began, finalAttempt ? 'failed' : 'retry', undefined);
      logger.warn(
        {
          err: error,
          jobId: job.id,
          mapping: job.mappingId,
          attempt: job.attempts,
          willRetry: !finalAttempt,
          hint: finalAttempt
            ? 'the job is marked failed in webhook_agent_queue; check the agent runtime'
            : 'the job is retried with backoff',
          errorKind: 'dependency',
        },
        'webhook agent turn failed',
      );
    } finally {
      if (renewal !== undefined) clearInterval(renewal);
      controllers.delete(job.id);
    }
  };

  const pump = async (): Promise<void> => {
    do {
      again = false;
      while (!stopped && running.size < settings.concurrency) {
        let job: AgentJob | undefined;
        try {
          job = await store.claimNextJob();
        } catch (error) {
          if (!stopped) {
            logger.warn(
              { err: error, hint: 'the queue is read again in a second', errorKind: 'resource' },
              'reading the webhook queue failed',
            );
          }
          break;
        }
        if (!job) break;
        if (stopped) {
          await store.releaseJob(job.id, job.fence).catch(() => undefined);
          break;
        }
        const task = runJob(job).finally(() => {
          running.delete(task);
          kick();
        });
        running.add(task);
      }
    } while (again && !stopped);
  };

  /** Tells every instance's drainer (this one too) that a job was queued. */
  function announce(): void {
    if (stopped || !started) return;
    if (isCluster(coordinator)) {
      coordinator.bus.publish(QUEUE_TOPIC, null).catch((error: unknown) =>
        logger.warn(
          {
            err: error,
            hint: 'peers find the job at their next poll of the queue',
            errorKind: 'dependency',
          },
          'publishing a webhook queue notice failed',
        ),
      );
    }
    kick();
  }

  function kick(): void {
    if (stopped || !started) return;
    if (pumping) {
      again = true;
      return;
    }
    pumping = pump().finally(() => {
      pumping = undefined;
      void schedule();
      void notifyIdle();
    });
  }

  return {
    get active() {
      return running.size;
    },
    async start() {
      if (started || stopped) return;
      const recovered = await store.recoverRunningJobs();
      if (recovered > 0) {
        logger.info({ itemCount: recovered }, 'webhook agent turns interrupted by a restart queued again');
      }
      started = true;
      // Peers' notices and the bus's polling backstop wake this drainer too.
      if (isCluster(coordinator)) unwatch = coordinator.bus.watch(QUEUE_TOPIC, kick);
      kick();
    },
    kick: announce,
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        void notifyIdle();
      });
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      unwatch?.();
      if (timer) clearTimeout(timer);
      for (const controller of controllers.values()) controller.abort(new Error('agentd is shutting down'));
      await pumping;
      await Promise.all([...running]);
      for (const resolve of idleWaiters.splice(0)) resolve();
    },
  };
}
