import type { EventSink } from '@agentd/contracts';
import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from 'prom-client';
import { RpcStats } from './rpc-stats.js';

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /**
   * Most distinct values one label of one metric takes; later values are counted as `other`, so
   * a caller-chosen string can never grow the series without bound. @default 200
   */
  maxLabelValues?: number | undefined;
}

/** Sizes the daemon reads at scrape time. */
export interface MetricsSources {
  /** Open WebSocket connections. */
  webSocketConnections?: (() => number) | undefined;
  /** Delivery-queue entries by stage (`queued`, `sending`, `failed`, `deadLetter`, …). */
  deliveryQueue?: (() => Promise<Record<string, number>>) | undefined;
}

/** agentd's metrics: a prom-client registry, and the calls and event tap that feed it. */
export interface AgentdMetrics {
  /** The registry (for embedders that add their own metrics). */
  readonly registry: Registry;
  /** `Content-Type` of {@link render}'s text. */
  readonly contentType: string;
  /** The Prometheus text exposition of every metric. Node's default metrics start with the first call. */
  render(): Promise<string>;
  /** One answered JSON-RPC call: `code` 0 for a result, else its error code. */
  rpcCall(method: string, code: number, seconds: number): void;
  /** One delivery attempt to a chat platform. */
  delivery(platform: string, status: string): void;
  /** A tap for the daemon's event bus: turns, tools, tokens, cron fires, webhook jobs. */
  readonly events: EventSink;
  /** Where the gauges read their values at scrape time. */
  useSources(sources: MetricsSources): void;
  /** Memory pressure started (`true`, counted) or ended. */
  memoryPressure(shedding: boolean): void;
}

const TURN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * The period of the timer behind `nodejs_eventloop_lag_*` (Node's `monitorEventLoopDelay`,
 * through prom-client). Each figure is the timer's period plus its delay: an idle loop reads
 * about this much, so the lag itself is the figure less this.
 */
export const EVENT_LOOP_RESOLUTION_MS = 10;

/**
 * Creates the metrics of one daemon in a registry of their own (never prom-client's global one,
 * so two daemons in one process, as in tests, do not collide).
 */
export function createMetrics(options: MetricsOptions = {}): AgentdMetrics {
  const registry = new Registry();
  const limit = options.maxLabelValues ?? 200;
  const seen = new Map<string, Set<string>>();
  /** `value`, or `other` once the metric's label has taken `limit` distinct values. */
  const bounded = (key: string, value: unknown): string => {
    const text = typeof value === 'string' && value !== '' ? value : 'unknown';
    let values = seen.get(key);
    if (!values) {
      values = new Set();
      seen.set(key, values);
    }
    if (values.has(text)) return text;
    if (values.size >= limit) return 'other';
    values.add(text);
    return text;
  };

  const rpc = new RpcStats();
  registry.registerMetric(rpc.requestsMetric() as unknown as Metric);
  registry.registerMetric(rpc.durationMetric() as unknown as Metric);
  const turns = new Counter({
    name: 'agentd_agent_turns_total',
    help: 'Agent turns finished, by agent and end reason',
    labelNames: ['agent', 'end_reason'],
    registers: [registry],
  });
  const turnSeconds = new Histogram({
    name: 'agentd_agent_turn_duration_seconds',
    help: 'Time an agent turn took, by agent',
    labelNames: ['agent'],
    buckets: TURN_BUCKETS,
    registers: [registry],
  });
  const tools = new Counter({
    name: 'agentd_tool_calls_total',
    help: 'Tool calls of agent turns, by tool and outcome (ok, error)',
    labelNames: ['tool', 'outcome'],
    registers: [registry],
  });
  const tokens = new Counter({
    name: 'agentd_provider_tokens_total',
    help: 'Model tokens, by provider and kind (input, output)',
    labelNames: ['provider', 'kind'],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'agentd_channel_deliveries_total',
    help: 'Delivery attempts to chat platforms, by platform and status (delivered, failed)',
    labelNames: ['platform', 'status'],
    registers: [registry],
  });
  const webhookJobs = new Counter({
    name: 'agentd_webhook_jobs_total',
    help: 'Webhook agent jobs finished, by outcome (completed, retry, failed)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const cronFires = new Counter({
    name: 'agentd_cron_fires_total',
    help: 'Cron job fires, by outcome (ok, error, skipped, ...)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const shedding = new Gauge({
    name: 'agentd_memory_shedding',
    help: '1 while new turns are refused because resident memory is above gateway.memoryHighWaterMb',
    registers: [registry],
  });
  const pressure = new Counter({
    name: 'agentd_memory_pressure_total',
    help: 'Times resident memory rose above gateway.memoryHighWaterMb',
    registers: [registry],
  });
  let sources: MetricsSources = {};
  new Gauge({
    name: 'agentd_websocket_connections',
    help: 'Open WebSocket connections',
    registers: [registry],
    collect() {
      this.set(sources.webSocketConnections?.() ?? 0);
    },
  });
  new Gauge({
    name: 'agentd_delivery_queue_depth',
    help: 'Entries of the channel delivery queue, by stage',
    labelNames: ['stage'],
    registers: [registry],
    async collect() {
      const depth = (await sources.deliveryQueue?.()) ?? {};
      for (const [stage, count] of Object.entries(depth))
        this.set({ stage: bounded('queue.stage', stage) }, count);
    },
  });

  const onTurn = (payload: Record<string, unknown>) => {
    const agent = bounded('turn.agent', payload.agentId);
    turns.inc({ agent, end_reason: bounded('turn.end_reason', payload.endReason) });
    if (typeof payload.durationMs === 'number') turnSeconds.observe({ agent }, payload.durationMs / 1000);
    const provider = bounded('tokens.provider', payload.provider);
    if (typeof payload.inputTokens === 'number') tokens.inc({ provider, kind: 'input' }, payload.inputTokens);
    if (typeof payload.outputTokens === 'number')
      tokens.inc({ provider, kind: 'output' }, payload.outputTokens);
    if (Array.isArray(payload.tools)) {
      for (const call of payload.tools as Array<{ name?: unknown; ok?: unknown }>) {
        tools.inc({ tool: bounded('tool.tool', call.name), outcome: call.ok === true ? 'ok' : 'error' });
      }
    }
  };
  let defaultsStarted = false;

  return {
    registry,
    contentType: registry.contentType,
    async render() {
      // Node's defaults (memory, heap, GC, event-loop lag) sample from the first scrape on: an
      // idle daemon that nobody scrapes runs no sampler.
      if (!defaultsStarted) {
        defaultsStarted = true;
        collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_RESOLUTION_MS });
      }
      return registry.metrics();
    },
    rpcCall: (method, code, seconds) => rpc.record(method, code, seconds),
    delivery: (platform, status) =>
      deliveries.inc({
        platform: bounded('delivery.platform', platform),
        status: bounded('delivery.status', status),
      }),
    events: {
      emit(event, payload) {
        if (event === 'agent:turn_completed') onTurn(payload);
        else if (event === 'cron:fired') cronFires.inc({ outcome: bounded('cron.outcome', payload.status) });
        else if (event === 'webhook:job_finished')
          webhookJobs.inc({ outcome: bounded('webhook.outcome', payload.outcome) });
      },
    },
    useSources(next) {
      sources = next;
    },
    memoryPressure(on) {
      shedding.set(on ? 1 : 0);
      if (on) pressure.inc();
    },
  };
}
