import { z } from 'zod';
import type { AgentRegistry } from './agent-registry.js';
import { addUsage } from './billing-service.js';
import { DEFAULT_AGENT_ID, entityIdSchema, toolPatternsSchema } from './config.js';
import { planBudget, selectHistory } from './context.js';
import { AgentRuntimeError } from './errors.js';
import type { ContextBudget } from '@agentd/evidence';
import { toModelMessage } from './internal/messages.js';
import { invalidOptions, parseOptions } from './internal/options.js';
import type { TurnInput, TurnSetup, TurnState } from './internal/turn-state.js';
import { TurnTimers } from './internal/turn-timers.js';
import { withImageNote } from './model-capabilities.js';
import type { ModelResolver } from './model-resolver.js';
import type { ModelFinishReason, ModelToolCall } from './provider.js';
import type { RuntimeContext } from './runtime-context.js';
import { sessionKeySchema } from './session-key.js';
import type { NewMessage } from './session-store.js';
import { estimateMessageTokens } from './tokens.js';
import type { ToolRunner } from './tool-runner.js';
import { compactSession } from './session-compaction.js';
import { clientTurnFields, hasTurnContent, splitClientCalls, stepOptions } from './turn-client.js';
import { prepareTurn } from './turn-prepare.js';
import { recordTurn, toolCallsOf } from './turn-record.js';
import type { TurnOrigin, TurnRequest, TurnResult } from './types.js';

/** Session key used when a turn names none. */
export const DEFAULT_SESSION_KEY = 'default:webchat:anonymous';

const turnRequestSchema = z.object({
  agentId: entityIdSchema.optional(),
  // Empty only when images or tool results carry the turn (checked below).
  message: z.string().max(1_000_000),
  sessionKey: sessionKeySchema.optional(),
  model: z.string().min(1).max(200).optional(),
  timeoutMs: z.number().int().positive().optional(),
  origin: z.enum(['rpc', 'hook', 'cron', 'graph', 'heartbeat', 'subagent']).optional(),
  channelType: z.string().min(1).max(64).optional(),
  traceId: z.string().min(1).max(128).optional(),
  synthetic: z.boolean().optional(),
  allowedTools: toolPatternsSchema.optional(),
  turnKey: z.string().min(1).max(200).optional(),
  memoryTenant: z.string().min(1).max(64).optional(),
  callerChannel: z
    .object({ channelType: z.string().min(1).max(64), channelId: z.string().min(1).max(256) })
    .strict()
    .optional(),
  ...clientTurnFields,
});

/** The turn loop: runs turns, serialised per session, and knows which are in flight. */
export interface TurnLoop {
  /** Runs one turn (serialised per session, parallel across sessions). */
  runTurn(request: TurnRequest): Promise<TurnResult>;
  /** Turns running now. */
  inFlight(): number;
  /** Refuses later turns with `CLOSED` and waits for the running ones. */
  close(): Promise<void>;
}

/**
 * Creates the turn loop. A turn: resolve session, agent and model; assemble the context
 * (system prompt, recalled memories, the history that fits, the message); then up to
 * `maxSteps` model calls, every tool call going through the tool runner; then record it.
 */
