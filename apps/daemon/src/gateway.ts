import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AgentRuntime } from '@agentd/agent-runtime';
import {
  extractBearer,
  hasScope,
  type Identity,
  type Scope,
  SlidingWindowLimiter,
  type TokenStore,
} from '@agentd/auth-scopes';
import { type RootLogger, runWithTrace } from '@agentd/logging';
import {
  type Authorize,
  createDispatcher,
  createHttpRpcHandler,
  createSseRpcHandler,
  createWebSocketTransport,
  type Dispatcher,
  type MethodContext,
  type MethodRegistry,
  type WebSocketTransport,
} from '@agentd/rpc-core';
import type { WebhookService } from '@agentd/webhooks-hmac';
import type { MemoryStore } from '@agentd/memory-store';
import type { AgentdMetrics } from '@agentd/metrics';
import type { AgentdTracing } from '@agentd/telemetry/tracing';
import { createMcpHttpHandler, type McpHttpHandler } from '@agentd/mcp';
import { createOpenAiApiHandler, OpenAiApiError, type OpenAiApiHandler } from '@agentd/openai-api';
import { runAsActor, type SecurityAudit } from '@agentd/evidence/audit';
import type { ConsoleFiles } from './console-files.js';
import type { GatewayPool } from './gateway-pool.js';
import type { DaemonConfig } from './config-schema.js';
import { chatStreamMethod } from './methods/chat-stream.js';
import { gatewayCallAs, mcpDefaultSessionKey } from './methods/mcp.js';
import { openAiBackend } from './methods/openai.js';
import { tenantGuard } from './methods/tenancy.js';
import { VERSION } from './version.js';

/** The request paths of one gateway configuration; `gateway.restart` builds a new one. */
export interface Gateway {
  dispatcher: Dispatcher;
  ws: WebSocketTransport;
  /** `POST /rpc` */
  http: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
  /** `GET /api/chat/stream` */
  chatStream: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** `/v1/*`, while `openaiApi.enabled` is true. */
  openai: OpenAiApiHandler | undefined;
  /** `/mcp` (Streamable HTTP), while `mcp.serve.enabled` is true. */
  mcp: McpHttpHandler | undefined;
}

/** What every gateway is built from. */
export interface GatewayDeps {
  registry: MethodRegistry;
  tokens: TokenStore;
  runtime: AgentRuntime;
  /** Denied authentications and scope checks become security audit events. */
  audit: SecurityAudit;
  logger: RootLogger;
  /** The memory store while `memory.enabled` is true (`/v1/embeddings`). */
  memoryStore: () => MemoryStore | undefined;
  /** Counts every answered call, while `metrics.enabled`. */
  metrics?: AgentdMetrics | undefined;
  /** Each call becomes a span, while `telemetry.otlp.endpoint` is set. */
  tracing?: (() => AgentdTracing | undefined) | undefined;
  /** Throws the overloaded error while memory is above its high-water mark (calls that start turns). */
  admitTurn?: (() => void) | undefined;
  /** The share of each rate limit allowed now (tightened under memory pressure). @default 1 */
  limitShare?: (() => number) | undefined;
}

/** The methods that start an agent turn: refused first under memory pressure. */
const TURN_METHODS = new Set([
  'agent.execute',
  'agent.stream',
  'session.send',
  'session.spawn',
  'graph.execute',
  'heartbeat.trigger',
  'cron.run',
  // The chat stream and `/v1` chat completions run through the same dispatcher.
  'http.chatStream',
  'openai.chatCompletions',
]);

/**
 * Returns the builder of the daemon's gateway: one dispatcher (scope check with audit, trace
 * context, admin calls attributed to their token) behind the WebSocket, `POST /rpc` and the
 * chat stream, so all three authenticate, authorise and map errors the same way.
 */
