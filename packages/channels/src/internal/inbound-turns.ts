import type { AgentTurnRunner, Logger } from '@agentd/contracts';
import type { InboundMessage } from '../adapter.js';
import type { EnqueueRequest } from '../delivery-queue.js';
import { routeInbound } from './inbound.js';
import { type InboundStore, inboundKey } from './inbound-store.js';
import { scrubbedMessage } from './redact.js';

/** How long a stop waits for cancelled turns to wind down once the grace is over. */
const CANCEL_WAIT_MS = 2000;

/** Whether `work` all settled within `ms` (`ended`) or not (`late`). */
async function settledWithin(work: Array<Promise<unknown>>, ms: number): Promise<'ended' | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  const outcome = await Promise.race([Promise.allSettled(work).then(() => 'ended' as const), late]);
  clearTimeout(timer);
  return outcome;
}

/** The agent turns of admitted inbound messages, journalled so a stop loses none. */
export interface InboundTurns {
  /**
   * Journals the message, then starts its turn without waiting for it: resolves once the
   * message is durable (the platform may be told it arrived), rejects when it could not be
   * written. A message journalled before is not run again here.
   */
  admit(message: InboundMessage, agentId: string): Promise<void>;
  /**
   * Runs again, once, the turns an earlier process left unfinished. In a cluster, only those
   * nobody holds or whose owner died, and from then on every `renewMs` this instance renews the
   * leases of its turns (a turn whose lease another instance took is cancelled here) and takes
   * over the messages of instances that died.
   */
  resume(): Promise<void>;
  /**
   * Stops taking messages and waits up to `graceMs` for the turns running to end and queue
   * their answers; those still running stay `pending` and run again at the next start (in a
   * cluster they are given back, and a live instance takes them over at once).
   */
  drain(graceMs: number): Promise<void>;
}

/** Creates the inbound turns over the journal `store`. */
export function createInboundTurns(context: {
  store: InboundStore;
  runner: () => AgentTurnRunner | undefined;
  enqueue(request: EnqueueRequest): Promise<unknown>;
  logger: Logger;
  /** Cluster mode: whether this instance may run `agentId`'s turns (false: homed elsewhere). */
  runsHere?: ((agentId: string) => Promise<boolean>) | undefined;
}): InboundTurns {
  const { store, logger } = context;
  const running = new Set<Promise<void>>();
  /** The running turns' cancel switches, by inbound key. */
  const controllers = new Map<string, AbortController>();
  /** Turns cancelled because another instance took their message over. */
  const lost = new Set<string>();
  let draining = false;
  let timer: NodeJS.Timeout | undefined;

  const run = (message: InboundMessage, agentId: string): void => {
    const runner = context.runner();
    if (!runner) return;
    const key = inboundKey(message);
    const controller = new AbortController();
    controllers.set(key, controller);
    const turn = routeInbound({
      message,
      agentId,
      runner,
      enqueue: context.enqueue,
      logger,
      signal: controller.signal,
    })
      .then(
        () => store.done(key),
        async (err: unknown) => {
          // Taken over elsewhere: the new owner runs it and records its end.
          if (lost.delete(key)) return;
          // Cut off by the stop: left pending, it runs again at the next start.
          if (draining) {
            logger.warn(
              {
                err: scrubbedMessage(err, (text) => text),
                channelType: message.channelType,
                errorKind: 'internal',
                hint: 'it runs again at the next start',
              },
              'inbound turn cut off by the stop',
            );
            return;
          }
          logger.error(
            {
              err: scrubbedMessage(err, (text) => text),
              channelType: message.channelType,
              errorKind: 'internal',
              hint: 'see the agent turn error',
            },
            'inbound message not answered',
          );
          await store.done(key);
        },
      )
      .catch((err: unknown) =>
        logger.error(
          { err, errorKind: 'resource', hint: 'the message runs again at the next start' },
          'inbound turn end not recorded',
        ),
      )
      .finally(() => {
        running.delete(turn);
        controllers.delete(key);
        lost.delete(key);
      });
    running.add(turn);
  };

  /** Claims what is left unfinished (this start's, or a dead instance's) and runs it again. */
  const takeOver = async (): Promise<void> => {
    const { resumed, abandoned } = await store.resume();
    for (const record of abandoned)
      logger.warn(
        {
          channelType: record.message.channelType,
          channelId: record.message.channelId,
          errorKind: 'internal',
          hint: 'its turn was cut off twice; ask the sender to repeat it',
        },
        'inbound message abandoned',
      );
    for (const record of resumed) {
      logger.info(
        { channelType: record.message.channelType, channelId: record.message.channelId },
        'inbound message cut off by a stop runs again',
      );
      run(record.message, record.agentId);
    }
  };

  /** Renews this instance's leases (cancelling the turns it lost), then takes over orphans. */
  const renewAndTakeOver = async (): Promise<void> => {
    for (const key of (await store.renew?.()) ?? []) {
      const controller = controllers.get(key);
      if (controller === undefined) continue;
      lost.add(key);
      controller.abort();
      logger.warn(
        {
          errorKind: 'dependency',
          hint: 'this instance missed its lease renewals; another instance runs the message',
        },
        'inbound turn lease lost',
      );
    }
    if (!draining) await takeOver();
  };

  return {
    async admit(message, agentId) {
      if (draining) throw new Error('inbound is stopping');
      const here = context.runsHere === undefined || (await context.runsHere(agentId));
      if (await store.record(message, agentId, here)) run(message, agentId);
    },
    async resume() {
      await takeOver();
      const every = store.renewMs;
      if (every === undefined || timer !== undefined) return;
      let ticking = false;
      timer = setInterval(() => {
        // Leases are renewed through a stop's grace too (`renewAndTakeOver` takes nothing over then).
        if (ticking) return;
        ticking = true;
        renewAndTakeOver()
          .catch((err: unknown) =>
            logger.warn(
              { err, errorKind: 'dependency', hint: 'check that the PostgreSQL server is reachable' },
              'inbound lease renewal or takeover failed',
            ),
          )
          .finally(() => {
            ticking = false;
          });
      }, every);
      timer.unref();
    },
    async drain(graceMs) {
      draining = true;
      try {
        await windDown(graceMs);
      } finally {
        clearInterval(timer);
        // Cluster mode: what was cut off goes back at once, for a live instance to take over.
        await store.release?.().catch((err: unknown) =>
          logger.warn(
            {
              err,
              errorKind: 'dependency',
              hint: 'their leases run out and another instance takes them over then',
            },
            'inbound messages cut off by the stop not given back',
          ),
        );
      }
    },
  };

  /** Waits up to `graceMs` for the running turns, then cancels those still running. */
  async function windDown(graceMs: number): Promise<void> {
    if (running.size === 0) return;
    if ((await settledWithin([...running], graceMs)) === 'ended') return;
    logger.warn(
      {
        turns: running.size,
        errorKind: 'timeout',
        hint: 'they run again at the next start; raise gateway.shutdownGraceMs for longer turns',
      },
      'inbound turns still running at the end of the shutdown grace',
    );
    // Cancelled, they record no answer and stay pending; their session writes may finish.
    for (const controller of controllers.values()) controller.abort();
    await settledWithin([...running], CANCEL_WAIT_MS);
  }
}
