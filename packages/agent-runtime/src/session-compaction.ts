import type { AgentRegistry } from './agent-registry.js';
import { addUsage, costOf } from './billing-service.js';
import { AgentRuntimeError } from './errors.js';
import { requireSession } from './internal/require-session.js';
import type { ModelResolver } from './model-resolver.js';
import { emptyUsage } from './provider.js';
import type { RuntimeContext } from './runtime-context.js';
import { estimateTokens } from './tokens.js';

/** Result of `session.compact`. */
export interface CompactResult {
  sessionKey: string;
  compacted: boolean;
  /** Messages now represented by the summary. */
  messagesSummarized: number;
  /** Messages kept verbatim after the summary. */
  keptMessages: number;
  summaryTokens: number;
  tokensUsed: { input: number; output: number; total: number };
  reason?: string;
}

/**
 * Replaces a session's older history with a summary by the agent's compaction model: the
 * last two user exchanges stay verbatim, the call is billed and cache-traced under a trace
 * id of its own. Run it under the session's lock.
 */
export async function compactSession(
  ctx: RuntimeContext,
  agents: AgentRegistry,
  models: ModelResolver,
  sessionKey: string,
): Promise<CompactResult> {
  ctx.cache.delete(sessionKey);
  const session = await requireSession(ctx, sessionKey);
  const agent = agents.find(session.agentId);
  if (!agent) {
    throw new AgentRuntimeError(
      'AGENT_DELETED',
      `Agent deleted: ${session.agentId}; session ${sessionKey} cannot be compacted`,
      {
        data: { agentId: session.agentId, sessionKey },
      },
    );
  }
  const live = (await ctx.store.loadTail(session, session.nextSeq, 1_000_000)).reverse();
  // Keep the last two user exchanges verbatim; everything before them goes into the summary.
  const userIndexes = live.flatMap((message, index) => (message.role === 'user' ? [index] : []));
  const boundaryIndex = userIndexes.length >= 2 ? (userIndexes.at(-2) ?? 0) : 0;
  const nothing = {
    sessionKey,
    compacted: false,
    messagesSummarized: 0,
    keptMessages: live.length,
    summaryTokens: session.summaryTokens,
    tokensUsed: { input: 0, output: 0, total: 0 },
  };
  if (boundaryIndex === 0) return { ...nothing, reason: 'too little history to compact' };
  const older = live.slice(0, boundaryIndex);
  const boundarySeq = live[boundaryIndex]?.seq ?? session.nextSeq;
  const resolved = models.resolve(agent, undefined, agent.operations.compaction);
  const provider = await models.provider(resolved);
  const lines = older.map((message) => {
    const text = message.role === 'tool' ? message.content.slice(0, 500) : message.content;
    const calls = message.toolCalls?.map((call) => ` [called ${call.toolName}]`).join('') ?? '';
    return `${message.role}${message.toolName ? ` (${message.toolName})` : ''}: ${text}${calls}`;
  });
  if (session.summary) lines.unshift(`earlier summary: ${session.summary}`);
  // Fit the transcript into the compaction model's window, keeping its newest part.
  const outputHeadroom = Math.min(resolved.maxOutputTokens, 2048);
  const budget = resolved.contextWindow - outputHeadroom - 200;
  let transcript = lines.join('\n');
  if (estimateTokens(transcript) > budget) transcript = transcript.slice(-Math.max(0, budget * 4));
  const usage = emptyUsage();
  // The compaction call is billed and cache-traced under a trace id of its own.
  const compactionTraceId = ctx.randomId();
  let summary = '';
  const timeoutMs = agent.operations.compaction?.timeoutMs ?? resolved.entry.timeoutMs;
  for await (const event of provider.stream({
    model: resolved.model,
    system:
      'Summarise the conversation below so it can replace the original messages in future context. ' +
      'Keep facts, decisions, open questions and user preferences; be concise.',
    messages: [{ role: 'user', content: transcript }],
    tools: [],
    maxOutputTokens: outputHeadroom,
    signal: AbortSignal.timeout(timeoutMs),
    purpose: 'compaction',
  })) {
    if (event.type === 'text-delta') summary += event.text;
    else if (event.type === 'finish') {
      addUsage(usage, event.usage);
      ctx.traceCache(
        { sessionKey, traceId: compactionTraceId, agentId: session.agentId },
        resolved,
        1,
        event.usage,
      );
    }
  }
  summary = summary.trim();
  if (!summary) return { ...nothing, reason: 'the model returned an empty summary' };
  const summaryTokens = estimateTokens(summary);
  const at = ctx.now();
  await ctx.store.compact(session.id, boundarySeq, summary, summaryTokens, at);
  const { costUsd, cacheSavedUsd } = costOf(usage, resolved.prices);
  await ctx.store.recordBilling({
    sessionKey,
    agentId: session.agentId,
    now: at,
    traceId: compactionTraceId,
    steps: 1,
    provider: resolved.providerId,
    model: resolved.model,
    usage,
    costUsd,
    cacheSavedUsd,
  });
  ctx.events.emit('session:compacted', {
    sessionKey,
    agentId: session.agentId,
    messagesSummarized: older.length,
  });
  return {
    sessionKey,
    compacted: true,
    messagesSummarized: older.length,
    keptMessages: live.length - older.length,
    summaryTokens,
    tokensUsed: {
      input: usage.inputTokens,
      output: usage.outputTokens,
      total: usage.inputTokens + usage.outputTokens,
    },
  };
}
