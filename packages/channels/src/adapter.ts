import type { z } from 'zod';
import type { WebhookRequest, WebhookResponse } from './internal/webhook.js';

export type { WebhookRequest, WebhookResponse } from './internal/webhook.js';

/**
 * One outbound operation the delivery queue carries, in the shape it is stored in. `send`
 * with `replyTo` is a reply; `attach` carries the file as base64 so the stored row is JSON.
 */
export type OutboundOperation =
  | { op: 'send'; channelId: string; text: string; replyTo?: string | undefined }
  | { op: 'edit'; channelId: string; messageId: string; text: string }
  | { op: 'delete'; channelId: string; messageId: string }
  | { op: 'react'; channelId: string; messageId: string; emoji: string }
  | {
      op: 'attach';
      channelId: string;
      data: string;
      mimeType: string;
      filename?: string | undefined;
      caption?: string | undefined;
    };

/** What an adapter is told beside the operation: the delivery's own id, stable across attempts. */
export interface DeliveryAttempt {
  /** The queue entry id; also the idempotency key handed to platforms that take one. */
  deliveryId: string;
  /** 1 for the first attempt. */
  attempt: number;
}

/** What a platform answered to an outbound operation. */
export interface OutboundResult {
  /** The platform's id of the message sent, edited or reacted to. */
  messageId: string;
}

/** One message read back from a platform (`message.fetch`). */
export interface FetchedMessage {
  messageId: string;
  text: string;
  from?: string | undefined;
  ts?: number | undefined;
}

/** A message a platform delivered to the daemon. */
export interface InboundMessage {
  channelType: string;
  /** The chat (group, DM, channel) it arrived in; replies go back there. */
  channelId: string;
  /** The sender's platform id (what `allowFrom` lists). */
  userId: string;
  messageId: string;
  text: string;
  /** The message a reply should reference to stay in the thread (Slack's `thread_ts`); else `messageId`. */
  threadId?: string | undefined;
  /** Attachments, described as text until media transcription exists. */
  attachments?: Array<{ kind: string; name?: string | undefined; mimeType?: string | undefined }>;
}

/** A reaction a platform reported on a message of a chat (learning reads it as feedback). */
export interface InboundReaction {
  channelType: string;
  channelId: string;
  /** Who reacted (what `allowFrom` lists). */
  userId: string;
  /** The message reacted to. */
  messageId: string;
  /** The platform's name or character of the emoji (`+1`, `👍`). */
  emoji: string;
}

/** How an adapter is doing, for `channels.status`. */
export interface ChannelHealth {
  state: 'connected' | 'configured' | 'reconnecting' | 'error' | 'stopped';
  /** The last failure, already free of secrets. */
  lastError?: string | undefined;
  /** Epoch ms of the last successful platform call. */
  lastOkAt?: number | undefined;
}

/**
 * One chat platform. Adapters speak the platform's real HTTP API (through its own client
 * library) at a configurable base URL, and translate its failures into `ChannelsError`
 * `PLATFORM_ERROR` with `retryable` / `retryAfterMs`, which is what the queue acts on.
 */
export interface ChannelAdapter {
  /** `telegram`, `discord`, `slack`, `whatsapp`, `webchat`. */
  readonly type: string;
  /**
   * Connects inbound (polling, gateway); sends work before and without it. Platforms that report
   * reactions hand them to `onReaction`. `onInbound` resolves once the message is recorded: only
   * then may the platform be told it arrived (the next `getUpdates` offset, a webhook's 200, an
   * ack); when it rejects, the platform is left to deliver the message again.
   */
  start(
    onInbound: (message: InboundMessage) => void | Promise<void>,
    onReaction?: (reaction: InboundReaction) => void,
  ): Promise<void>;
  /** Stops inbound and any timers. Idempotent; `start` may be called again after it. */
  stop(): Promise<void>;
  /**
   * True when `start` opens what only one instance per account may hold (long polling, a
   * gateway or socket session): in cluster mode it then runs on one instance at a time.
   */
  readonly exclusive?: boolean | undefined;
  /** Carries out one outbound operation. */
  deliver(operation: OutboundOperation, attempt: DeliveryAttempt): Promise<OutboundResult>;
  /**
   * Asks the platform whether an attempt cut off by a crash happened: the message id when it
   * did, `null` when it certainly did not, `undefined` (or no method) when the platform cannot tell.
   */
  reconcile?(
    operation: OutboundOperation,
    attempt: DeliveryAttempt,
  ): Promise<OutboundResult | null | undefined>;
  /** Reads recent messages of a chat, newest first, where the platform allows it. */
  fetch(channelId: string, limit: number): Promise<FetchedMessage[]>;
  /** The platform's own operations (`<platform>.action`), validated by {@link actionSchema}. */
  readonly actionSchema: z.ZodType<{ action: string }>;
  action(params: { action: string } & Record<string, unknown>): Promise<unknown>;
  health(): ChannelHealth;
  /** Whether the platform has the operation at all (WhatsApp cannot edit); absent means all. */
  supports?(op: OutboundOperation['op']): boolean;
  /**
   * The platform's inbound HTTP callbacks (`/channels/<platform>/…`): verification handshakes
   * and signed events. Messages it carries reach `onInbound` given to `start`.
   */
  webhook?(request: WebhookRequest): Promise<WebhookResponse>;
  /**
   * Cluster mode: `instances` instances send for this account, so keep to `1/instances` of any
   * account-wide limit the client counts itself (Discord's global requests per second).
   */
  shareRateLimit?(instances: number): void;
}