export function createTurnLoop(
  ctx: RuntimeContext,
  agents: AgentRegistry,
  models: ModelResolver,
  tools: ToolRunner,
): TurnLoop {
  const turnsInFlight = new Set<Promise<unknown>>();
  let closed = false;

  async function runTurn(request: TurnRequest): Promise<TurnResult> {
    if (closed) throw new AgentRuntimeError('CLOSED', 'The agent runtime is closed');
    const input: TurnInput = parseOptions(turnRequestSchema, request, 'runTurn');
    if (!hasTurnContent(input)) {
      throw invalidOptions('runTurn', [
        { path: ['message'], code: 'too_small', message: 'the message is empty' },
      ]);
    }
    const sessionKey = input.sessionKey ?? DEFAULT_SESSION_KEY;
    // Refuse early when the named agent is unknown or suspended, before queueing behind other turns.
    if (input.agentId) {
      const agent = agents.find(input.agentId);
      if (agent?.suspended) throw agents.suspendedError(input.agentId);
    }
    const placement = ctx.settings.placement;
    if (placement) {
      // The agent that runs the turn: an existing session's own, whatever the request names.
      const session = ctx.cache.get(sessionKey)?.session ?? (await ctx.store.get(sessionKey));
      await placement(session?.agentId ?? input.agentId ?? DEFAULT_AGENT_ID, input.origin ?? 'rpc');
    }
    const turn = ctx.locks.run(sessionKey, () => turnLocked(request, input, sessionKey));
    turnsInFlight.add(turn);
    void turn.then(
      () => turnsInFlight.delete(turn),
      () => turnsInFlight.delete(turn),
    );
    return turn;
  }

  async function turnLocked(request: TurnRequest, input: TurnInput, sessionKey: string): Promise<TurnResult> {
    // Checked under the session's lock, so a repeated turn cannot slip in beside the first.
    if (input.turnKey !== undefined) {
      const committed = await ctx.store.committedTurn(input.turnKey);
      if (committed) {
        ctx.logger.info(
          { sessionKey: committed.sessionKey, traceId: committed.traceId },
          'turn already committed under its turn key; not run again',
        );
        return committed;
      }
    }
    const startedAt = ctx.now();
    const traceId = input.traceId ?? ctx.randomId();
    const origin: TurnOrigin = input.origin ?? 'rpc';
    const session = ctx.cache.get(sessionKey)?.session ?? (await ctx.store.get(sessionKey));
    if (session && input.agentId && input.agentId !== session.agentId) {
      throw new AgentRuntimeError(
        'SESSION_AGENT_MISMATCH',
        `Session ${sessionKey} belongs to agent ${session.agentId}, not ${input.agentId}`,
        { data: { sessionKey, agentId: session.agentId } },
      );
    }
    const agentId = session?.agentId ?? input.agentId ?? DEFAULT_AGENT_ID;
    const agent = agents.find(agentId);
    if (!agent) {
      if (session) {
        throw new AgentRuntimeError(
          'AGENT_DELETED',
          `Agent deleted: ${agentId}; session ${sessionKey} keeps its history but takes no new turns`,
          { data: { agentId, sessionKey } },
        );
      }
      throw new AgentRuntimeError('AGENT_NOT_FOUND', `Agent not found: ${agentId}`, { data: { agentId } });
    }
    if (agent.suspended) throw agents.suspendedError(agentId);

    const resolved = models.resolve(agent, input.model);
    const provider = await models.provider(resolved);
    const { running } = ctx;
    running.set(agentId, (running.get(agentId) ?? 0) + 1);
    try {
      return await executeTurn({
        request,
        input,
        sessionKey,
        session,
        agentId,
        agent,
        resolved,
        provider,
        traceId,
        origin,
        startedAt,
      });
    } finally {
      const left = (running.get(agentId) ?? 1) - 1;
      if (left <= 0) running.delete(agentId);
      else running.set(agentId, left);
    }
  }

  async function executeTurn(setup: TurnSetup): Promise<TurnResult> {
    const { agent, input } = setup;
    const timers = new TurnTimers(
      input.timeoutMs ?? agent.timeouts.turnMs,
      agent.timeouts.stallMs,
      setup.request.signal,
    );
    let state: TurnState;
    try {
      state = await prepareTurn(ctx, tools, setup, timers.signal);
    } catch (error) {
      timers.dispose();
      throw error;
    }
    try {
      await runSteps(ctx, tools, state, timers);
    } catch (error) {
      timers.clearStall();
      if (!timers.stopCause) state.failure = error;
    } finally {
      timers.dispose();
    }
    const result = await recordTurn(ctx, state, timers.stopCause);
    observe(state, result);
    await scheduleCompaction(state.sessionKey, state.window.windowTokens);
    return result;
  }

  /** Hands the finished turn to the observer (the learning layer); a throwing observer is only logged. */
  function observe(state: TurnState, result: TurnResult): void {
    const observer = ctx.settings.observer;
    if (!observer) return;
    try {
      observer({
        agentId: state.agentId,
        sessionKey: state.sessionKey,
        traceId: state.traceId,
        origin: state.origin,
        message: state.input.message,
        response: result.response,
        endReason: result.endReason,
        tools: toolCallsOf(state.trajectory),
        synthetic: state.input.synthetic === true,
        at: ctx.now(),
      });
    } catch (error) {
      ctx.logger.warn(
        { err: error, errorKind: 'internal', hint: 'the turn itself is recorded' },
        'turn observer failed',
      );
    }
  }

  /**
   * Automatic compaction: once the uncompacted history passes `thresholdRatio` of the window,
   * a compaction is queued behind this turn on the session's lock, so the answer is not held up
   * and the next turn starts from the DAG. A failed compaction is logged; history stays whole.
   */
  async function scheduleCompaction(sessionKey: string, windowTokens: number): Promise<void> {
    const settings = ctx.config.contextEngine.compaction;
    if (!settings.auto || closed) return;
    const session = ctx.cache.get(sessionKey)?.session ?? (await ctx.store.get(sessionKey));
    if (!session) return;
    const live = await ctx.dag.liveTokens(session.id, session.compactedBeforeSeq);
    if (live <= windowTokens * settings.thresholdRatio) return;
    const compaction = ctx.locks
      .run(sessionKey, () => compactSession(ctx, agents, models, sessionKey))
      .catch((error: unknown) =>
        ctx.logger.warn(
          { err: error, sessionKey, errorKind: 'internal', hint: 'run session.compact to retry' },
          'automatic compaction failed',
        ),
      );
    turnsInFlight.add(compaction);
    void compaction.then(() => turnsInFlight.delete(compaction));
  }

  return {
    runTurn,
    inFlight() {
      let total = 0;
      for (const count of ctx.running.values()) total += count;
      return total;
    },
    async close() {
      closed = true;
      await Promise.allSettled([...turnsInFlight]);
    },
  };
}