export function gatewayBuilder(deps: GatewayDeps): (config: DaemonConfig) => Gateway {
  const { registry, tokens, logger } = deps;
  const audit = deps.audit.emit;
  // Denials carry the transport and the token id (as `caller`), never the presented secret.
  const authenticateVia = (transport: 'ws' | 'http', allowQuery: boolean) => {
    return (req: IncomingMessage): Identity | null => {
      const presented = extractBearer(req, { allowQuery });
      const identity = tokens.authenticate(presented);
      if (!identity) {
        audit({
          kind: 'auth',
          classification: 'denied',
          outcome: 'failure',
          severity: presented ? 'medium' : 'low',
          transport,
          reason: presented ? 'invalid_token' : 'missing_token',
        });
      }
      return identity;
    };
  };
  const authenticateWs = authenticateVia('ws', true);
  const authenticateHttp = authenticateVia('http', false);
  // EventSource cannot set headers, so the stream also takes `?token=`.
  const authenticateStream = authenticateVia('http', true);
  const tenants = tenantGuard(deps.audit);
  const authorizeScope: Authorize = (identity, scope) => {
    // Each call renews a session token (the console's); one that expired while its socket
    // stayed open is refused, and dropping it closes that socket.
    if (!tokens.touch(identity.tokenId)) {
      audit({
        kind: 'auth',
        classification: 'denied',
        outcome: 'failure',
        severity: 'low',
        caller: identity.tokenId,
        reason: 'expired_token',
      });
      return false;
    }
    const allowed = hasScope(identity.scopes as readonly Scope[], scope);
    if (!allowed) {
      audit({
        kind: 'scope',
        classification: 'denied',
        outcome: 'failure',
        severity: 'medium',
        caller: identity.tokenId,
        requiredScope: scope,
      });
    }
    return allowed;
  };

  // `/v1`: the same bearer tokens (header only), scope and tenancy checks as `/rpc`.
  const openAiHandler = (cfg: DaemonConfig, dispatcher: Dispatcher): OpenAiApiHandler | undefined => {
    const section = cfg.openaiApi;
    if (!section.enabled) return undefined;
    const { maxRequests, windowMs } = section.rateLimit;
    return createOpenAiApiHandler({
      authenticate: authenticateHttp,
      backend: openAiBackend({ dispatcher, runtime: deps.runtime, memoryStore: deps.memoryStore, tenants }),
      callerKey: (identity) => identity.tokenId,
      maxBodyBytes: section.maxBodyBytes,
      ...(maxRequests > 0
        ? {
            createRateLimiter: () =>
              new SlidingWindowLimiter({ maxEvents: maxRequests, windowMs, share: deps.limitShare }),
          }
        : {}),
      retryAfterSeconds: Math.ceil(windowMs / 1000),
      logger: logger.module('openai'),
    });
  };

  // `/mcp`: every tool is a gateway call with the request's identity (the same scopes and audit).
  const mcpHandler = (cfg: DaemonConfig, dispatcher: Dispatcher): McpHttpHandler | undefined => {
    if (!cfg.mcp.serve.enabled) return undefined;
    return createMcpHttpHandler({
      authenticate: authenticateHttp,
      callFor: (identity) => gatewayCallAs(dispatcher, identity),
      defaultSessionKey: mcpDefaultSessionKey,
      allowedOrigins: cfg.mcp.serve.allowedOrigins,
      maxBodyBytes: cfg.mcp.serve.maxBodyBytes,
      maxDepth: cfg.gateway.maxParamsDepth,
      server: { info: { name: 'agentd', version: VERSION } },
      logger: logger.module('mcp'),
    });
  };

  // The call's trace context (its trace id in every log line); admin calls also carry their caller.
  const inTrace = (ctx: MethodContext, run: () => unknown): unknown =>
    runWithTrace(
      {
        traceId: ctx.traceId,
        connectionId: ctx.connectionId,
        clientId: ctx.clientId,
        method: ctx.method,
        requestId: ctx.requestId,
      },
      // Admin calls carry their caller, so config they persist (tokens, agents) is attributed.
      registry.get(ctx.method)?.scope === 'admin'
        ? () => runAsActor({ method: ctx.method, tokenId: ctx.identity.tokenId }, run)
        : run,
    );

  return (cfg) => {
    const gatewayLog = logger.module('gateway');
    const dispatcher = createDispatcher({
      registry,
      authorize: authorizeScope,
      logger: gatewayLog,
      maxBatchSize: cfg.gateway.maxBatchSize,
      maxParamsDepth: cfg.gateway.maxParamsDepth,
      maxMessageBytes: cfg.gateway.wsMaxMessageBytes,
      ...(deps.metrics ? { observe: deps.metrics.rpcCall } : {}),
      wrap: (ctx, run) => {
        if (deps.admitTurn && TURN_METHODS.has(ctx.method)) deps.admitTurn();
        const tracing = deps.tracing?.();
        return tracing ? tracing.rpc(ctx.traceId, ctx.method, () => inTrace(ctx, run)) : inTrace(ctx, run);
      },
    });
    const { maxMessages, windowMs } = cfg.gateway.wsMessageRateLimit;
    const ws = createWebSocketTransport({
      dispatcher,
      authenticate: authenticateWs,
      heartbeatMs: cfg.gateway.wsHeartbeatMs,
      maxMessageBytes: cfg.gateway.wsMaxMessageBytes,
      maxBufferedBytes: cfg.gateway.wsMaxBufferedBytes,
      slowClientTimeoutMs: cfg.gateway.wsSlowClientTimeoutMs,
      logger: gatewayLog,
      // maxMessages 0 turns the limiter off (benchmarks, trusted local clients).
      ...(maxMessages > 0
        ? {
            createRateLimiter: () =>
              new SlidingWindowLimiter({ maxEvents: maxMessages, windowMs, share: deps.limitShare }),
          }
        : {}),
    });
    const http = createHttpRpcHandler({
      dispatcher,
      authenticate: authenticateHttp,
      logger: gatewayLog,
      maxBodyBytes: cfg.gateway.wsMaxMessageBytes,
    });
    const chatStream = createSseRpcHandler({
      dispatcher,
      authenticate: authenticateStream,
      method: (open) => chatStreamMethod({ runtime: deps.runtime, tenants }, open),
      logger: gatewayLog,
    });
    return {
      dispatcher,
      ws,
      http,
      chatStream,
      openai: openAiHandler(cfg, dispatcher),
      mcp: mcpHandler(cfg, dispatcher),
    };
  };
}

