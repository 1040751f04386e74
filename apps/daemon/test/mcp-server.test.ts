import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningDaemon } from '../src/index.js';
import { ADMIN_TOKEN, cliNodeArgs, daemonPool, eventually, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-mcp-server-');
/** The test's daemon, which the clients below connect to. */
let daemon: RunningDaemon | undefined;
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await pool.cleanup();
  daemon = undefined;
});

const TOOLS = ['ask_agent', 'graph_execute', 'memory_search', 'memory_store', 'session_history'];

async function httpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'agentd-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${daemon!.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function stdioClient(token: string): Promise<Client> {
  const client = new Client({ name: 'agentd-test', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...cliNodeArgs, 'mcp', '--url', daemon!.url, '--token', token],
    stderr: 'pipe',
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

function text(result: unknown): string {
  const content = (result as CallToolResult).content[0];
  return content?.type === 'text' ? content.text : '';
}

async function rpcToken(): Promise<string> {
  const created = await rpcClient(daemon!.url).call<{ token: string }>('tokens.create', {
    scopes: ['rpc'],
  });
  return created.token;
}

describe('MCP server (/mcp and agentd mcp)', () => {
  it('lists and calls every tool over Streamable HTTP with an admin token, and reads the resources', async () => {
    daemon = await pool.start(pool.tempDir(), { config: { memory: { enabled: true } } });
    const client = await httpClient(ADMIN_TOKEN);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOLS);
    const ask = tools.find((tool) => tool.name === 'ask_agent')!;
    expect(ask.inputSchema.required).toEqual(['message']);

    const answer = await client.callTool({
      name: 'ask_agent',
      arguments: { message: 'hello from mcp', sessionKey: 'default:mcp:tester' },
    });
    expect(answer.isError).toBeFalsy();
    expect(answer.structuredContent).toMatchObject({
      sessionKey: 'default:mcp:tester',
      finishReason: 'stop',
    });
    expect(text(answer)).toContain('offline');

    const history = await client.callTool({
      name: 'session_history',
      arguments: { sessionKey: 'default:mcp:tester' },
    });
    expect(JSON.parse(text(history)).messages.map((m: { role: string }) => m.role)).toEqual([
      'user',
      'assistant',
    ]);

    const stored = await client.callTool({
      name: 'memory_store',
      arguments: { content: 'the deploy window is tuesday morning', tags: ['ops'] },
    });
    expect(stored.isError).toBeFalsy();
    const storedId = (stored.structuredContent as { id: string }).id;
    const found = await client.callTool({ name: 'memory_search', arguments: { query: 'deploy window' } });
    expect((found.structuredContent as { results: Array<{ id: string }> }).results[0]?.id).toBe(storedId);

    const { graphId } = await rpcClient(daemon.url).call<{ graphId: string }>('graph.define', {
      nodes: [{ id: 'only', prompt: 'say {{inputs.word}}' }],
    });
    const run = await client.callTool({
      name: 'graph_execute',
      arguments: { graphId, inputs: { word: 'hi' } },
    });
    expect(run.isError).toBeFalsy();
    expect(run.structuredContent).toMatchObject({ status: 'completed', finished: true });

    const { resources } = await client.listResources();
    const uris = resources.map((resource) => resource.uri);
    expect(uris).toEqual(
      expect.arrayContaining([
        'agentd://agents',
        'agentd://sessions',
        `agentd://sessions/${encodeURIComponent('default:mcp:tester')}`,
      ]),
    );
    const agents = await client.readResource({ uri: 'agentd://agents' });
    expect(JSON.parse((agents.contents[0] as { text: string }).text)).toEqual({ agents: ['default'] });
    const one = await client.readResource({
      uri: `agentd://sessions/${encodeURIComponent('default:mcp:tester')}`,
    });
    expect(JSON.parse((one.contents[0] as { text: string }).text).messages).toHaveLength(2);
  });

  it('refuses an rpc token what the gateway refuses it: memory_store and the agents resource', async () => {
    daemon = await pool.start(pool.tempDir(), { config: { memory: { enabled: true } } });
    const client = await httpClient(await rpcToken());
    expect((await client.listTools()).tools).toHaveLength(TOOLS.length);
    const refused = await client.callTool({ name: 'memory_store', arguments: { content: 'not allowed' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain("Insufficient scope: requires 'admin'");
    await expect(client.readResource({ uri: 'agentd://agents' })).rejects.toThrow(/Insufficient scope/);
    // What rpc may do, it does.
    const search = await client.callTool({ name: 'memory_search', arguments: { query: 'anything' } });
    expect(search.isError).toBeFalsy();
    // The refusals are audited like those of /rpc.
    const admin = rpcClient(daemon.url);
    const denied = await eventually(async () => {
      const { rows } = await admin.call<{ rows: Array<{ kind: string }> }>('obs.audit.query', {
        classification: 'denied',
      });
      const scope = rows.filter((row) => row.kind === 'scope');
      return scope.length >= 2 ? scope : undefined;
    });
    expect(denied).toHaveLength(2);
  });

  it('answers 401 to a wrong token and 413 to an oversized body', async () => {
    daemon = await pool.start(pool.tempDir());
    await expect(httpClient('not-a-token')).rejects.toThrow(/Unauthorized/);
    const response = await fetch(`${daemon.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2_000_000) } }),
    });
    expect(response.status).toBe(413);
  });

  it('serves the same tools over stdio (agentd mcp), refusing an rpc token memory_store', async () => {
    daemon = await pool.start(pool.tempDir(), { config: { memory: { enabled: true } } });
    const admin = await stdioClient(ADMIN_TOKEN);
    expect((await admin.listTools()).tools.map((tool) => tool.name).sort()).toEqual(TOOLS);
    const answer = await admin.callTool({ name: 'ask_agent', arguments: { message: 'over stdio' } });
    expect(text(answer)).toContain('offline');
    const stored = await admin.callTool({ name: 'memory_store', arguments: { content: 'stdio fact' } });
    expect(stored.isError).toBeFalsy();

    const limited = await stdioClient(await rpcToken());
    const refused = await limited.callTool({ name: 'memory_store', arguments: { content: 'no' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('Insufficient scope');
    const found = await limited.callTool({ name: 'memory_search', arguments: { query: 'stdio fact' } });
    expect((found.structuredContent as { results: unknown[] }).results).toHaveLength(1);
  });
});
