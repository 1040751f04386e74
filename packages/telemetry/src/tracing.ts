import { createHash, randomBytes } from 'node:crypto';
import type { FinishedSpan } from '@agentd/contracts';
import { ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type IdGenerator } from '@opentelemetry/sdk-trace-base';

/** Options of {@link createTracing}. */
export interface TracingOptions {
  /** The OTLP/HTTP traces endpoint. */
  endpoint: string;
  /** Extra request headers, secrets already resolved. */
  headers?: Record<string, string> | undefined;
  /** @default 'agentd' */
  serviceName?: string | undefined;
  /** The `service.version` resource attribute. */
  serviceVersion?: string | undefined;
  /** Longest the exporter waits between batches, ms. @default 2000 */
  exportDelayMs?: number | undefined;
}

/** Spans of one daemon, exported over OTLP/HTTP. */
export interface AgentdTracing {
  /**
   * Runs one JSON-RPC call inside its span (kind server). The span's trace id is the call's
   * agentd `traceId`; spans of work the call runs (its turn) become its children. Answers what
   * `run` answered, a value or a promise.
   */
  rpc<T>(traceId: string, method: string, run: () => T): T;
  /** A finished span of a turn, model call, tool call, webhook job or delivery. */
  span(span: FinishedSpan): void;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

/**
 * agentd's trace id as an OpenTelemetry one (32 lowercase hex digits): a UUID without its dashes,
 * 32 hex digits as they are, anything else hashed (so it still groups what shares it).
 */
export function otelTraceId(traceId: string): string {
  const compact = traceId.replace(/-/g, '').toLowerCase();
  if (/^[0-9a-f]{32}$/.test(compact) && !/^0+$/.test(compact)) return compact;
  return createHash('sha256').update(traceId).digest('hex').slice(0, 32);
}

/** Ids of new spans; a root span takes the trace id set just before it starts (synchronously). */
class AgentdIds implements IdGenerator {
  next: string | undefined;
  generateTraceId(): string {
    const id = this.next ?? randomBytes(16).toString('hex');
    this.next = undefined;
    return id;
  }
  generateSpanId(): string {
    return randomBytes(8).toString('hex');
  }
}

/** Creates the tracer provider and exporter. Nothing of OpenTelemetry is global: two daemons stay apart. */
export function createTracing(options: TracingOptions): AgentdTracing {
  const ids = new AgentdIds();
  const exporter = new OTLPTraceExporter({ url: options.endpoint, headers: options.headers ?? {} });
  const provider = new BasicTracerProvider({
    idGenerator: ids,
    resource: resourceFromAttributes({
      'service.name': options.serviceName ?? 'agentd',
      ...(options.serviceVersion ? { 'service.version': options.serviceVersion } : {}),
    }),
    spanProcessors: [
      new BatchSpanProcessor(exporter, { scheduledDelayMillis: options.exportDelayMs ?? 2000 }),
    ],
  });
  const tracer = provider.getTracer('@agentd/telemetry');
  /** Live RPC spans by agentd trace id: the parents of the work their calls run. */
  const live = new Map<string, Span>();
  /** The turn span of each trace, while its model and tool calls are handed over after it. */
  let lastTurn: { traceId: string; span: Span } | undefined;

  const startRoot = (traceId: string, name: string, startTime: number, kind: SpanKind): Span => {
    const parent = live.get(traceId);
    if (parent) return tracer.startSpan(name, { startTime, kind }, trace.setSpan(ROOT_CONTEXT, parent));
    ids.next = otelTraceId(traceId);
    return tracer.startSpan(name, { startTime, kind }, ROOT_CONTEXT);
  };

  return {
    rpc<T>(traceId: string, method: string, run: () => T): T {
      const span = startRoot(traceId, `rpc ${method}`, Date.now(), SpanKind.SERVER);
      span.setAttributes({ 'rpc.system': 'jsonrpc', 'rpc.method': method, 'agentd.trace_id': traceId });
      live.set(traceId, span);
      const end = (error?: unknown) => {
        if (live.get(traceId) === span) live.delete(traceId);
        if (error !== undefined) {
          const code = (error as { code?: unknown }).code;
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: typeof code === 'number' ? String(code) : 'error',
          });
          if (typeof code === 'number') span.setAttribute('rpc.jsonrpc.error_code', code);
        }
        span.end();
      };
      let result: T;
      try {
        result = run();
      } catch (error) {
        end(error);
        throw error;
      }
      if (result instanceof Promise) {
        return result.then(
          (value) => {
            end();
            return value;
          },
          (error: unknown) => {
            end(error);
            throw error;
          },
        ) as T;
      }
      end();
      return result;
    },
    span(finished) {
      const kind =
        finished.name === 'model.call' || finished.name === 'channel.delivery'
          ? SpanKind.CLIENT
          : SpanKind.INTERNAL;
      let span: Span;
      if (finished.name === 'model.call' || finished.name === 'tool.call') {
        // Children of the turn handed over just before them (reportTurnSpans sends the turn first).
        const parent = lastTurn?.traceId === finished.traceId ? lastTurn.span : undefined;
        span = parent
          ? tracer.startSpan(
              finished.name,
              { startTime: finished.startedAt, kind },
              trace.setSpan(ROOT_CONTEXT, parent),
            )
          : startRoot(finished.traceId, finished.name, finished.startedAt, kind);
      } else {
        span = startRoot(finished.traceId, finished.name, finished.startedAt, kind);
        if (finished.name === 'agent.turn') lastTurn = { traceId: finished.traceId, span };
      }
      span.setAttributes({ ...finished.attributes, 'agentd.trace_id': finished.traceId });
      if (!finished.ok) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end(finished.startedAt + finished.durationMs);
    },
    async shutdown() {
      live.clear();
      lastTurn = undefined;
      await provider.shutdown();
    },
  };
}
