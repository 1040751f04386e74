import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { seriesValue } from '@agentd/test-support';
import { createMetrics } from './metrics.js';

const hasPromtool = spawnSync('promtool', ['--version']).status === 0;

describe('createMetrics', () => {
  it('counts calls, turns, tools, tokens, deliveries, webhook jobs and cron fires', async () => {
    const metrics = createMetrics();
    metrics.rpcCall('system.ping', 0, 0.0004);
    metrics.rpcCall('system.ping', 0, 0.003);
    metrics.rpcCall('agent.execute', -32602, 0.002);
    metrics.events.emit('agent:turn_completed', {
      agentId: 'default',
      endReason: 'stop',
      durationMs: 1500,
      provider: 'offline',
      inputTokens: 12,
      outputTokens: 30,
      tools: [
        { name: 'memory_search', ok: true },
        { name: 'memory_search', ok: false },
      ],
    });
    metrics.events.emit('cron:fired', { status: 'ok' });
    metrics.events.emit('webhook:job_finished', { outcome: 'completed' });
    metrics.events.emit('memory:recalled', { count: 3 });
    metrics.delivery('telegram', 'delivered');
    metrics.useSources({
      webSocketConnections: () => 7,
      deliveryQueue: async () => ({ queued: 4, sending: 1 }),
    });
    const text = await metrics.render();
    expect(seriesValue(text, 'agentd_rpc_requests_total{method="system.ping",code="0"}')).toBe(2);
    expect(seriesValue(text, 'agentd_rpc_requests_total{method="agent.execute",code="-32602"}')).toBe(1);
    expect(
      seriesValue(text, 'agentd_rpc_request_duration_seconds_bucket{method="system.ping",le="0.0005"}'),
    ).toBe(1);
    expect(
      seriesValue(text, 'agentd_rpc_request_duration_seconds_bucket{method="system.ping",le="0.005"}'),
    ).toBe(2);
    expect(seriesValue(text, 'agentd_rpc_request_duration_seconds_count{method="system.ping"}')).toBe(2);
    expect(seriesValue(text, 'agentd_agent_turns_total{agent="default",end_reason="stop"}')).toBe(1);
    expect(seriesValue(text, 'agentd_agent_turn_duration_seconds_bucket{le="2.5",agent="default"}')).toBe(1);
    expect(seriesValue(text, 'agentd_tool_calls_total{tool="memory_search",outcome="ok"}')).toBe(1);
    expect(seriesValue(text, 'agentd_tool_calls_total{tool="memory_search",outcome="error"}')).toBe(1);
    expect(seriesValue(text, 'agentd_provider_tokens_total{provider="offline",kind="output"}')).toBe(30);
    expect(seriesValue(text, 'agentd_channel_deliveries_total{platform="telegram",status="delivered"}')).toBe(
      1,
    );
    expect(seriesValue(text, 'agentd_webhook_jobs_total{outcome="completed"}')).toBe(1);
    expect(seriesValue(text, 'agentd_cron_fires_total{outcome="ok"}')).toBe(1);
    expect(seriesValue(text, 'agentd_websocket_connections')).toBe(7);
    expect(seriesValue(text, 'agentd_delivery_queue_depth{stage="queued"}')).toBe(4);
    // Node's defaults, started by the first scrape.
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it('keeps each label to a bounded set of values: the rest count as other', async () => {
    const metrics = createMetrics({ maxLabelValues: 3 });
    const tools = Array.from({ length: 10 }, (_, i) => ({ name: `tool_${i}`, ok: true }));
    metrics.events.emit('agent:turn_completed', { agentId: 'a', endReason: 'stop', tools });
    const text = await metrics.render();
    expect(text.match(/^agentd_tool_calls_total\{/gm)).toHaveLength(4);
    expect(seriesValue(text, 'agentd_tool_calls_total{tool="other",outcome="ok"}')).toBe(7);
  });

  it('keeps two daemons in one process apart', async () => {
    const first = createMetrics();
    const second = createMetrics();
    first.rpcCall('system.ping', 0, 0.001);
    expect(await second.render()).not.toContain('method="system.ping"');
  });

  it.runIf(hasPromtool)('renders text that promtool check metrics accepts', async () => {
    const metrics = createMetrics();
    metrics.rpcCall('system.ping', 0, 0.001);
    metrics.events.emit('agent:turn_completed', {
      agentId: 'a',
      endReason: 'stop',
      durationMs: 5,
      provider: 'p',
      inputTokens: 1,
      outputTokens: 1,
      tools: [],
    });
    const result = spawnSync('promtool', ['check', 'metrics'], {
      input: await metrics.render(),
      encoding: 'utf8',
    });
    // promtool lints three of prom-client's own default gauges for their names (they end in
    // _total); those names are the library's, and dashboards depend on them. Nothing else may be
    // reported, and nothing may fail to parse (exit code 1).
    const problems = (result.stdout + result.stderr).split('\n').filter(Boolean);
    const known = /^nodejs_active_(handles|requests|resources)_total non-counter/;
    expect(problems.filter((line) => !known.test(line))).toEqual([]);
    expect([0, 3]).toContain(result.status);
  });
});
