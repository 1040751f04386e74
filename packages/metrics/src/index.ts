export {
  type AgentdMetrics,
  createMetrics,
  EVENT_LOOP_RESOLUTION_MS,
  type MetricsOptions,
  type MetricsSources,
} from './metrics.js';
export { RPC_DURATION_BUCKETS, RpcStats, type ScrapedMetric } from './rpc-stats.js';
export { type MetricsSection, metricsSectionSchema, parseListenAddress } from './config.js';
