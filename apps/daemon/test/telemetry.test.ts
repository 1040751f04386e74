import { eventually, type ReceivedSpan, startOtlpReceiver } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonPool, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-telemetry-');
afterEach(() => pool.cleanup());

const attribute = (span: ReceivedSpan | undefined, key: string) =>
  span?.attributes.find((entry) => entry.key === key)?.value;

describe('telemetry.otlp', () => {
  it('exports each call, turn, model call and tool call as spans under the trace id the answer carries', async () => {
    const receiver = pool.closeAfter(await startOtlpReceiver());
    const daemon = await pool.start(pool.tempDir(), {
      config: {
        telemetry: {
          otlp: { endpoint: receiver.url, headers: { 'x-collector-key': '${secret:COLLECTOR_KEY}' } },
        },
        agents: { entries: { calc: { name: 'Calc', tools: ['memory_search'] } } },
      },
      env: { COLLECTOR_KEY: 'collector-secret' },
    });
    const answer = await rpcClient(daemon.url).call<{ traceId: string }>('agent.execute', {
      agentId: 'calc',
      message: '/tool memory_search {"query":"x"}',
    });
    const hex = answer.traceId.replace(/-/g, '');
    const spans = await eventually(() => {
      const mine = receiver.spans.filter((span) => span.traceId === hex);
      return mine.some((span) => span.name === 'tool.call') &&
        mine.some((span) => span.name.startsWith('rpc '))
        ? mine
        : undefined;
    });
    const rpc = spans.find((span) => span.name === 'rpc agent.execute');
    const turn = spans.find((span) => span.name === 'agent.turn');
    const tool = spans.find((span) => span.name === 'tool.call');
    expect(turn?.parentSpanId).toBe(rpc?.spanId);
    expect(tool?.parentSpanId).toBe(turn?.spanId);
    expect(spans.filter((span) => span.name === 'model.call').length).toBeGreaterThanOrEqual(1);
    expect(attribute(turn, 'agentd.agent_id')).toEqual({ stringValue: 'calc' });
    expect(attribute(tool, 'agentd.tool')).toEqual({ stringValue: 'memory_search' });
    expect(receiver.headers.some((headers) => headers['x-collector-key'] === 'collector-secret')).toBe(true);
    // The message text is in no span.
    expect(JSON.stringify(receiver.spans)).not.toContain('"query"');
  });
});
