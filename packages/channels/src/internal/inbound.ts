import type { AgentTurnRunner, Logger } from '@agentd/contracts';
import type { InboundMessage, InboundReaction } from '../adapter.js';
import type { EnqueueRequest } from '../delivery-queue.js';

/**
 * Where a webhook or socket adapter hands the messages and reactions it parsed. `message`
 * resolves once the message is recorded; the platform may be told it arrived only then.
 */
export interface InboundSink {
  message(message: InboundMessage): Promise<void>;
  reaction(reaction: InboundReaction): void;
}

/**
 * The listeners an adapter's `start` was given, as one sink: `attach` at start, `detach` at stop.
 * A message arriving while none is attached (a callback racing a stop) is refused, so the
 * platform delivers it again; a reaction then is dropped.
 */
export function inboundSlots(): InboundSink & {
  attach(
    onInbound: (message: InboundMessage) => void | Promise<void>,
    onReaction?: (reaction: InboundReaction) => void,
  ): void;
  detach(): void;
} {
  let onInbound: ((message: InboundMessage) => void | Promise<void>) | undefined;
  let onReaction: ((reaction: InboundReaction) => void) | undefined;
  return {
    attach(inbound, reaction) {
      onInbound = inbound;
      onReaction = reaction;
    },
    detach() {
      onInbound = undefined;
      onReaction = undefined;
    },
    async message(message) {
      if (!onInbound) throw new Error('inbound is stopped');
      await onInbound(message);
    },
    reaction: (reaction) => onReaction?.(reaction),
  };
}

/** Percent-encodes the two characters that would break a session key's segments. */
const segment = (value: string): string => value.replace(/%/g, '%25').replace(/:/g, '%3A');

/** The session of an inbound message: `<tenant>:<channel>:<user>`, the chat in the channel segment. */
export function inboundSessionKey(message: InboundMessage, tenant = 'default'): string {
  return `${segment(tenant)}:${segment(`${message.channelType}-${message.channelId}`)}:${segment(message.userId)}`;
}

/** Whether `allowFrom` admits the sender (`*` admits everyone; empty admits nobody). */
export function isAllowed(allowFrom: readonly string[], userId: string): boolean {
  return allowFrom.includes('*') || allowFrom.includes(userId);
}

/** The message text the agent sees: the text, plus a line per attachment until media transcription exists. */
export function turnText(message: InboundMessage): string {
  const lines = (message.attachments ?? []).map(
    (item) =>
      `[attachment: ${item.kind}${item.name ? ` ${item.name}` : ''}${item.mimeType ? ` (${item.mimeType})` : ''}]`,
  );
  return [message.text, ...lines].filter((line) => line.length > 0).join('\n');
}

/**
 * Runs the agent turn of one admitted inbound message and queues its answer to the same chat
 * as a reply. The turn and the reply are both keyed by the platform message, so a platform
 * that delivers the update twice gets one turn and one answer.
 */
export async function routeInbound(context: {
  message: InboundMessage;
  agentId: string;
  runner: AgentTurnRunner;
  enqueue(request: EnqueueRequest): Promise<unknown>;
  logger: Logger;
  /** Cancels the turn (a stop past its grace); a cancelled turn's answer is not queued. */
  signal?: AbortSignal | undefined;
}): Promise<void> {
  const { message, runner, logger } = context;
  const key = `${message.channelType}:${message.channelId}:${message.messageId}`;
  const text = turnText(message);
  if (text.length === 0) return;
  const result = await runner.runTurn({
    agentId: context.agentId,
    message: text,
    sessionKey: inboundSessionKey(message),
    turnKey: `channel:${key}`,
    // Tools that answer with media (a generated image) send it to this chat.
    callerChannel: { channelType: message.channelType, channelId: message.channelId },
    ...(context.signal ? { signal: context.signal } : {}),
  });
  // A turn cut off by a stop answers nothing now: it runs again, whole, at the next start.
  if (context.signal?.aborted) throw new Error('the turn was cut off by the stop');
  if (result.response.length === 0) return;
  await context.enqueue({
    channelType: message.channelType,
    idempotencyKey: `reply:${key}`,
    operation: {
      op: 'send',
      channelId: message.channelId,
      text: result.response,
      // Threads are kept: the answer references the thread root where the platform has one.
      replyTo: message.threadId ?? message.messageId,
    },
  });
  logger.debug({ channelType: message.channelType, sessionKey: result.sessionKey }, 'inbound answered');
}
