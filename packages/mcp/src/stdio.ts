import type { GatewayCall } from './gateway-call.js';
import { type AgentdMcpServerOptions, createAgentdMcpServer } from './server.js';

/**
 * Serves the agentd MCP server over this process's stdin and stdout (what `agentd mcp` runs
 * for MCP clients that spawn their servers). Resolves with a `close` once connected.
 */
export async function serveMcpStdio(
  options: { call: GatewayCall } & Omit<AgentdMcpServerOptions, 'call'>,
  streams: { stdin?: NodeJS.ReadableStream; stdout?: NodeJS.WritableStream } = {},
): Promise<{ close(): Promise<void> }> {
  const server = await createAgentdMcpServer(options);
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const transport = new StdioServerTransport(
    streams.stdin as import('node:stream').Readable | undefined,
    streams.stdout as import('node:stream').Writable | undefined,
  );
  await server.connect(transport);
  return { close: () => server.close() };
}
