import type { FinishedSpan, SpanSink } from '@agentd/contracts';
import type { TurnState } from './internal/turn-state.js';

/**
 * Hands a finished turn to the span sink: the turn first, then its model calls and tool calls
 * (the sink nests them under the turn by trace id). Attributes are ids, counts and closed enums.
 * A throwing sink is ignored: tracing never fails a turn.
 */
export function reportTurnSpans(
  spans: SpanSink | undefined,
  state: TurnState,
  finishedAt: number,
  outcome: { endReason: string; finishReason: string; inputTokens: number; outputTokens: number },
): void {
  if (!spans) return;
  const { traceId, resolved } = state;
  const all: FinishedSpan[] = [
    {
      name: 'agent.turn',
      traceId,
      startedAt: state.startedAt,
      durationMs: finishedAt - state.startedAt,
      ok: outcome.endReason !== 'error',
      attributes: {
        'agentd.agent_id': state.agentId,
        'agentd.origin': state.origin,
        'agentd.end_reason': outcome.endReason,
        'agentd.finish_reason': outcome.finishReason,
        'agentd.steps': state.steps,
        'gen_ai.usage.input_tokens': outcome.inputTokens,
        'gen_ai.usage.output_tokens': outcome.outputTokens,
      },
    },
  ];
  for (const call of state.modelCalls) {
    all.push({
      name: 'model.call',
      traceId,
      startedAt: call.startedAt,
      durationMs: call.durationMs,
      ok: call.finish !== 'error',
      attributes: {
        'gen_ai.system': resolved.providerId,
        'gen_ai.request.model': resolved.model,
        'gen_ai.response.finish_reason': call.finish,
        'agentd.step': call.step,
      },
    });
  }
  for (const record of state.trajectory) {
    if (record.type !== 'tool_call') continue;
    all.push({
      name: 'tool.call',
      traceId,
      startedAt: record.ts - record.durationMs,
      durationMs: record.durationMs,
      ok: record.ok,
      attributes: { 'agentd.tool': record.toolName, 'agentd.step': record.step },
    });
  }
  for (const span of all) {
    try {
      spans(span);
    } catch {
      // A tracing failure must not fail or slow the turn.
    }
  }
}