/** Adds a message of this turn to what is stored and to the tail every later step sends. */
function addToTail(state: TurnState, message: NewMessage): void {
  state.turnMessages.push(message);
  state.tail.push(toModelMessage(message));
  state.tailTokens += message.tokens;
}

/**
 * The step boundary: messages injected into the running turn (`TurnRequest.injections`, e.g. a
 * steered sub-agent) join the tail as user messages before the next model call, so the model
 * sees them in this turn; a tool call already running is never interrupted by them.
 */
function takeInjections(state: TurnState): void {
  const injected = state.request.injections?.();
  if (!injected) return;
  for (const content of injected) {
    if (content.length === 0) continue;
    addToTail(state, {
      role: 'user',
      content,
      tokens: estimateMessageTokens({ role: 'user', content }, state.tokens.count),
    });
  }
}

/** Up to `maxSteps` model calls; a step with tool calls runs them and goes on, one without ends the turn. */
async function runSteps(
  ctx: RuntimeContext,
  tools: ToolRunner,
  state: TurnState,
  timers: TurnTimers,
): Promise<void> {
  const { agent } = state;
  for (let step = 1; step <= agent.maxSteps; step++) {
    takeInjections(state);
    const plan = planBudget({
      windowTokens: state.window.windowTokens,
      systemTokens: state.systemTokens,
      freshTailTokens: state.tailTokens,
      maxOutputTokens: state.maxOutputTokens,
      minOutputTokens: agent.contextBudget.minOutputTokens,
    });
    if (state.historyTokens > plan.historyBudget) {
      ({ kept: state.history, tokens: state.historyTokens } = selectHistory(
        [...state.history].reverse(),
        plan.historyBudget,
      ));
    }
    const budget: ContextBudget = {
      ...state.window,
      systemTokens: state.systemTokens,
      freshTailTokens: state.tailTokens,
      budgetedHistoryTokens: state.historyTokens,
      keptCount: state.history.length,
      assembledInputTokens: state.systemTokens + state.tailTokens + state.historyTokens,
      outputHeadroom: plan.outputHeadroom,
      verdict: plan.verdict,
      tokenCounting: state.tokens.counting,
      ...(state.recallEvidence ? { recallTokens: state.recallEvidence.injectedTokens } : {}),
    };
    state.trajectory.push({ ...state.base, ts: ctx.now(), type: 'context_budget', step, budget });
    if (plan.verdict === 'exhausted') {
      state.endReason = 'context_exhausted';
      state.finishReason = 'length';
      return;
    }

    state.steps = step;
    const { text, calls, finish } = await streamStep(ctx, state, step, plan.outputHeadroom, timers);
    const assistant: NewMessage = {
      role: 'assistant',
      content: text,
      ...(calls.length > 0 ? { toolCalls: calls } : {}),
      tokens: 0,
    };
    assistant.tokens = estimateMessageTokens(toModelMessage(assistant), state.tokens.count);
    addToTail(state, assistant);

    const { own, client } = splitClientCalls(state, calls);
    if (client.length > 0) {
      // The client runs its tools: the agent's own calls of the step run, then the turn ends on the client's.
      await runCalls(tools, state, own, step, timers.signal);
      if (timers.stopCause) return;
      state.clientCalls = client;
      state.finishReason = 'tool_calls';
      state.response = text;
      return;
    }
    if (calls.length > 0) {
      // Every call gets its result, even at the step limit, so the stored history stays valid.
      await runCalls(tools, state, calls, step, timers.signal);
      if (timers.stopCause) return;
      if (step === agent.maxSteps) {
        state.endReason = 'max_steps';
        state.finishReason = 'tool_calls';
        state.response = state.lastText;
      }
      continue;
    }

    state.response = text || state.lastText;
    if (finish === 'length') {
      state.endReason = 'output_starved';
      state.finishReason = 'length';
    } else if (finish === 'content_filter') {
      state.finishReason = 'content_filter';
    } else if (finish === 'error') {
      state.endReason = 'error';
      state.finishReason = 'error';
    } else {
      state.finishReason = 'stop';
    }
    return;
  }
}

