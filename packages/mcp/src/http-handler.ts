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

/**
 * Serves MCP's Streamable HTTP transport, stateless: each POST gets a fresh server bound to
 * its authenticated caller (no MCP session is kept between requests, so a token revoked
 * between two calls is refused on the next), answered as JSON. GET (a standalone event
 * stream) and DELETE answer 405, as the specification allows for a server without sessions.
 */
export function createMcpHttpHandler<C>(options: McpHttpHandlerOptions<C>): McpHttpHandler {
  const maxBodyBytes = options.maxBodyBytes ?? BODY_LIMIT.default;
  const maxDepth = options.maxDepth ?? 64;
  return async function handleMcp(request, response) {
    try {
      const caller = await options.authenticate(request);
      if (caller === null || caller === undefined) {
        request.resume();
        response.setHeader('www-authenticate', 'Bearer');
        fail(response, 401, -32001, 'Unauthorized: send a daemon token as Authorization: Bearer <token>');
        return;
      }
      if (request.method !== 'POST') {
        request.resume();
        response.setHeader('allow', 'POST');
        fail(response, 405, -32000, 'Method not allowed: this MCP endpoint is stateless; use POST');
        return;
      }
      const body = await parsedBody(request, maxBodyBytes, maxDepth);
      const server = await createAgentdMcpServer({ ...options.server, call: options.callFor(caller) });
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
