import type { AgentDefinition } from './config.js';
import { selectHistory } from './context.js';
import { toModelMessage } from './internal/messages.js';
import type { CachedSession } from './internal/session-cache.js';
import type { ModelToolCall } from './provider.js';
import type { RuntimeContext } from './runtime-context.js';
import type { NewMessage, SessionMessage, SessionRecord } from './session-store.js';
import { estimateMessageTokens } from './tokens.js';

/** Rows read per history page while assembling context. */
const HISTORY_PAGE = 128;

/**
 * The newest stored messages that fit `budget` tokens and `maxMessages`, oldest first: read
 * from the cached tail, paging older messages in from the database (into the cache) when
 * the tail does not reach back far enough.
 */
export async function collectHistory(
  ctx: RuntimeContext,
  session: SessionRecord,
  cached: CachedSession,
  budget: number,
  maxMessages: number,
): Promise<{ kept: SessionMessage[]; tokens: number }> {
  const collected: SessionMessage[] = [];
  let collectedTokens = 0;
  let index = cached.messages.length - 1;
  for (;;) {
    for (; index >= 0 && collected.length < maxMessages && collectedTokens < budget; index--) {
      const message = cached.messages[index] as SessionMessage;
      collected.push(message);
      collectedTokens += message.tokens;
    }
    if (collected.length >= maxMessages || collectedTokens >= budget) break;
    if (cached.fromSeq <= session.compactedBeforeSeq) break;
    // The cache does not reach back far enough: page older messages in from the database.
    const want = Math.min(HISTORY_PAGE, maxMessages - collected.length);
    const page = await ctx.store.loadTail(session, cached.fromSeq, want);
    const oldest = page.at(-1);
    cached.fromSeq = page.length < want || !oldest ? session.compactedBeforeSeq : oldest.seq;
    if (page.length === 0) break;
    cached.messages.unshift(...[...page].reverse());
    index = page.length - 1;
  }
  return selectHistory(collected, budget);
}

/** Appends a committed turn to the cached tail, keeping at most one window of tokens. */
export function rememberTail(
  ctx: RuntimeContext,
  turn: {
    sessionKey: string;
    committed: SessionRecord;
    cached: CachedSession | undefined;
    added: NewMessage[];
    firstSeq: number;
    createdAt: number;
    traceId: string;
    windowTokens: number;
    agent: AgentDefinition;
  },
): void {
  const { committed, firstSeq, createdAt, traceId } = turn;
  const entry = turn.cached ?? { session: committed, messages: [], fromSeq: firstSeq };
  entry.session = committed;
  turn.added.forEach((message, offset) => {
    entry.messages.push({ ...message, seq: firstSeq + offset, createdAt, traceId });
  });
  let tokens = 0;
  let keep = 0;
  for (let index = entry.messages.length - 1; index >= 0; index--) {
    const message = entry.messages[index] as SessionMessage;
    if (keep >= turn.agent.contextBudget.maxHistoryMessages || tokens + message.tokens > turn.windowTokens) {
      break;
    }
    tokens += message.tokens;
    keep++;
  }
  if (keep < entry.messages.length) {
    entry.messages.splice(0, entry.messages.length - keep);
    entry.fromSeq = entry.messages[0]?.seq ?? committed.nextSeq;
  }
  ctx.cache.set(turn.sessionKey, entry);
}

/**
 * A cancelled turn can stop between a tool call and its result; a stored call without a
 * result would make every later request invalid, so such calls are dropped from the message.
 */
export function dropDanglingToolCalls(
  messages: NewMessage[],
  clientCalls: readonly ModelToolCall[] = [],
): void {
  const answered = new Set(
    messages.filter((message) => message.role === 'tool').map((message) => message.toolCallId),
  );
  // Client tool calls are answered by the caller's next turn.
  for (const call of clientCalls) answered.add(call.toolCallId);
  for (const message of messages) {
    if (message.role !== 'assistant' || !message.toolCalls) continue;
    const kept = message.toolCalls.filter((call) => answered.has(call.toolCallId));
    if (kept.length === message.toolCalls.length) continue;
    if (kept.length > 0) message.toolCalls = kept;
    else delete message.toolCalls;
    message.tokens = estimateMessageTokens(toModelMessage(message));
  }
  // An assistant message left with neither text nor calls carries nothing.
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role === 'assistant' && !message.content && !message.toolCalls) messages.splice(index, 1);
  }
}
