import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request as httpRequest,
  type ServerResponse,
} from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { BrowserLogger } from '../logger.js';
import type { AddressPolicy } from './address-policy.js';

/** Header the proxy sets on the answers it makes up for refused requests. */
export const BLOCKED_HEADER = 'x-agentd-blocked';

/** A refused request, remembered so a failed navigation can say what was refused. */
export interface BlockRecord {
  host: string;
  port: number;
  reason: string;
  at: number;
}

/** The running proxy. */
export interface GuardProxy {
  /** `http://127.0.0.1:<port>`, for Chromium's `--proxy-server`. */
  readonly url: string;
  /** The most recent refusal of `host` (any port when `port` is omitted), if any. */
  lastBlock(host: string, port?: number): BlockRecord | undefined;
  /** The most recent refusal of any host since `sinceMs`. */
  latestBlockSince(sinceMs: number): BlockRecord | undefined;
  close(): Promise<void>;
}

// Headers that describe one hop, never forwarded (RFC 9110 section 7.6.1).
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !hopByHop.has(name) && !named.has(name)) out[name] = value;
  }
  return out;
}

function splitAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const port = Number(match[2]);
  return port > 0 && port < 65536 ? { host: match[1] as string, port } : undefined;
}

/**
 * An HTTP forward proxy bound to 127.0.0.1 that Chromium sends every request through while
 * private networks are off. Each new upstream connection resolves the host once, checks
 * every address with the policy and connects to the checked address itself, so neither a
 * redirect hop nor a DNS answer that changes between check and use (rebinding) can reach
 * a refused address. HTTPS and WebSockets arrive as CONNECT tunnels; the proxy never sees
 * inside them and needs no certificates.
 */
export async function startGuardProxy(options: {
  policy: AddressPolicy;
  logger: BrowserLogger;
  now: () => number;
  idleTimeoutMs?: number;
}): Promise<GuardProxy> {
  const { policy, logger, now } = options;
  const idleTimeoutMs = options.idleTimeoutMs ?? 120_000;
  const blocks: BlockRecord[] = [];
  const sockets = new Set<Socket>();
  // Upstream connections are pooled per resolved address, which is what the check approved.
  const agent = new Agent({ keepAlive: true, maxSockets: 64, timeout: idleTimeoutMs });

  const remember = (host: string, port: number, reason: string) => {
    blocks.push({ host, port, reason, at: now() });
    if (blocks.length > 100) blocks.shift();
    logger.debug({ step: 'proxy', reason }, 'browser request refused');
  };

  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('agentd browser proxy: absolute URL expected');
      return;
    }
    if (target.protocol !== 'http:') {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('agentd browser proxy: http only');
      return;
    }
    const port = target.port ? Number(target.port) : 80;
    const decision = await policy.check(target.hostname, port);
    if (!decision.allowed) {
      remember(target.hostname, port, decision.reason);
      res
        .writeHead(decision.unresolved ? 502 : 403, {
          'content-type': 'text/plain; charset=utf-8',
          [BLOCKED_HEADER]: encodeURIComponent(decision.reason),
        })
        .end(`Blocked by agentd: ${decision.reason}\n`);
      return;
    }
    const upstream = httpRequest({
      host: decision.address,
      port,
      method: req.method,
      path: `${target.pathname}${target.search}`,
      headers: { ...endToEnd(req.headers), host: target.host },
      agent,
      timeout: idleTimeoutMs,
    });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
      answer.pipe(res);
    });
    upstream.on('timeout', () => upstream.destroy(new Error('upstream idle')));
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end('upstream failed\n');
      else res.destroy();
    });
    req.pipe(upstream);
  };

  const onConnect = async (req: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => client.destroy());
    const authority = splitAuthority(req.url ?? '');
    if (!authority) {
      client.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      return;
    }
    const decision = await policy.check(authority.host, authority.port);
    if (!decision.allowed) {
      remember(authority.host, authority.port, decision.reason);
      client.end(
        `HTTP/1.1 403 Forbidden\r\n${BLOCKED_HEADER}: ${encodeURIComponent(decision.reason)}\r\n` +
          'Connection: close\r\nContent-Length: 0\r\n\r\n',
      );
      return;
    }
    const upstream = connect({ host: decision.address, port: authority.port });
    sockets.add(upstream);
    upstream.setTimeout(idleTimeoutMs, () => upstream.destroy());
    client.setTimeout(idleTimeoutMs, () => client.destroy());
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
    client.on('close', () => upstream.destroy());
    upstream.on('error', () => {
      if (!client.destroyed && upstream.connecting) {
        client.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      }
      upstream.destroy();
    });
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
  };

  const server = createServer((req, res) => void onRequest(req, res));
  server.on('connect', (req, socket, head) => void onConnect(req, socket as Socket, head));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    lastBlock(host, blockPort) {
      for (let index = blocks.length - 1; index >= 0; index--) {
        const record = blocks[index] as BlockRecord;
        if (record.host === host && (blockPort === undefined || record.port === blockPort)) return record;
      }
      return undefined;
    },
    latestBlockSince(sinceMs) {
      const record = blocks[blocks.length - 1];
      return record && record.at >= sinceMs ? record : undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
