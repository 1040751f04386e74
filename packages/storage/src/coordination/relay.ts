import type { StorageLogger } from '../logger.js';
import type { Coordinator } from './types.js';

/** What {@link relayOverBus} answers. */
export interface BusRelay<T> {
  /**
   * Delivers `message` here at once and, in a cluster, publishes it for every other instance to
   * deliver to its own listeners. Delivery elsewhere is best effort (a notice lost while an
   * instance's listener reconnects is not repeated): for ephemeral pushes such as WebSocket
   * notifications, never for state, which lives in rows.
   */
  send(message: T): Promise<void>;
  /** Stops delivering messages from other instances. */
  close(): void;
}

/**
 * Fans `message`s out to `deliver` on every instance through the coordinator's bus (one topic,
 * JSON payloads; a large one travels as a `cluster_events` row). On libsql the bus is in
 * process and `deliver` simply runs here.
 */
export function relayOverBus<T>(
  coordinator: Coordinator,
  topic: string,
  deliver: (message: T) => void,
  logger?: StorageLogger,
): BusRelay<T> {
  const me = coordinator.instanceId;
  const clustered = coordinator.mode === 'postgres';
  const unsubscribe = clustered
    ? coordinator.bus.subscribe(topic, (notice) => {
        if (notice.from !== me) deliver(notice.payload as T);
      })
    : () => undefined;
  return {
    async send(message) {
      deliver(message);
      if (!clustered) return;
      try {
        await coordinator.bus.publish(topic, message);
      } catch (error) {
        logger?.warn(
          {
            err: error,
            topic,
            errorKind: 'dependency',
            hint: 'clients on other instances miss this notice; check that PostgreSQL is reachable',
          },
          'publishing a notice to other instances failed',
        );
      }
    },
    close: unsubscribe,
  };
}
