import { planBudget, resolveContextWindow } from './context.js';
import { EVIDENCE_SCHEMA_VERSION } from '@agentd/evidence';
import type { TurnSetup, TurnState } from './internal/turn-state.js';
import { emptyUsage } from './provider.js';
import type { RuntimeContext } from './runtime-context.js';
import type { TurnRecall } from './runtime-options.js';
import type { NewMessage } from './session-store.js';
import { tokenCounterFor } from './token-counter.js';
import { estimateMessageTokens, estimateToolTokens } from './tokens.js';
import type { ToolRunner } from './tool-runner.js';
import { collectHistory } from './turn-history.js';
import { checkClientTurn, settleClientCalls } from './turn-client.js';
import { modelCapabilities } from './model-capabilities.js';
import { fitRecallBlock, recallBeforeTurn } from './turn-recall.js';

/** What one image is counted as in the context budget (a typical vision model's tile cost). */
const IMAGE_TOKENS = 800;

/** Builds the turn's state: window, offered tools, system prompt, recalled memories, history. */
export async function prepareTurn(
  ctx: RuntimeContext,
  tools: ToolRunner,
  setup: TurnSetup,
  signal: AbortSignal,
): Promise<TurnState> {
  const { agent, resolved, session, input } = setup;
  const window = resolveContextWindow({
    rawContextWindowTokens: resolved.contextWindow,
    capabilityClass: resolved.entry.capabilities.capabilityClass,
    effectiveContextCapSmall: ctx.config.contextEngine.budget.effectiveContextCapSmall,
    effectiveContextCapNano: ctx.config.contextEngine.budget.effectiveContextCapNano,
    agentMaxWindowTokens: agent.contextBudget.maxWindowTokens,
  });
  const own = tools.offered(agent, input.allowedTools, setup.agentId);
  const capabilities = modelCapabilities(setup.provider, resolved);
  checkClientTurn(setup.request, setup.provider, capabilities, own);
  const offered = [...own, ...(setup.request.clientTools ?? [])];
  let system = agent.systemPrompt;
  const summary = await summaryFor(ctx, session, window.windowTokens);
  if (summary) system += `\n\nSummary of the earlier conversation:\n${summary}`;
  system += await skillsBlock(ctx, setup.agentId, offered);
  // The budget counts with the model's own tokenizer where its family is known (OpenAI's
  // o200k/cl100k), else with the CJK-aware estimate; `tokens.counting` says which, and every
  // context_budget record carries it as `tokenCounting`.
  const tokens = await tokenCounterFor(resolved.model);
  // The stored message keeps text only; images go to the model with this turn.
  const images = setup.request.images ?? [];
  const stored = input.message || (images.length > 0 ? `[${images.length} image(s)]` : '');
  const userMessage: NewMessage = {
    role: 'user',
    content: stored,
    tokens:
      estimateMessageTokens({ role: 'user', content: stored }, tokens.count) + images.length * IMAGE_TOKENS,
  };
  const asked = stored === '' ? [] : [userMessage];
  const base = {
    v: EVIDENCE_SCHEMA_VERSION,
    sessionKey: setup.sessionKey,
    traceId: setup.traceId,
    agentId: setup.agentId,
  } as const;
  const state: TurnState = {
    ...setup,
    base,
    trajectory: [
      {
        ...base,
        ts: setup.startedAt,
        type: 'turn_start',
        origin: setup.origin,
        provider: resolved.providerId,
        model: resolved.model,
      },
    ],
    window,
    capabilities,
    offered,
    system,
    tokens,
    systemTokens: tokens.count(system) + estimateToolTokens(offered, tokens.count),
    maxOutputTokens: Math.min(agent.maxOutputTokens ?? resolved.maxOutputTokens, resolved.maxOutputTokens),
    turnMessages: asked,
    tail: asked.map(() => ({
      role: 'user',
      content: input.message,
      ...(images.length > 0 ? { images } : {}),
    })),
    tailTokens: asked.length > 0 ? userMessage.tokens : 0,
    recallEvidence: undefined,
    history: [],
    historyTokens: 0,
    cached: undefined,
    usage: emptyUsage(),
    steps: 0,
    response: '',
    finishReason: 'stop',
    endReason: 'completed',
    toolOk: 0,
    toolFailed: 0,
    toolSeq: 0,
    modelCalls: [],
    failure: undefined,
    lastText: '',
    streaming: '',
    clientCalls: [],
  };
  const { recall } = ctx.settings;
  if (recall && agent.memory.autoRecall && input.message !== '') await addRecall(ctx, state, recall, signal);
  await addHistory(ctx, state);
  settleClientCalls(state);
  return state;
}

