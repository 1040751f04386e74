import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/JSON export carries it. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
  status?: { code?: number; message?: string };
}

/**
 * A collector's OTLP/HTTP receiver as the OTLP specification describes it: `POST /v1/traces` with
 * an `ExportTraceServiceRequest` as JSON (ids hex-encoded), answered with an empty success.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const resources: unknown[] = [];
  const headers: IncomingMessage['headers'][] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      headers.push(req.headers);
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        !req.headers['content-type']?.includes('json')
      ) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ resource: unknown; scopeSpans: Array<{ spans: ReceivedSpan[] }> }>;
      };
      for (const resourceSpans of body.resourceSpans) {
        resources.push(resourceSpans.resource);
        for (const scope of resourceSpans.scopeSpans) spans.push(...scope.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { url, spans, resources, headers, close };
}
