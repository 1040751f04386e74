import { eventually, type ReceivedSpan, startOtlpReceiver } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { type AgentdTracing, createTracing, otelTraceId } from './tracing.js';

const attribute = (span: ReceivedSpan | undefined, key: string) =>
  span?.attributes.find((entry) => entry.key === key)?.value;

let tracing: AgentdTracing | undefined;
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>> | undefined;
afterEach(async () => {
  await tracing?.shutdown();
  await receiver?.close();
});

describe('createTracing', () => {
  it('exports an RPC call with its turn, model and tool calls nested, under the agentd trace id', async () => {
    receiver = await startOtlpReceiver();
    tracing = createTracing({ endpoint: receiver.url, headers: { 'x-api-key': 'k1' }, exportDelayMs: 50 });
    const traceId = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';
    const t0 = Date.now();
    const answer = await tracing.rpc(traceId, 'agent.execute', async () => {
      tracing?.span({
        name: 'agent.turn',
        traceId,
        startedAt: t0,
        durationMs: 30,
        ok: true,
        attributes: { 'agentd.agent_id': 'a' },
      });
      tracing?.span({
        name: 'model.call',
        traceId,
        startedAt: t0 + 1,
        durationMs: 10,
        ok: true,
        attributes: { 'gen_ai.system': 'offline' },
      });
      tracing?.span({
        name: 'tool.call',
        traceId,
        startedAt: t0 + 12,
        durationMs: 5,
        ok: false,
        attributes: { 'agentd.tool': 'add' },
      });
      return 'done';
    });
    expect(answer).toBe('done');
    const spans = await eventually(() =>
      receiver && receiver.spans.length >= 4 ? receiver.spans : undefined,
    );
    const byName = (name: string) => spans.find((span) => span.name === name);
    const rpc = byName('rpc agent.execute');
    const turn = byName('agent.turn');
    const model = byName('model.call');
    const tool = byName('tool.call');
    const hex = '1b4e28ba2fa141d2883f0016d3cca427';
    for (const span of [rpc, turn, model, tool]) expect(span?.traceId).toBe(hex);
    expect(rpc?.parentSpanId ?? '').toBe('');
    expect(turn?.parentSpanId).toBe(rpc?.spanId);
    expect(model?.parentSpanId).toBe(turn?.spanId);
    expect(tool?.parentSpanId).toBe(turn?.spanId);
    expect(attribute(rpc, 'rpc.method')).toEqual({ stringValue: 'agent.execute' });
    expect(attribute(turn, 'agentd.trace_id')).toEqual({ stringValue: traceId });
    expect(tool?.status?.code).toBe(2);
    expect(BigInt(model?.endTimeUnixNano ?? 0) - BigInt(model?.startTimeUnixNano ?? 0)).toBe(10_000_000n);
    expect(receiver.headers[0]?.['x-api-key']).toBe('k1');
    expect(JSON.stringify(receiver.resources[0])).toContain('"service.name"');
  });

  it('records a failed call with its JSON-RPC code, and a turn outside any call as a root of its own trace', async () => {
    receiver = await startOtlpReceiver();
    tracing = createTracing({ endpoint: receiver.url, exportDelayMs: 50 });
    await expect(
      tracing.rpc('trace-b', 'cron.add', async () => {
        throw Object.assign(new Error('bad'), { code: -32602 });
      }),
    ).rejects.toThrow('bad');
    tracing.span({
      name: 'agent.turn',
      traceId: 'cron-trace',
      startedAt: Date.now(),
      durationMs: 1,
      ok: true,
      attributes: {},
    });
    const spans = await eventually(() =>
      receiver && receiver.spans.length >= 2 ? receiver.spans : undefined,
    );
    const failed = spans.find((span) => span.name === 'rpc cron.add');
    expect(failed?.status?.code).toBe(2);
    expect(attribute(failed, 'rpc.jsonrpc.error_code')).toEqual({ intValue: -32602 });
    const turn = spans.find((span) => span.name === 'agent.turn');
    expect(turn?.traceId).toBe(otelTraceId('cron-trace'));
    expect(turn?.parentSpanId ?? '').toBe('');
  });
});

describe('otelTraceId', () => {
  it('keeps a UUID as its 32 hex digits and hashes anything else to 32 hex digits', () => {
    expect(otelTraceId('1B4E28BA-2FA1-41D2-883F-0016D3CCA427')).toBe('1b4e28ba2fa141d2883f0016d3cca427');
    expect(otelTraceId('webhook-7')).toMatch(/^[0-9a-f]{32}$/);
    expect(otelTraceId('webhook-7')).toBe(otelTraceId('webhook-7'));
    expect(otelTraceId('0'.repeat(32))).not.toBe('0'.repeat(32));
  });
});