/** One model call, streamed: text deltas and tool calls go to `onEvent` as they arrive. */
async function streamStep(
  ctx: RuntimeContext,
  state: TurnState,
  step: number,
  outputHeadroom: number,
  timers: TurnTimers,
): Promise<{ text: string; calls: ModelToolCall[]; finish: ModelFinishReason }> {
  const { request, resolved } = state;
  const startedAt = ctx.now();
  let text = '';
  state.streaming = '';
  const calls: ModelToolCall[] = [];
  let finish: ModelFinishReason = 'other';
  timers.armStall();
  const options = stepOptions(request, step);
  const cap = request.callOptions?.maxOutputTokens;
  for await (const event of state.provider.stream({
    model: resolved.model,
    system: state.system,
    messages: [...state.history.map(toModelMessage), ...state.tail],
    // A caller's `toolChoice: none` offers no tools, which every provider honours.
    tools: options?.toolChoice === 'none' ? [] : state.offered,
    maxOutputTokens: cap === undefined ? outputHeadroom : Math.min(cap, outputHeadroom),
    signal: timers.signal,
    purpose: 'chat',
    ...(options ? { options } : {}),
  })) {
    timers.armStall();
    if (event.type === 'text-delta') {
      text += event.text;
      state.streaming = text;
      request.onEvent?.({ type: 'delta', text: event.text, step });
    } else if (event.type === 'tool-call') {
      calls.push({ toolCallId: event.toolCallId, toolName: event.toolName, input: event.input });
      request.onEvent?.({
        type: 'tool-call',
        toolName: event.toolName,
        toolCallId: event.toolCallId,
        step,
      });
    } else {
      finish = event.finishReason;
      addUsage(state.usage, event.usage);
      ctx.traceCache(state.base, resolved, step, event.usage);
    }
  }
  timers.clearStall();
  state.modelCalls.push({ startedAt, durationMs: ctx.now() - startedAt, step, finish });
  state.streaming = '';
  if (text) state.lastText = text;
  return { text, calls, finish };
}

/** Runs a step's tool calls one after another through the tool runner. */
async function runCalls(
  tools: ToolRunner,
  state: TurnState,
  calls: ModelToolCall[],
  step: number,
  signal: AbortSignal,
): Promise<void> {
  for (const call of calls) {
    const outcome = await tools.run({
      agent: state.agent,
      agentId: state.agentId,
      allowedTools: state.input.allowedTools,
      sessionKey: state.sessionKey,
      traceId: state.traceId,
      memoryTenant: state.input.memoryTenant,
      callerChannel: state.input.callerChannel,
      call,
      step,
      seq: ++state.toolSeq,
      signal,
    });
    if (outcome.ok) state.toolOk++;
    else state.toolFailed++;
    state.trajectory.push(outcome.record);
    const { images } = outcome;
    // A model without image input gets a note of what the tool returned instead of the images.
    const unseen = images !== undefined && !state.capabilities.images;
    addToTail(state, unseen ? withImageNote(outcome.message, images, state.tokens.count) : outcome.message);
    const sent = state.tail.at(-1);
    if (images && !unseen && sent?.role === 'tool') sent.images = images;
    state.request.onEvent?.({
      type: 'tool-result',
      toolName: call.toolName,
      toolCallId: call.toolCallId,
      ok: outcome.ok,
      durationMs: (outcome.record as { durationMs: number }).durationMs,
      step,
    });
  }
}
