import type { Singleton } from '@agentd/storage';
import type { ChannelsLogger } from '../logger.js';

/** A connector held through a cluster singleton; see {@link holdConnector}. */
export interface ConnectorGate {
  /** Settles once the first attempt to take the singleton has run (and started the connector if it won). */
  readonly ready: Promise<void>;
  /** Stops the connector if it runs here, gives the singleton up and stops trying. */
  stop(): Promise<void>;
}

/**
 * Runs a connector that only one instance per account may run (Telegram long polling, the
 * Discord gateway, Slack Socket Mode: two pollers of one bot make Telegram answer 409) on the
 * instance that holds its singleton. Every `renewMs` the singleton is taken or renewed: the
 * holder starts the connector; a holder that finds it lost (it stalled past the lease, or the
 * database could not be reached to renew it) stops its connector; a standby instance takes
 * over once the holder's lease lapses. Attempts never overlap.
 */
export function holdConnector(options: {
  name: string;
  singleton: Singleton;
  renewMs: number;
  start: () => Promise<void>;
  stop: () => Promise<void>;
  logger: ChannelsLogger;
}): ConnectorGate {
  const { name, singleton, logger } = options;
  let fence: number | undefined;
  let stopped = false;
  const attempt = async (): Promise<void> => {
    if (stopped) return;
    const now = await singleton.acquire().catch((err: unknown) => {
      logger.warn(
        {
          err,
          connector: name,
          errorKind: 'network',
          hint: 'check that the PostgreSQL of storage.url is reachable',
        },
        `${name}: could not take or renew its cluster lease`,
      );
      return undefined;
    });
    if (stopped || (now !== undefined && now === fence)) return;
    if (fence !== undefined) {
      fence = undefined;
      logger.warn(
        {
          connector: name,
          errorKind: 'resource',
          hint: 'this instance stalled past its lease or lost the database; another instance runs the connector',
        },
        `${name}: lease lost; stopped on this instance`,
      );
      await options.stop();
    }
    if (now !== undefined) {
      fence = now;
      logger.info({ connector: name, fence: now }, `${name}: runs on this instance`);
      await options.start();
    }
  };
  let chain = attempt();
  const timer = setInterval(() => {
    chain = chain.then(attempt, attempt);
  }, options.renewMs);
  timer.unref();
  return {
    ready: chain.catch(() => undefined),
    async stop() {
      stopped = true;
      clearInterval(timer);
      await chain.catch(() => undefined);
      if (fence === undefined) return;
      fence = undefined;
      await options.stop();
      await singleton.release().catch(() => undefined);
    },
  };
}