/** `/v1/*` while the OpenAI-compatible API is off: an OpenAI-style 404 saying how to turn it on. */
function openAiOff(res: ServerResponse): void {
  const body = JSON.stringify(
    new OpenAiApiError(
      404,
      'invalid_request_error',
      'api_disabled',
      'The OpenAI-compatible API is off: set openaiApi.enabled to true in config.yaml',
    ).toBody(),
  );
  res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end(body);
}

/** Whether the daemon has finished starting; requests that arrive before wait for it. */
export interface Readiness {
  readonly ready: boolean;
  /** Resolves when the start completes; rejects when it fails (the waiting requests are dropped). */
  readonly whenReady: Promise<void>;
}

/** A {@link Readiness} the start opens when it is done, or fails when it stops part way. */
export function startGate(): Readiness & { open(): void; fail(): void } {
  let ready = false;
  let open = (): void => {};
  let fail = (): void => {};
  const whenReady = new Promise<void>((resolve, reject) => {
    open = () => {
      ready = true;
      resolve();
    };
    fail = () => reject(new Error('the daemon stopped before it was ready'));
  });
  // Nobody may be waiting when a start fails; the rejection is expected then.
  whenReady.catch(() => undefined);
  return {
    get ready() {
      return ready;
    },
    whenReady,
    open: () => open(),
    fail: () => fail(),
  };
}

/**
 * The daemon's HTTP server: `/rpc`, `/api/chat/stream` and the `/ws` upgrade go to the newest
 * gateway generation (changed limits and `gateway.restart` build one), `/health` answers, hook
 * paths go to the webhooks, and `/` with `/assets/` serve the web console. Until `readiness` says the start is complete (the first-start admin
 * token stored, every service started), `/health` answers 503 and every other request and
 * upgrade waits, so an early caller is never refused a token that is about to work.
 */
export function createDaemonServer(routes: {
  gateway: GatewayPool<Gateway>;
  hooks: Pick<WebhookService, 'matches' | 'handle'>;
  readiness: Readiness;
  /** Inbound chat-platform callbacks under `/channels/<platform>/…`. */
  channels?: {
    matches(path: string): boolean;
    handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  };
  /** The web console's files at `/` and `/assets/` (GET only). */
  console?: ConsoleFiles;
  /** `POST /console/login` (a one-time code of `agentd console` for a token) and `POST /console/logout`. */
  consoleLogin?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  /** `GET /metrics` (an admin token), while `metrics.enabled`. */
  metrics?: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
}): Server {
  const { gateway, hooks, readiness, channels } = routes;
  const route = (req: IncomingMessage, res: ServerResponse, path: string | undefined): void => {
    if (path === '/rpc') {
      void gateway.http(req, res);
      return;
    }
    if (path === '/api/chat/stream') {
      void gateway.current.chatStream(req, res);
      return;
    }
    if (path?.startsWith('/v1/')) {
      const openai = gateway.current.openai;
      if (openai) void openai(req, res);
      else openAiOff(res);
      return;
    }
    if (path === '/mcp') {
      const mcp = gateway.current.mcp;
      if (mcp) void mcp(req, res);
      else
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"error":"mcp.serve.enabled is false"}');
      return;
    }
    if (path === '/health' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    if (path === '/metrics' && routes.metrics) {
      void routes.metrics(req, res);
      return;
    }
    if (path !== undefined && channels?.matches(path)) {
      void channels.handle(req, res);
      return;
    }
    if (path !== undefined && hooks.matches(path)) {
      void hooks.handle(req, res);
      return;
    }
    if ((path === '/console/login' || path === '/console/logout') && routes.consoleLogin) {
      void routes.consoleLogin(req, res);
      return;
    }
    if (path !== undefined && routes.console?.matches(path, req.method)) {
      routes.console.handle(req, res, path);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (readiness.ready) {
      route(req, res, path);
    } else if (path === '/health' && req.method === 'GET') {
      res
        .writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' })
        .end('{"ok":false,"status":"starting"}');
    } else {
      readiness.whenReady.then(
        () => route(req, res, path),
        () => res.destroy(),
      );
    }
  });
  server.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    if (readiness.ready) gateway.ws.handleUpgrade(req, socket, head);
    else
      readiness.whenReady.then(
        () => gateway.ws.handleUpgrade(req, socket, head),
        () => socket.destroy(),
      );
  });
  return server;
}
