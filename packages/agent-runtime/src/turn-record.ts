import type { ErrorKind } from '@agentd/contracts';
import { costOf } from './billing-service.js';
import { AgentRuntimeError } from './errors.js';
import {
  EVIDENCE_SCHEMA_VERSION,
  isDegraded,
  type SessionIndexRecord,
  TRAJECTORY_DIR,
  trajectoryFileName,
} from '@agentd/evidence';
import { toModelMessage } from './internal/messages.js';
import type { StopCause } from './internal/turn-timers.js';
import type { TurnState } from './internal/turn-state.js';
import { reportTurnSpans } from './turn-spans.js';
import type { RuntimeContext } from './runtime-context.js';
import { parseSessionKey } from './session-key.js';
import type { NewMessage, SessionKind } from './session-store.js';
import { estimateMessageTokens } from './tokens.js';
import { dropDanglingToolCalls, rememberTail } from './turn-history.js';
import type { EndReason, TurnOrigin, TurnResult } from './types.js';

const KIND_BY_ORIGIN: Record<TurnOrigin, SessionKind> = {
  rpc: 'main',
  heartbeat: 'main',
  hook: 'hook',
  cron: 'cron',
  graph: 'graph',
  subagent: 'subagent',
};

const CHANNEL_BY_ORIGIN: Record<TurnOrigin, string> = {
  rpc: 'webchat',
  heartbeat: 'heartbeat',
  hook: 'webhook',
  cron: 'cron',
  graph: 'graph',
  subagent: 'subagent',
};

/**
 * Settles how a turn ended (keeping a partial answer of a stopped turn), then records it:
 * messages, counters and billing in one transaction, the cached tail, the trajectory and
 * session-index lines, the `agent:turn_completed` event and the log line. Rethrows the
 * turn's failure after recording it.
 */
export async function recordTurn(
  ctx: RuntimeContext,
  state: TurnState,
  stopCause: StopCause | undefined,
): Promise<TurnResult> {
  settleEnd(state, stopCause);
  const { session, sessionKey, agentId, resolved, traceId, origin, usage, turnMessages } = state;
  const finishedAt = ctx.now();
  const { costUsd, cacheSavedUsd } = costOf(usage, resolved.prices);
  const kind = session?.kind ?? KIND_BY_ORIGIN[origin];
  const channelType = session?.channelType ?? state.input.channelType ?? CHANNEL_BY_ORIGIN[origin];
  const firstSeq = session?.nextSeq ?? 1;
  const committed = await ctx.store.commitTurn({
    sessionKey,
    agentId,
    channelType,
    kind,
    now: finishedAt,
    messages: turnMessages,
    traceId,
    steps: state.steps,
    provider: resolved.providerId,
    model: resolved.model,
    usage,
    costUsd,
    cacheSavedUsd,
    // Only a finished turn is kept under its key: a failed or cancelled one may be run again.
    ...(state.input.turnKey !== undefined && state.failure === undefined && stopCause === undefined
      ? {
          turnKey: {
            key: state.input.turnKey,
            response: state.response,
            finishReason: state.finishReason,
            endReason: state.endReason,
            steps: state.steps,
          },
        }
      : {}),
  });

  rememberTail(ctx, {
    sessionKey,
    committed,
    cached: state.cached,
    added: turnMessages,
    firstSeq,
    createdAt: finishedAt,
    traceId,
    windowTokens: state.window.windowTokens,
    agent: state.agent,
  });

  const { endReason, finishReason, steps, failure } = state;
  const tokens = {
    input: usage.inputTokens,
    output: usage.outputTokens,
    total: usage.inputTokens + usage.outputTokens,
    cacheRead: usage.cacheReadTokens,
    cacheWrite: usage.cacheWriteTokens,
  };
  const durationMs = finishedAt - state.startedAt;
  const toolCalls = { ok: state.toolOk, failed: state.toolFailed };
  state.trajectory.push({
    ...state.base,
    ts: finishedAt,
    type: 'turn_end',
    endReason,
    finishReason,
    steps,
    durationMs,
    tokens,
    costUsd,
    toolCalls,
  });
  const degraded = isDegraded(endReason);
  const errorCode =
    failure instanceof AgentRuntimeError ? failure.code : failure !== undefined ? 'INTERNAL' : undefined;
  const indexRecord: SessionIndexRecord = {
    v: EVIDENCE_SCHEMA_VERSION,
    ts: finishedAt,
    traceId,
    messageId: `${sessionKey}#${firstSeq}`,
    sessionKey,
    agentId,
    channelType,
    ...(parseSessionKey(sessionKey) ? { chatId: parseSessionKey(sessionKey)?.channelId } : {}),
    origin,
    kind,
    provider: resolved.providerId,
    model: resolved.model,
    outcome: {
      endReason,
      degraded,
      severity: endReason === 'error' ? 'error' : degraded ? 'warning' : 'info',
    },
    finishReason,
    costUsd,
    tokens,
    durationMs,
    steps,
    toolCalls,
    synthetic: state.input.synthetic ?? false,
    trajectoryFile: `${TRAJECTORY_DIR}/${trajectoryFileName(sessionKey)}`,
    ...(errorCode ? { errorCode } : {}),
    ...(state.recallEvidence ? { recall: state.recallEvidence } : {}),
  };
  await Promise.all([
    ctx.evidence.trajectory(sessionKey, state.trajectory),
    ctx.evidence.sessionIndex(indexRecord),
  ]);
  reportTurnSpans(ctx.settings.spans, state, finishedAt, {
    endReason,
    finishReason,
    inputTokens: tokens.input,
    outputTokens: tokens.output,
  });
  ctx.events.emit('agent:turn_completed', {
    agentId,
    sessionKey,
    traceId,
    endReason,
    finishReason,
    steps,
    durationMs,
    inputTokens: tokens.input,
    outputTokens: tokens.output,
    toolCallsOk: state.toolOk,
    toolCallsFailed: state.toolFailed,
    // Names and outcomes of the turn's tool calls, and the provider that served it (metrics).
    tools: toolCallsOf(state.trajectory),
    provider: resolved.providerId,
    origin,
    // Where the turn came in: obs turns these into channel activity.
    channelType,
    ...(indexRecord.chatId ? { chatId: indexRecord.chatId } : {}),
  });

  logTurn(ctx, state, { durationMs, degraded, messageCount: committed.messageCount });
  if (failure !== undefined) throw failure;
  return {
    response: state.response,
    tokensUsed: { input: tokens.input, output: tokens.output, total: tokens.total },
    finishReason,
    sessionKey,
    endReason,
    steps,
    traceId,
    ...(state.clientCalls.length > 0 ? { clientToolCalls: state.clientCalls } : {}),
  };
}

