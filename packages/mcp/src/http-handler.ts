import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@agentd/contracts';
import { BODY_LIMIT, inspectValue, readBoundedBody } from '@agentd/input-guards';
import type { GatewayCall } from './gateway-call.js';
import { type AgentdMcpServerOptions, createAgentdMcpServer } from './server.js';

/** Options of {@link createMcpHttpHandler}. */
export interface McpHttpHandlerOptions<C> {
  /** The caller of a request (its bearer token); `null` answers 401. */
  authenticate(request: IncomingMessage): C | null | Promise<C | null>;
  /** The gateway as that caller sees it. */
  callFor(caller: C): GatewayCall;
  /** Largest request body in bytes; a larger one answers 413. @default 1048576 */
  maxBodyBytes?: number | undefined;
  /** Deepest JSON nesting accepted. @default 64 */
  maxDepth?: number | undefined;
  /** The server's name and version, and graph waiting (see {@link AgentdMcpServerOptions}). */
  server?: Omit<AgentdMcpServerOptions, 'call'> | undefined;
  /** Logs transport failures. @default a no-op logger */
  logger?: Logger | undefined;
  /**
   * Browser origins (`scheme://host[:port]`) allowed to call the endpoint. A request with any
   * other `Origin` answers 403 (DNS rebinding protection); one without `Origin` (a CLI or
   * server-side client) is not affected. @default none
   */
  allowedOrigins?: readonly string[] | undefined;
  /** The session of an `ask_agent` that names none, per caller and agent (see {@link AgentdMcpServerOptions}). */
  defaultSessionKey?: ((caller: C, agentId: string | undefined) => string) | undefined;
}

/** A `node:http` request listener for the MCP endpoint; never rejects. */
export type McpHttpHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

/** A JSON-RPC error answer outside any MCP session (id null). */
function fail(response: ServerResponse, status: number, code: number, message: string): void {
  if (response.headersSent) return;
  response
    .writeHead(status, { 'content-type': 'application/json; charset=utf-8' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

class BodyError extends Error {
  constructor(
    readonly status: number,
    readonly rpcCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** The parsed POST body, refused when it is not JSON, too deep or carries `__proto__`. */
async function parsedBody(
  request: IncomingMessage,
  maxBodyBytes: number,
  maxDepth: number,
): Promise<unknown> {
  const body = await readBoundedBody(request, maxBodyBytes);
  if (!body.ok) {
    request.resume();
    throw new BodyError(413, -32600, `Request body is larger than ${maxBodyBytes} bytes`);
  }
  let value: unknown;
  try {
    value = JSON.parse(body.text);
  } catch {
    throw new BodyError(400, -32700, 'Parse error: the body is not JSON');
  }
  const problem = inspectValue(value, { maxDepth });
  if (problem) {
    throw new BodyError(
      400,
      -32600,
      problem.kind === 'depth'
        ? `The body nests deeper than ${maxDepth} levels`
        : 'The body has a __proto__ key',
    );
  }
  return value;
}

/** What a browser may send and read on the endpoint, answered to a preflight of an allowed origin. */
const CORS_HEADERS = {
  'access-control-allow-methods': 'POST, GET, DELETE, OPTIONS',
  'access-control-allow-headers':
    'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id',
  'access-control-expose-headers': 'mcp-session-id, mcp-protocol-version, www-authenticate',
  'access-control-max-age': '600',
};

/** The origin of a configured entry or a request's `Origin` header, or `undefined` when it is none. */
export function originOf(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.origin === 'null' ? undefined : url.origin;
  } catch {
    return undefined;
  }
}

/**
 * The request's `Origin` checked against the allowed ones: `none` without the header, else
 * the allowed origin or `refused`.
 */
function checkOrigin(request: IncomingMessage, allowed: ReadonlySet<string>): string | 'none' | 'refused' {
  const header = request.headers.origin;
  if (header === undefined) return 'none';
  const origin = originOf(header);
  return origin !== undefined && allowed.has(origin) ? origin : 'refused';
}

/**
 * Serves MCP's Streamable HTTP transport, stateless: each POST gets a fresh server bound to
 * its authenticated caller (no MCP session is kept between requests, so a token revoked
 * between two calls is refused on the next), answered as JSON. GET (a standalone event
 * stream) and DELETE answer 405, as the specification allows for a server without sessions.
 * A request whose `Origin` is not allowed answers 403 before anything else; a CORS preflight
 * (OPTIONS) of an allowed origin is answered before authentication.
 */
export function createMcpHttpHandler<C>(options: McpHttpHandlerOptions<C>): McpHttpHandler {
  const maxBodyBytes = options.maxBodyBytes ?? BODY_LIMIT.default;
  const maxDepth = options.maxDepth ?? 64;
  const allowed = new Set(
    (options.allowedOrigins ?? []).map(originOf).filter((origin) => origin !== undefined),
  );
  return async function handleMcp(request, response) {
    try {
      const origin = checkOrigin(request, allowed);
      if (origin === 'refused') {
        request.resume();
        fail(response, 403, -32000, 'Forbidden: this Origin is not in mcp.serve.allowedOrigins');
        return;
      }
      if (origin !== 'none') {
        response.setHeader('access-control-allow-origin', origin);
        response.setHeader('vary', 'Origin');
      }
      if (request.method === 'OPTIONS') {
        // A CORS preflight carries no credentials: it is answered before authentication.
        request.resume();
        response.writeHead(204, origin === 'none' ? {} : CORS_HEADERS).end();
        return;
      }
      const caller = await options.authenticate(request);
      if (caller === null || caller === undefined) {
        request.resume();
        response.setHeader('www-authenticate', 'Bearer');
        fail(response, 401, -32001, 'Unauthorized: send a daemon token as Authorization: Bearer <token>');
        return;
      }
      if (request.method !== 'POST') {
        request.resume();
        response.setHeader('allow', 'POST, OPTIONS');
        fail(response, 405, -32000, 'Method not allowed: this MCP endpoint is stateless; use POST');
        return;
      }
      const body = await parsedBody(request, maxBodyBytes, maxDepth);
      const defaultSessionKey = options.defaultSessionKey;
      const server = await createAgentdMcpServer({
        ...options.server,
        call: options.callFor(caller),
        ...(defaultSessionKey
          ? { defaultSessionKey: (agentId: string | undefined) => defaultSessionKey(caller, agentId) }
          : {}),
      });
      const { StreamableHTTPServerTransport } = await import(
        '@modelcontextprotocol/sdk/server/streamableHttp.js'
      );
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      response.once('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request, response, body);
    } catch (error) {
      if (error instanceof BodyError) {
        fail(response, error.status, error.rpcCode, error.message);
        return;
      }
      options.logger?.error(
        { err: error, errorKind: 'internal', hint: 'an MCP request failed inside the daemon; see err' },
        'mcp request failed',
      );
      fail(response, 500, -32603, 'Internal error');
    }
  };
}
