import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { AgentdMcpError } from './errors.js';

/** Options of {@link bridgeMcpStdio}. */
export interface McpStdioBridgeOptions {
  /** The daemon's MCP endpoint (`http://127.0.0.1:7420/mcp`). */
  url: string | URL;
  /** The daemon token the bridge sends as `Authorization: Bearer <token>`. */
  token: string;
}

/** The HTTP status of an SDK transport error (`StreamableHTTPError.code`), when it carries one. */
function statusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' && code >= 100 && code < 600 ? code : undefined;
}

/**
 * Opens one MCP session with the endpoint and closes it: a refused token or an endpoint that
 * is not there fails here, at start, with a message that says which.
 */
async function checkEndpoint(url: URL, headers: Record<string, string>): Promise<void> {
  const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  const client = new Client({ name: 'agentd-mcp-bridge', version: '1' });
  try {
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  } catch (error) {
    const status = statusOf(error);
    if (status === 401) {
      throw new AgentdMcpError(
        'UNAUTHORIZED',
        `agentd at ${url.origin} refused the token (401 Unauthorized): check --token or AGENTD_TOKEN`,
      );
    }
    const reason = error instanceof Error ? error.message.slice(0, 300) : String(error);
    throw new AgentdMcpError(
      'SERVER_UNAVAILABLE',
      `agentd at ${url.href} did not start an MCP session: ${reason}`,
    );
  } finally {
    await client.close().catch(() => undefined);
  }
}

/**
 * Serves the daemon's MCP endpoint over this process's stdin and stdout (what `agentd mcp`
 * runs for MCP clients that spawn their servers): every message from the client is posted to
 * the endpoint with the token and every answer written back, so the stdio server is exactly
 * `/mcp` (its tools, its default sessions, its checks). The token is checked before the
 * first message is read: a refused one rejects with `UNAUTHORIZED`.
 */
export async function bridgeMcpStdio(
  options: McpStdioBridgeOptions,
  streams: { stdin?: NodeJS.ReadableStream; stdout?: NodeJS.WritableStream } = {},
): Promise<{ close(): Promise<void> }> {
  const url = new URL(options.url);
  const headers = { authorization: `Bearer ${options.token}` };
  await checkEndpoint(url, headers);
  const [{ StreamableHTTPClientTransport }, { StdioServerTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
  ]);
  const upstream = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  const downstream = new StdioServerTransport(
    streams.stdin as import('node:stream').Readable | undefined,
    streams.stdout as import('node:stream').Writable | undefined,
  );
  /** Ids of the client's `initialize` requests: their answers name the protocol revision. */
  const initializing = new Set<string | number>();
  downstream.onmessage = (message: JSONRPCMessage) => {
    const request = 'method' in message && 'id' in message ? message : undefined;
    if (request?.method === 'initialize') initializing.add(request.id);
    upstream.send(message).catch((error: unknown) => {
      if (!request) return;
      const reason = error instanceof Error ? error.message.slice(0, 300) : String(error);
      void downstream.send({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: -32603, message: `agentd at ${url.origin} failed the request: ${reason}` },
      });
    });
  };
  upstream.onmessage = (message: JSONRPCMessage) => {
    if ('result' in message && initializing.delete(message.id)) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') upstream.setProtocolVersion(version);
    }
    void downstream.send(message);
  };
  downstream.onclose = () => void upstream.close();
  await upstream.start();
  await downstream.start();
  return {
    close: async () => {
      await downstream.close();
      await upstream.close();
    },
  };
}
