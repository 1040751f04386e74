import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { extractBearer, hasScope, type Identity, type Scope } from '@agentd/auth-scopes';
import type { AgentdMetrics } from '@agentd/metrics';

/** Answers a scrape: the text exposition, or 405 for anything but GET and HEAD. */
async function scrape(metrics: AgentdMetrics, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
    return;
  }
  const body = await metrics.render();
  res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * `GET /metrics` on the gateway: an `admin` (or `*`) token as a bearer header, the same tokens as
 * `/rpc`. 401 without a valid token, 403 for a token without the scope (each an audit event
 * through `authenticate`'s caller).
 */
export function gatewayMetricsHandler(options: {
  metrics: AgentdMetrics;
  authenticate: (presented: string | undefined) => Identity | null;
  onDenied: (reason: 'missing_token' | 'invalid_token' | 'scope', identity?: Identity) => void;
}): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const presented = extractBearer(req, { allowQuery: false });
    const identity = options.authenticate(presented);
    if (!identity) {
      options.onDenied(presented ? 'invalid_token' : 'missing_token');
      res
        .writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'text/plain' })
        .end('an admin token is needed: Authorization: Bearer <token> (or set metrics.listen)\n');
      return;
    }
    if (!hasScope(identity.scopes as readonly Scope[], 'admin')) {
      options.onDenied('scope', identity);
      res.writeHead(403, { 'content-type': 'text/plain' }).end('the token lacks the admin scope\n');
      return;
    }
    await scrape(options.metrics, req, res);
  };
}

/**
 * `metrics.listen`: a separate listener serving only `GET /metrics`, without a token (bind it to
 * a private address). Resolves once listening, to the server.
 */
export async function listenForMetrics(metrics: AgentdMetrics, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('only /metrics is served here\n');
      return;
    }
    scrape(metrics, req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
