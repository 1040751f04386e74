import { z } from 'zod';
import type { ChannelAdapter, ChannelHealth, FetchedMessage, OutboundResult } from '../adapter.js';
import { ChannelsError, platformError } from '../errors.js';

/** The JSON-RPC notification a webchat client receives for every delivery to it. */
export const WEBCHAT_NOTIFICATION = 'webchat.message';

/** Options of {@link createWebchatAdapter}. */
export interface WebchatAdapterOptions {
  /**
   * Sends a notification to every socket of `clientId`; answers how many sockets it reached
   * (the daemon's WebSocket transport). Unset until the gateway exists: sends wait in the queue.
   */
  notify?: ((clientId: string, method: string, params: unknown) => number) | undefined;
  /**
   * Cluster mode: carries each notification to the client's sockets on every instance and
   * answers how many it reached (used instead of `notify`, which it calls for this instance).
   */
  relay?: ((clientId: string, method: string, params: unknown) => Promise<number>) | undefined;
  /** Messages already delivered to a client, newest first (the queue's own record). */
  history?: ((clientId: string, limit: number) => Promise<FetchedMessage[]>) | undefined;
}

/** `webchat.action` does not exist; the schema refuses everything. */
const noActions = z.object({ action: z.never() });

/**
 * The built-in `webchat` channel: the daemon's WebSocket clients, addressed by clientId.
 * Every operation is one `webchat.message` notification carrying the delivery id, so a client
 * that sees a repeat (at-least-once after a crash) can drop it. A client with no open socket
 * is a permanent failure (`deadLetter` at once): a notification is for the sockets open now. In
 * a cluster a `relay` reaches the client's sockets on every instance.
 */
export function createWebchatAdapter(options: WebchatAdapterOptions = {}): ChannelAdapter & {
  /** Late binding: the gateway is built after the services. */
  attach(notify: NonNullable<WebchatAdapterOptions['notify']>): void;
} {
  let notify = options.notify;
  const health: ChannelHealth = { state: notify ? 'connected' : 'configured' };
  return {
    type: 'webchat',
    actionSchema: noActions as unknown as z.ZodType<{ action: string }>,
    attach(next) {
      notify = next;
      health.state = 'connected';
    },
    async start() {},
    async stop() {
      health.state = 'stopped';
    },
    async deliver(operation, attempt): Promise<OutboundResult> {
      const messageId =
        operation.op === 'send' || operation.op === 'attach' ? attempt.deliveryId : operation.messageId;
      const params = { ...operation, event: operation.op, deliveryId: attempt.deliveryId, messageId };
      const reached = options.relay
        ? await options.relay(operation.channelId, WEBCHAT_NOTIFICATION, params)
        : notify?.(operation.channelId, WEBCHAT_NOTIFICATION, params);
      if (!reached)
        throw platformError('webchat', `client ${operation.channelId} is not connected`, {
          retryable: false,
        });
      return { messageId };
    },
    async fetch(channelId, limit) {
      return options.history ? options.history(channelId, limit) : [];
    },
    async action() {
      throw new ChannelsError('UNSUPPORTED', 'webchat has no platform actions', {
        data: { channelType: 'webchat' },
      });
    },
    health: () => ({ ...health }),
  };
}
