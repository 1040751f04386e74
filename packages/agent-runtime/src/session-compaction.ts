import type { AgentRegistry } from './agent-registry.js';
import { addUsage, costOf } from './billing-service.js';
import type { ContextNode } from './context-dag-store.js';
import { AgentRuntimeError } from './errors.js';
import { requireSession } from './internal/require-session.js';
import type { ModelResolver, ResolvedModel } from './model-resolver.js';
import { emptyUsage, type ModelProvider, type ModelUsage } from './provider.js';
import type { RuntimeContext } from './runtime-context.js';
import type { SessionMessage } from './session-store.js';
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
  /** Summary nodes written: one over the messages, plus any condensing earlier summaries. */
  nodesCreated?: number;
  /** Depth of the session's context DAG afterwards. */
  maxDepth?: number;
  reason?: string;
}

const LEAF_PROMPT =
  'Summarise the conversation below so it can replace the original messages in future context. ' +
  'Keep facts, decisions, open questions and user preferences; be concise.';
const CONDENSE_PROMPT =
  'Below are consecutive summaries of one conversation, oldest first. Merge them into one ' +
  'summary that can replace them: keep facts, decisions, open questions and user preferences; be concise.';

/** One summarising call: model, provider, the session's ids and the usage it adds to. */
interface Summarizer {
  resolved: ResolvedModel;
  provider: ModelProvider;
  timeoutMs: number;
  usage: ModelUsage;
  calls: number;
  ids: { sessionKey: string; traceId: string; agentId: string };
}

/**
 * Compacts a session into its context DAG: the messages before the last two user exchanges
 * become a depth-1 summary node (by the agent's compaction model), then every `fanout` root
 * summaries of one depth are condensed into a node one level up, so a long conversation
 * becomes a tree of summaries whose roots cover everything compacted. The calls are billed
 * and cache-traced under a trace id of their own. Run it under the session's lock.
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
      { data: { agentId: session.agentId, sessionKey } },
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
  const run: Summarizer = {
    resolved,
    provider: await models.provider(resolved),
    timeoutMs: agent.operations.compaction?.timeoutMs ?? resolved.entry.timeoutMs,
    usage: emptyUsage(),
    calls: 0,
    ids: { sessionKey, traceId: ctx.randomId(), agentId: session.agentId },
  };
  const leaf = await summarize(ctx, run, LEAF_PROMPT, transcriptOf(older));
  if (!leaf) return { ...nothing, reason: 'the model returned an empty summary' };
  const at = ctx.now();
  await ctx.dag.insert(session.id, {
    depth: 1,
    content: leaf,
    tokens: estimateTokens(leaf),
    fromSeq: older[0]?.seq ?? session.compactedBeforeSeq,
    toSeq: older.at(-1)?.seq ?? boundarySeq - 1,
    createdAt: at,
  });
  const condensed = await condense(ctx, run, session.id, ctx.config.contextEngine.compaction.fanout);
  const roots = await ctx.dag.roots(session.id);
  // The stored summary is every root, oldest first: what the next turns' context starts from.
  const summary = roots.map((node) => node.content).join('\n\n');
  const summaryTokens = estimateTokens(summary);
  await ctx.store.compact(session.id, boundarySeq, summary, summaryTokens, at);
  await recordCompactionBilling(ctx, run, session.agentId, at);
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
      input: run.usage.inputTokens,
      output: run.usage.outputTokens,
      total: run.usage.inputTokens + run.usage.outputTokens,
    },
    nodesCreated: 1 + condensed,
    maxDepth: Math.max(0, ...roots.map((node) => node.depth)),
  };
}

/** The compaction transcript of some messages (tool output cut to 500 characters). */
function transcriptOf(messages: SessionMessage[]): string {
  return messages
    .map((message) => {
      const text = message.role === 'tool' ? message.content.slice(0, 500) : message.content;
      const calls = message.toolCalls?.map((call) => ` [called ${call.toolName}]`).join('') ?? '';
      return `${message.role}${message.toolName ? ` (${message.toolName})` : ''}: ${text}${calls}`;
    })
    .join('\n');
}

/**
 * Condenses, level by level, every run of `fanout` roots of one depth into one node a level up
 * (oldest first); returns the nodes written. A level whose condensing call answers nothing is
 * left as it is.
 */
async function condense(
  ctx: RuntimeContext,
  run: Summarizer,
  sessionId: number,
  fanout: number,
): Promise<number> {
  let written = 0;
  for (let depth = 1; depth < 64; depth++) {
    const roots = await ctx.dag.roots(sessionId, depth);
    if (roots.length < fanout) {
      if (roots.length === 0 && (await ctx.dag.roots(sessionId)).every((node) => node.depth < depth)) break;
      continue;
    }
    for (let start = 0; start + fanout <= roots.length; start += fanout) {
      const group = roots.slice(start, start + fanout);
      const text = await summarize(
        ctx,
        run,
        CONDENSE_PROMPT,
        group.map((node) => node.content).join('\n\n---\n\n'),
      );
      if (!text) return written;
      await ctx.dag.insert(
        sessionId,
        {
          depth: depth + 1,
          content: text,
          tokens: estimateTokens(text),
          fromSeq: (group[0] as ContextNode).fromSeq,
          toSeq: (group.at(-1) as ContextNode).toSeq,
          createdAt: ctx.now(),
        },
        group.map((node) => node.id),
      );
      written++;
    }
  }
  return written;
}

/** One summarising call: the newest part of `text` that fits the model's window; the trimmed answer. */
async function summarize(
  ctx: RuntimeContext,
  run: Summarizer,
  system: string,
  text: string,
): Promise<string> {
  const outputHeadroom = Math.min(run.resolved.maxOutputTokens, 2048);
  const budget = run.resolved.contextWindow - outputHeadroom - 200;
  const transcript = estimateTokens(text) > budget ? text.slice(-Math.max(0, budget * 4)) : text;
  let summary = '';
  run.calls++;
  for await (const event of run.provider.stream({
    model: run.resolved.model,
    system,
    messages: [{ role: 'user', content: transcript }],
    tools: [],
    maxOutputTokens: outputHeadroom,
    signal: AbortSignal.timeout(run.timeoutMs),
    purpose: 'compaction',
  })) {
    if (event.type === 'text-delta') summary += event.text;
    else if (event.type === 'finish') {
      addUsage(run.usage, event.usage);
      ctx.traceCache(run.ids, run.resolved, run.calls, event.usage);
    }
  }
  return summary.trim();
}

async function recordCompactionBilling(ctx: RuntimeContext, run: Summarizer, agentId: string, at: number) {
  const { costUsd, cacheSavedUsd } = costOf(run.usage, run.resolved.prices);
  await ctx.store.recordBilling({
    sessionKey: run.ids.sessionKey,
    agentId,
    now: at,
    traceId: run.ids.traceId,
    steps: run.calls,
    provider: run.resolved.providerId,
    model: run.resolved.model,
    usage: run.usage,
    costUsd,
    cacheSavedUsd,
  });
}