/**
 * The highest summaries of the context DAG that fit: the roots (which together cover every
 * compacted message) when they fit `summaryShare` of the window, which is the stored summary;
 * otherwise the newest roots that fit, oldest first (older ones stay browsable in the DAG).
 */
async function summaryFor(
  ctx: RuntimeContext,
  session: TurnSetup['session'],
  windowTokens: number,
): Promise<string | undefined> {
  if (!session?.summary) return undefined;
  const budget = Math.floor(windowTokens * ctx.config.contextEngine.compaction.summaryShare);
  if (session.summaryTokens <= budget) return session.summary;
  const kept: string[] = [];
  let used = 0;
  const roots = await ctx.dag.roots(session.id);
  for (const node of roots.reverse()) {
    if (used + node.tokens > budget) break;
    kept.unshift(node.content);
    used += node.tokens;
  }
  return kept.length > 0 ? kept.join('\n\n') : undefined;
}

/** The skills an agent may load, one line each, when it is offered the skill-read tool. */
async function skillsBlock(
  ctx: RuntimeContext,
  agentId: string,
  offered: { name: string }[],
): Promise<string> {
  const skills = ctx.settings.skills;
  if (!skills || !offered.some((tool) => tool.name === skills.readTool)) return '';
  try {
    const block = await skills.promptBlock(agentId);
    return block ? `\n\n${block}` : '';
  } catch (error) {
    // A broken skills folder must not stop the agent from answering.
    ctx.logger.warn(
      { err: error, agentId, errorKind: 'internal', hint: 'check skills.list for load errors' },
      'skills not listed in the prompt',
    );
    return '';
  }
}

/**
 * Recalled memories join the system side, but only in room history would otherwise get:
 * they never squeeze the system prompt, the message or the output headroom.
 */
async function addRecall(
  ctx: RuntimeContext,
  state: TurnState,
  recall: TurnRecall,
  signal: AbortSignal,
): Promise<void> {
  const { agent } = state;
  const recalled = await recallBeforeTurn(recall, ctx.logger, {
    agent,
    agentId: state.agentId,
    sessionKey: state.sessionKey,
    traceId: state.traceId,
    message: state.input.message,
    memoryTenant: state.input.memoryTenant,
    signal,
  });
  state.recallEvidence = recalled.evidence;
  if (!recalled.context) return;
  const room = planBudget({
    windowTokens: state.window.windowTokens,
    systemTokens: state.systemTokens,
    freshTailTokens: state.tailTokens,
    maxOutputTokens: state.maxOutputTokens,
    minOutputTokens: agent.contextBudget.minOutputTokens,
  }).historyBudget;
  const block = fitRecallBlock(recalled.context, room, state.tokens.count);
  if (!block) return;
  state.system += `\n\n${block}`;
  const withBlock = state.tokens.count(state.system) + estimateToolTokens(state.offered, state.tokens.count);
  recalled.evidence.injectedTokens = withBlock - state.systemTokens;
  state.systemTokens = withBlock;
}

/** History: the newest messages that fit the first step's budget (later steps only trim). */
async function addHistory(ctx: RuntimeContext, state: TurnState): Promise<void> {
  const { agent, session, sessionKey } = state;
  const firstPlan = planBudget({
    windowTokens: state.window.windowTokens,
    systemTokens: state.systemTokens,
    freshTailTokens: state.tailTokens,
    maxOutputTokens: state.maxOutputTokens,
    minOutputTokens: agent.contextBudget.minOutputTokens,
  });
  if (!session) return;
  const cached = ctx.cache.get(sessionKey) ?? { session, messages: [], fromSeq: session.nextSeq };
  state.cached = cached;
  if (firstPlan.historyBudget <= 0 || agent.contextBudget.maxHistoryMessages <= 0) return;
  const { kept, tokens } = await collectHistory(
    ctx,
    session,
    cached,
    firstPlan.historyBudget,
    agent.contextBudget.maxHistoryMessages,
  );
  state.history = kept;
  state.historyTokens = tokens;
}
