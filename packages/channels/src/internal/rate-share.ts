import type { Coordinator } from '@agentd/storage';
import type { ChannelAdapter } from '../adapter.js';
import type { ChannelsLogger } from '../logger.js';

/** A running {@link shareRateLimits}. */
export interface RateShare {
  /** Gives a new adapter the current share (it starts with a whole account's budget). */
  apply(adapter: ChannelAdapter): void;
  stop(): void;
}

/**
 * Cluster mode: a platform that limits a bot account as a whole (Discord's global 50 requests
 * a second) counts the requests of every instance together, while each instance's client counts
 * only its own. Every `everyMs` the live members are counted and each adapter that can is told
 * to keep to its share (`1/N` of the account's budget), so N instances together stay within it.
 * A member that died keeps its share until the cluster's sweeper removes it (a lease): the
 * others are too careful for that long, never too bold.
 */
export function shareRateLimits(options: {
  coordinator: Pick<Coordinator, 'instances'>;
  everyMs: number;
  adapters: () => Iterable<ChannelAdapter>;
  logger: ChannelsLogger;
}): RateShare {
  let members = 1;
  let stopped = false;
  const count = async (): Promise<void> => {
    const live = await options.coordinator.instances().catch(() => undefined);
    if (stopped || live === undefined || live.length === 0 || live.length === members) return;
    members = live.length;
    options.logger.info(
      { instances: members },
      `channels: platform rate limits shared by ${members} instances`,
    );
    for (const adapter of options.adapters()) adapter.shareRateLimit?.(members);
  };
  let running = count();
  const timer = setInterval(() => {
    running = running.then(count);
  }, options.everyMs);
  timer.unref();
  return {
    apply(adapter) {
      if (members > 1) adapter.shareRateLimit?.(members);
    },
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
