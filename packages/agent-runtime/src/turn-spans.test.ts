import type { FinishedSpan } from '@agentd/contracts';
import { describe, expect, it } from 'vitest';
import { calcAgentOptions, runAddTurn, startRuntime } from '../test/helpers.js';

describe('reportTurnSpans', () => {
  it('hands the turn, each model call and each tool call to the span sink with the turn trace id', async () => {
    const spans: FinishedSpan[] = [];
    const t = await startRuntime({ ...calcAgentOptions, spans: (span) => spans.push(span) });
    const result = await runAddTurn(t, 'default:test:spans');
    expect(spans.map((span) => span.name)).toEqual(['agent.turn', 'model.call', 'model.call', 'tool.call']);
    for (const span of spans) {
      expect(span.traceId).toBe(result.traceId);
      expect(span.durationMs).toBeGreaterThanOrEqual(0);
    }
    const [turn, firstModel, , tool] = spans;
    expect(turn).toMatchObject({
      ok: true,
      attributes: { 'agentd.agent_id': 'calc', 'agentd.end_reason': 'completed', 'agentd.steps': 2 },
    });
    expect(firstModel?.attributes).toMatchObject({ 'gen_ai.system': 'offline', 'agentd.step': 1 });
    expect(tool).toMatchObject({ ok: true, attributes: { 'agentd.tool': 'add', 'agentd.step': 1 } });
    // Children lie within the turn.
    for (const child of spans.slice(1)) {
      expect(child.startedAt).toBeGreaterThanOrEqual(turn?.startedAt ?? 0);
      expect(child.startedAt + child.durationMs).toBeLessThanOrEqual(
        (turn?.startedAt ?? 0) + (turn?.durationMs ?? 0),
      );
    }
    // No message text in any attribute.
    expect(JSON.stringify(spans)).not.toContain('"a":2');
  });

  it('never fails a turn when the sink throws', async () => {
    const t = await startRuntime({
      ...calcAgentOptions,
      spans: () => {
        throw new Error('exporter down');
      },
    });
    expect((await runAddTurn(t, 'default:test:throws')).endReason).toBe('completed');
  });
});