/** Sets the end and finish reasons a timeout, cancel, failure or failed tool calls imply. */
function settleEnd(state: TurnState, stopCause: StopCause | undefined): void {
  if (stopCause) {
    state.endReason = stopCause;
    state.finishReason = stopCause;
    if (state.streaming) state.lastText = state.streaming;
    state.response = state.lastText;
    // Keep a partial answer: the next turn should see what the user already saw streamed.
    const last = state.turnMessages.at(-1);
    if (state.lastText && !(last?.role === 'assistant' && last.content === state.lastText)) {
      const partial: NewMessage = { role: 'assistant', content: state.lastText, tokens: 0 };
      partial.tokens = estimateMessageTokens(toModelMessage(partial));
      state.turnMessages.push(partial);
    }
  } else if (state.failure !== undefined) {
    state.endReason = 'error';
    state.finishReason = 'error';
  }
  if (state.endReason === 'completed' && state.toolFailed > 0) state.endReason = 'completed_with_tool_errors';
  dropDanglingToolCalls(state.turnMessages, state.clientCalls);
}

function logTurn(
  ctx: RuntimeContext,
  state: TurnState,
  outcome: { durationMs: number; degraded: boolean; messageCount: number },
): void {
  const { agentId, traceId, endReason, failure } = state;
  const { durationMs } = outcome;
  if (failure !== undefined) {
    ctx.logger.warn(
      {
        agentId,
        traceId,
        provider: state.resolved.providerId,
        code: failure instanceof AgentRuntimeError ? failure.code : undefined,
        err:
          failure instanceof AgentRuntimeError ? { message: failure.message, code: failure.code } : failure,
        hint: 'check the provider entry (baseUrl, apiKey secret, model) and the provider status',
        errorKind: providerErrorKind(failure),
      },
      'agent turn failed',
    );
  } else if (outcome.degraded) {
    ctx.logger.warn(
      {
        agentId,
        traceId,
        endReason,
        durationMs,
        hint: degradedHint(endReason),
        errorKind:
          endReason === 'timeout'
            ? 'timeout'
            : endReason === 'context_exhausted' || endReason === 'output_starved'
              ? 'resource'
              : 'dependency',
      },
      'agent turn degraded',
    );
  } else {
    ctx.logger.debug(
      { agentId, traceId, endReason, durationMs, steps: state.steps, messages: outcome.messageCount },
      'agent turn',
    );
  }
}

function providerErrorKind(error: unknown): ErrorKind {
  if (error instanceof AgentRuntimeError) {
    if (error.code === 'PROVIDER_AUTH') return 'auth';
    if (error.code === 'PROVIDER_TIMEOUT') return 'timeout';
    if (error.code === 'SECRET_MISSING' || error.code === 'PROVIDER_NOT_FOUND') return 'config';
    if (error.code === 'PROVIDER_RATE_LIMITED' || error.code === 'PROVIDER_ERROR') return 'dependency';
  }
  return 'internal';
}

function degradedHint(endReason: EndReason): string {
  switch (endReason) {
    case 'context_exhausted':
      return 'the system prompt, tools and message do not fit the context window; shorten them or use a larger model';
    case 'output_starved':
      return 'the reply was cut at the output limit; raise maxOutputTokens of the agent or provider';
    case 'timeout':
      return 'the model stalled or the turn hit its makespan; check the provider or raise timeouts';
    case 'max_steps':
      return 'the agent was still calling tools at its step limit; raise maxSteps or check the tools';
    case 'completed_with_tool_errors':
      return 'some tool calls failed; see the trajectory records of the session';
    default:
      return 'see the session-index record of the turn';
  }
}

/** The tool calls of a turn's trajectory, in order: name and whether each succeeded. */
export function toolCallsOf(trajectory: TurnState['trajectory']): Array<{ name: string; ok: boolean }> {
  return trajectory.flatMap((record) =>
    record.type === 'tool_call' ? [{ name: record.toolName, ok: record.ok }] : [],
  );
}
