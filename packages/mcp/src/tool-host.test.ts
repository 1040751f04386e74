import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mcpSectionSchema } from './config.js';
import { createMcpToolHost, type McpToolHost } from './tool-host.js';
import { toolRegistry, until } from '../test/helpers.js';

let server: Server | undefined;
let host: McpToolHost | undefined;
afterEach(async () => {
  await host?.close();
  await new Promise((done) => (server ? server.close(done) : done(undefined)));
  server = host = undefined;
});

/** A Streamable HTTP MCP server whose tools are `names`, each echoing its input. */
async function serve(names: string[], port = 0): Promise<string> {
  server = createServer(async (request, response) => {
    const mcp = new McpServer({ name: 'fixture', version: '1' });
    for (const name of names) {
      mcp.registerTool(name, { inputSchema: { word: z.string().max(5) } }, ({ word }) => ({
        content: [{ type: 'text', text: `${name}:${word}` }],
      }));
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await mcp.connect(transport);
    await transport.handleRequest(request, response);
  });
  await new Promise<void>((done) => server!.listen(port, '127.0.0.1', done));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/mcp`;
}

const context = { agentId: 'a', sessionKey: 's', signal: new AbortController().signal };

describe('createMcpToolHost', () => {
  it('registers <id>__<tool> with the server schema, skips names the runtime cannot take, and calls through', async () => {
    const url = await serve(['lookup', 'bad name!', 'x'.repeat(70)]);
    const tools = toolRegistry();
    tools.register([
      { name: 'docs__lookup', description: 'taken', params: z.object({}), handler: async () => 1 },
    ]);
    const servers = mcpSectionSchema.parse({ servers: { docs: { url } } }).servers;
    host = createMcpToolHost({ servers, tools });
    await host.start();
    const [status] = host.status();
    expect(status).toMatchObject({ id: 'docs', transport: 'http', state: 'connected', tools: [] });
    expect(status?.lastError).toContain('bad name!');
    expect(status?.lastError).toContain('docs__lookup');

    tools.unregister(['docs__lookup']);
    await host.apply(mcpSectionSchema.parse({ servers: { docs: { url, agents: ['a'] } } }).servers);
    await until(() => tools.tools.has('docs__lookup'));
    const lookup = tools.tools.get('docs__lookup')!;
    expect(lookup.params.safeParse({ word: 'toolong' }).success).toBe(false);
    expect(lookup.agents).toEqual(['a']);
    expect(await lookup.handler({ word: 'hi' }, context)).toBe('lookup:hi');
    await expect(lookup.handler({ word: 'hi' }, { ...context, agentId: 'b' })).rejects.toThrow(/may not use/);

    await host.apply({});
    expect(host.status()).toEqual([]);
    expect(tools.tools.has('docs__lookup')).toBe(false);
  });

  it('fails a call cleanly when an HTTP server stops answering, and reconnects once it is back', async () => {
    const url = await serve(['ping']);
    const port = Number(new URL(url).port);
    const tools = toolRegistry();
    const servers = mcpSectionSchema.parse({ servers: { web: { url } } }).servers;
    host = createMcpToolHost({ servers, tools, backoff: { initialMs: 50, maxMs: 100 } });
    await host.start();
    const ping = tools.tools.get('web__ping')!;
    expect(await ping.handler({ word: 'a' }, context)).toBe('ping:a');
    server!.closeAllConnections();
    await new Promise((done) => server!.close(done));
    server = undefined;
    await expect(ping.handler({ word: 'b' }, context)).rejects.toThrow(
      'MCP server web went away during ping',
    );
    expect(host.status()[0]).toMatchObject({ restarts: 1 });
    await serve(['ping'], port);
    await until(() => host!.status()[0]?.state === 'connected');
    expect(await tools.tools.get('web__ping')!.handler({ word: 'c' }, context)).toBe('ping:c');
  });

  it('reports a server it cannot reach and retries it with backoff until it is up', async () => {
    // A port that was free a moment ago: nothing listens there until the server starts below.
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((done) => probe.close(done));
    const tools = toolRegistry();
    const servers = mcpSectionSchema.parse({
      servers: { late: { url: `http://127.0.0.1:${port}/mcp`, connectTimeoutMs: 500 } },
    }).servers;
    host = createMcpToolHost({ servers, tools, backoff: { initialMs: 50, maxMs: 100 } });
    await host.start();
    const [status] = host.status();
    expect(status?.state).toBe('reconnecting');
    expect(status?.lastError).toMatch(/^connect failed/);
    expect(tools.tools.size).toBe(0);
    await serve(['ping'], port);
    await until(() => host!.status()[0]?.state === 'connected');
    expect([...tools.tools.keys()]).toEqual(['late__ping']);
    expect(host.status()[0]?.lastError).toBeNull();
  });
});
