import type { ClusterBus } from '@agentd/storage';

/** The bus topic a webchat notification travels on to the instances holding the client's sockets. */
const RELAY_TOPIC = 'channels:webchat';
/** The bus topic an instance answers on when the notification reached sockets of its own. */
const ACK_TOPIC = 'channels:webchat-ack';

/** Options of {@link createWebchatRelay}. */
export interface WebchatRelayOptions {
  bus: ClusterBus;
  instanceId: string;
  /** This instance's own sockets: how many sockets of `clientId` the notification reached. */
  local(clientId: string, method: string, params: unknown): number;
  /** How long a delivery waits for another instance to say it reached the client. */
  ackTimeoutMs: number;
}

/** Webchat across the instances of a cluster: see {@link createWebchatRelay}. */
export interface WebchatRelay {
  /**
   * Notifies `clientId`'s sockets on every instance; answers how many it reached: this
   * instance's count when it has any (the others are told without waiting), else the first
   * other instance's answer, or 0 when none answered within `ackTimeoutMs`.
   */
  notify(clientId: string, method: string, params: unknown): Promise<number>;
  close(): void;
}

/**
 * Carries webchat notifications to sockets on other instances through the cluster bus: a
 * client's WebSocket stays on the instance it connected to, while its chat's lane may be worked
 * anywhere. Each instance hands a relayed notification to its own sockets and, when it reached
 * any, answers the sender, which needs the answer to tell a delivery from a client connected
 * nowhere (a permanent failure, as on one instance).
 */
export function createWebchatRelay(options: WebchatRelayOptions): WebchatRelay {
  const { bus, instanceId } = options;
  const pending = new Map<string, (reached: number) => void>();
  let sequence = 0;
  const offRelay = bus.subscribe(RELAY_TOPIC, (message) => {
    if (message.from === instanceId) return;
    const payload = message.payload as {
      id?: unknown;
      clientId?: unknown;
      method?: unknown;
      params?: unknown;
    };
    if (typeof payload?.clientId !== 'string' || typeof payload.method !== 'string') return;
    const reached = options.local(payload.clientId, payload.method, payload.params);
    if (reached > 0 && typeof payload.id === 'string')
      void bus.publish(ACK_TOPIC, { id: payload.id, to: message.from, reached }).catch(() => undefined);
  });
  const offAck = bus.subscribe(ACK_TOPIC, (message) => {
    const payload = message.payload as { id?: unknown; to?: unknown; reached?: unknown };
    if (payload?.to !== instanceId || typeof payload.id !== 'string') return;
    pending.get(payload.id)?.(typeof payload.reached === 'number' ? payload.reached : 1);
  });
  return {
    async notify(clientId, method, params) {
      const here = options.local(clientId, method, params);
      sequence += 1;
      const id = `${instanceId}:${sequence}`;
      if (here > 0) {
        // Sockets of the same client on other instances get it too; nobody waits for them.
        await bus.publish(RELAY_TOPIC, { clientId, method, params }).catch(() => undefined);
        return here;
      }
      const answered = new Promise<number>((resolve) => {
        const timer = setTimeout(() => settle(0), options.ackTimeoutMs);
        const settle = (reached: number) => {
          clearTimeout(timer);
          pending.delete(id);
          resolve(reached);
        };
        pending.set(id, settle);
      });
      await bus.publish(RELAY_TOPIC, { id, clientId, method, params });
      return answered;
    },
    close() {
      offRelay();
      offAck();
      for (const settle of pending.values()) settle(0);
    },
  };
}
