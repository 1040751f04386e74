/**
 * Per-method call counts by JSON-RPC code and a duration histogram, kept in plain numbers.
 *
 * The gateway answers some 100,000 calls a second; prom-client's `inc` and `observe` hash their
 * label object on every call (about a microsecond for both, a tenth of a call's whole cost), so
 * the hot path counts here and prom-client reads the totals only when Prometheus scrapes, through
 * metric objects that answer prom-client's `get()` in its own shape.
 */

/** The histogram's upper bounds, seconds: from half a millisecond (a ping) to a minute (a turn). */
export const RPC_DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

class MethodStats {
  readonly codes = new Map<number, number>();
  /** Observations at or below each bound (not cumulative until scraped). */
  readonly buckets = new Float64Array(RPC_DURATION_BUCKETS.length);
  sum = 0;
  count = 0;
}

/** A value line of prom-client's metric shape. */
interface ValueLine {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** What prom-client's registry reads of a metric. */
export interface ScrapedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: ValueLine[] }>;
  reset(): void;
}

/** The counts of every call, by method and code. */
export class RpcStats {
  private readonly methods = new Map<string, MethodStats>();

  /** Counts one answered call; `code` is 0 for a result, else the JSON-RPC error code. */
  record(method: string, code: number, seconds: number): void {
    let stats = this.methods.get(method);
    if (!stats) {
      stats = new MethodStats();
      this.methods.set(method, stats);
    }
    stats.codes.set(code, (stats.codes.get(code) ?? 0) + 1);
    stats.sum += seconds;
    stats.count += 1;
    for (let i = 0; i < RPC_DURATION_BUCKETS.length; i++) {
      if (seconds <= (RPC_DURATION_BUCKETS[i] as number)) {
        (stats.buckets[i] as number) += 1;
        break;
      }
    }
  }

  /** `agentd_rpc_requests_total{method,code}`. */
  requestsMetric(): ScrapedMetric {
    const name = 'agentd_rpc_requests_total';
    const help = 'JSON-RPC calls answered, by method and code (0 for a result)';
    return this.metric(name, help, 'counter', () => {
      const values: ValueLine[] = [];
      for (const [method, stats] of this.methods) {
        for (const [code, count] of stats.codes) values.push({ value: count, labels: { method, code } });
      }
      return values;
    });
  }

  /** `agentd_rpc_request_duration_seconds{method}`: a histogram of the time to answer. */
  durationMetric(): ScrapedMetric {
    const name = 'agentd_rpc_request_duration_seconds';
    const help = 'Time from a JSON-RPC call dispatched to its answer, by method';
    return this.metric(name, help, 'histogram', () => {
      const values: ValueLine[] = [];
      for (const [method, stats] of this.methods) {
        let cumulative = 0;
        RPC_DURATION_BUCKETS.forEach((bound, i) => {
          cumulative += stats.buckets[i] as number;
          values.push({ value: cumulative, labels: { method, le: bound }, metricName: `${name}_bucket` });
        });
        values.push({ value: stats.count, labels: { method, le: '+Inf' }, metricName: `${name}_bucket` });
        values.push({ value: stats.sum, labels: { method }, metricName: `${name}_sum` });
        values.push({ value: stats.count, labels: { method }, metricName: `${name}_count` });
      }
      return values;
    });
  }

  private metric(
    name: string,
    help: string,
    type: 'counter' | 'histogram',
    values: () => ValueLine[],
  ): ScrapedMetric {
    return {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => this.methods.clear(),
    };
  }
}
