import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
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

async function httpClient(token: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'agentd-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${daemon!.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
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

/** The `initialize` request an MCP client sends first, at the newest protocol revision. */
function initializeRequest(clientName: string) {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: clientName, version: '1' },
    },
  };
}

/** A raw JSON-RPC POST to `/mcp` with the admin token, as a Streamable HTTP client sends it. */
function postMcp(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${daemon!.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
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
    const response = await postMcp({
      jsonrpc: '2.0',
      id: 1,
      method: 'ping',
      params: { pad: 'x'.repeat(2_000_000) },
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

  it('refuses a browser Origin not in mcp.serve.allowedOrigins (403) and answers an allowed one, preflight first', async () => {
    daemon = await pool.start(pool.tempDir(), {
      config: { mcp: { serve: { allowedOrigins: ['http://app.example:5173'] } } },
    });
    // A page of another origin (a DNS-rebinding attacker's) is refused, token or not.
    await expect(httpClient(ADMIN_TOKEN, { origin: 'http://evil.example:5173' })).rejects.toThrow(
      /Forbidden: this Origin/,
    );
    const refused = await postMcp(
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { origin: 'http://evil.example:5173' },
    );
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const refusedPreflight = await fetch(`${daemon.url}/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example:5173', 'access-control-request-method': 'POST' },
    });
    expect(refusedPreflight.status).toBe(403);

    // The preflight of an allowed origin carries no token and is answered before authentication.
    const preflight = await fetch(`${daemon.url}/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.example:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://app.example:5173');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
    for (const header of ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-session-id']) {
      expect(preflight.headers.get('access-control-allow-headers')).toContain(header);
    }

    const allowed = await httpClient(ADMIN_TOKEN, { origin: 'http://app.example:5173' });
    expect((await allowed.listTools()).tools).toHaveLength(TOOLS.length);
    const answered = await postMcp(
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { origin: 'http://app.example:5173' },
    );
    expect(answered.status).toBe(200);
    expect(answered.headers.get('access-control-allow-origin')).toBe('http://app.example:5173');
    // No Origin (a CLI or server-side client): not a browser, not refused.
    expect((await (await httpClient(ADMIN_TOKEN)).listTools()).tools).toHaveLength(TOOLS.length);
  });

  it('does not advertise list-changed notifications it never sends (no GET event stream)', async () => {
    daemon = await pool.start(pool.tempDir());
    const client = await httpClient(ADMIN_TOKEN);
    const capabilities = client.getServerCapabilities();
    expect(capabilities?.tools).toBeDefined();
    expect(capabilities?.tools?.listChanged).not.toBe(true);
    expect(capabilities?.resources?.listChanged).not.toBe(true);
    const stream = await fetch(`${daemon.url}/mcp`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(405);
  });

  it('negotiates the newest protocol revision of the SDK, over HTTP and over stdio', async () => {
    daemon = await pool.start(pool.tempDir());
    const initialize = await postMcp(initializeRequest('raw'));
    expect(
      ((await initialize.json()) as { result: { protocolVersion: string } }).result.protocolVersion,
    ).toBe(LATEST_PROTOCOL_VERSION);
    const listed = await postMcp(
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      { 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
    );
    expect(listed.status).toBe(200);
    const http = new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
    });
    const client = new Client({ name: 'agentd-test', version: '1.0.0' });
    await client.connect(http);
    clients.push(client);
    expect(http.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    // The stdio bridge passes the revision on: its requests after initialize carry it.
    const overStdio = await stdioClient(ADMIN_TOKEN);
    expect((await overStdio.listTools()).tools).toHaveLength(TOOLS.length);
  });

  it('agentd mcp with a wrong token fails at start with a clear message, listing nothing', async () => {
    daemon = await pool.start(pool.tempDir());
    const child = spawn(process.execPath, [...cliNodeArgs, 'mcp', '--url', daemon.url, '--token', 'WRONG'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // What an MCP client sends first; a bridge that started anyway would answer it.
    child.stdin.write(`${JSON.stringify(initializeRequest('t'))}\n`);
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    expect(code).toBe(1);
    expect(stderr).toContain('refused the token (401 Unauthorized)');
    expect(stdout).toBe('');
    await expect(stdioClient('WRONG')).rejects.toThrow();
  });

  it('ask_agent without a sessionKey keeps one session per MCP client and agent, apart from /rpc', async () => {
    daemon = await pool.start(pool.tempDir(), {
      config: { agents: { entries: { helper: { name: 'Helper' } } } },
    });
    // The token's /rpc default session now belongs to helper.
    const rpc = rpcClient(daemon.url);
    await rpc.call('agent.execute', { message: 'rpc first', agentId: 'helper' });

    const client = await httpClient(ADMIN_TOKEN);
    const first = await client.callTool({
      name: 'ask_agent',
      arguments: { message: 'to the default agent' },
    });
    expect(first.isError).toBeFalsy();
    const defaultKey = (first.structuredContent as { sessionKey: string }).sessionKey;
    expect(defaultKey).toMatch(/^default:mcp:/);
    const helper = await client.callTool({
      name: 'ask_agent',
      arguments: { message: 'hi', agentId: 'helper' },
    });
    expect(helper.isError).toBeFalsy();
    const helperKey = (helper.structuredContent as { sessionKey: string }).sessionKey;
    expect(helperKey).toMatch(/^default:mcp:/);
    expect(helperKey).not.toBe(defaultKey);
    // Each default session goes on with its own agent, over stdio too (the same /mcp).
    const again = await (await stdioClient(ADMIN_TOKEN)).callTool({
      name: 'ask_agent',
      arguments: { message: 'again', agentId: 'helper' },
    });
    expect((again.structuredContent as { sessionKey: string }).sessionKey).toBe(helperKey);
    const history = await client.callTool({ name: 'session_history', arguments: { sessionKey: helperKey } });
    expect(JSON.parse(text(history)).messages).toHaveLength(4);
  });
});
