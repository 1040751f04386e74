import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../../../packages/agent-runtime/test/fake-providers.js';
import { CHART_PNG, createFixtureServer } from './fixtures/mcp-fixture-server.js';
import type { RunningDaemon } from '../src/index.js';
import { listenLocal } from '../../../packages/channels/test/fake-server.js';
import { daemonPool, eventually, openAiProviders, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-mcp-tools-');
/** The test's daemon, which the helpers below call. */
let daemon: RunningDaemon | undefined;
afterEach(async () => {
  await pool.cleanup();
  daemon = undefined;
});

const fixture = join(import.meta.dirname, 'fixtures', 'mcp-fixture-server.ts');
const stdioServer = (extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: ['--import', 'tsx', fixture],
  env: { FIXTURE_GREETING: '${secret:FIXTURE_GREETING}' },
  ...extra,
});

interface ServerStatus {
  id: string;
  state: string;
  tools: string[];
  lastError: string | null;
  restarts: number;
}

async function mcpStatus(): Promise<ServerStatus[]> {
  const status = await rpcClient(daemon!.url).call<{ mcp: { servers: ServerStatus[] } }>('gateway.status');
  return status.mcp.servers;
}

/** Waits until server `id` is connected with `tool` among its tools. */
function connectedWith(id: string, tool: string): Promise<ServerStatus> {
  return eventually(async () =>
    (await mcpStatus()).find(
      (server) => server.id === id && server.state === 'connected' && server.tools.includes(tool),
    ),
  );
}

/** One agent turn of the offline provider asking for a tool: `/tool <name> <json>`. */
async function toolTurn(agentId: string, tool: string, input: Record<string, unknown> = {}): Promise<string> {
  const result = await rpcClient(daemon!.url).call<{ response: string }>('agent.execute', {
    agentId,
    message: `/tool ${tool} ${JSON.stringify(input)}`,
    sessionKey: `default:test:${agentId}-${Math.random().toString(36).slice(2)}`,
  });
  return result.response;
}

/** Waits for the pending approval request of `tool`. */
function pending(tool: string): Promise<{ id: string; toolName: string; agentId: string }> {
  return eventually(async () =>
    (
      await rpcClient(daemon!.url).call<{
        requests: Array<{ id: string; toolName: string; agentId: string }>;
      }>('admin.approval.pending')
    ).requests.find((request) => request.toolName === tool),
  );
}

const agents = {
  entries: {
    helper: { name: 'helper', tools: ['fixture__*', 'web__*'] },
    denied: { name: 'denied', tools: ['fixture__*'], toolDenylist: ['fixture__echo'] },
    outsider: { name: 'outsider', tools: ['*'] },
  },
};

describe('MCP servers as agent tools (mcp.servers)', () => {
  it('offers a stdio server tools to an allowed agent through the gates, with secret env and list_changed refresh', async () => {
    daemon = await pool.start(pool.tempDir(), {
      config: { agents, mcp: { servers: { fixture: stdioServer({ agents: ['helper', 'denied'] }) } } },
      env: { FIXTURE_GREETING: 'hello-from-a-secret' },
    });
    const ready = await connectedWith('fixture', 'fixture__echo');
    expect(ready.tools).toEqual(
      expect.arrayContaining(['fixture__echo', 'fixture__slow', 'fixture__pid', 'fixture__greeting']),
    );
    expect(await toolTurn('helper', 'fixture__echo', { text: 'ping' })).toContain(
      'Tool fixture__echo returned: "echo: ping"',
    );
    expect(await toolTurn('helper', 'fixture__greeting')).toContain('hello-from-a-secret');
    // The server's JSON Schema is the tool's: bad input never reaches it.
    expect(await toolTurn('helper', 'fixture__echo', { text: 42 })).toContain('failed');
    expect(await toolTurn('helper', 'fixture__fail')).toContain('the fixture refuses');
    // The agent's denylist (the tool runner's allow-list gate) refuses it before the server.
    expect(await toolTurn('denied', 'fixture__echo', { text: 'x' })).toContain(
      'Tool not allowed for this agent',
    );
    // An agent the server is not configured for is neither offered its tools nor let call them.
    expect(await toolTurn('outsider', 'fixture__echo', { text: 'x' })).toContain(
      'Tool not allowed for this agent',
    );

    // A tool registered at run time reaches the agents through list_changed.
    expect(await toolTurn('helper', 'fixture__add_tool', { name: 'extra' })).toContain('added extra');
    await connectedWith('fixture', 'fixture__extra');
    expect(await toolTurn('helper', 'fixture__extra')).toContain('extra works');

    // Every call left an evidence record (a tool_call trajectory row) like a built-in tool's.
    const report = await rpcClient(daemon.url).call<Record<string, unknown>>('obs.fleet.health', {});
    expect(JSON.stringify(report)).toContain('fixture__echo');
  });

  it('gives a clean tool error when the stdio server is killed mid-call, restarts it and reports it', async () => {
    const logDir = pool.tempDir();
    const log = join(logDir, 'calls.log');
    daemon = await pool.start(pool.tempDir(), {
      config: {
        agents,
        mcp: { servers: { fixture: stdioServer({ env: { FIXTURE_GREETING: 'hi', FIXTURE_LOG: log } }) } },
      },
    });
    await connectedWith('fixture', 'fixture__pid');
    const pidOf = async () => Number(/"pid":(\d+)/.exec(await toolTurn('helper', 'fixture__pid'))?.[1]);
    const pid = await pidOf();
    expect(pid).toBeGreaterThan(0);
    const slow = toolTurn('helper', 'fixture__slow', { ms: 10_000 });
    // Killed once the call is running in the server.
    await eventually(async () =>
      existsSync(log) && readFileSync(log, 'utf8').includes(`slow ${pid}`) ? true : undefined,
    );
    process.kill(pid, 'SIGKILL');
    const answer = await slow;
    // Reported at once: the loss counts as a restart in gateway.status (and a warning in the log).
    expect((await mcpStatus())[0]?.restarts).toBe(1);
    expect(answer).toContain('Tool fixture__slow failed');
    expect(answer).toContain('went away during slow');
    const restarted = await eventually(async () =>
      (await mcpStatus()).find((server) => server.restarts === 1 && server.state === 'connected'),
    );
    expect(restarted.lastError).toBeNull();
    expect(await toolTurn('helper', 'fixture__echo', { text: 'again' })).toContain('echo: again');
    const newPid = await pidOf();
    expect(newPid).toBeGreaterThan(0);
    expect(newPid).not.toBe(pid);
  });

  it('gates MCP tools by approval rules like any tool: require waits for admin.approval.resolve, deny refuses', async () => {
    const logDir = pool.tempDir();
    const log = join(logDir, 'calls.log');
    const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);
    daemon = await pool.start(pool.tempDir(), {
      config: {
        agents,
        mcp: { servers: { fixture: stdioServer({ env: { FIXTURE_GREETING: 'hi', FIXTURE_LOG: log } }) } },
        approvals: {
          enabled: true,
          defaultMode: 'auto',
          rules: [
            { tool: 'fixture__greeting', mode: 'deny' },
            { tool: 'fixture__*', mode: 'require' },
          ],
        },
      },
    });
    await connectedWith('fixture', 'fixture__slow');
    const admin = rpcClient(daemon.url);

    // `require`: the turn waits on the gate; the server sees nothing until the call is approved.
    const waiting = toolTurn('helper', 'fixture__slow', { ms: 0 });
    const request = await pending('fixture__slow');
    expect(request.agentId).toBe('helper');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(calls()).toBe(0);
    await admin.call('admin.approval.resolve', { id: request.id, approved: true });
    expect(await waiting).toContain('Tool fixture__slow returned: "slept 0"');
    expect(calls()).toBe(1);

    // Refused by the human: the tool fails and the server is not called.
    const refused = toolTurn('helper', 'fixture__slow', { ms: 0 });
    const second = await pending('fixture__slow');
    await admin.call('admin.approval.resolve', { id: second.id, approved: false, reason: 'not this one' });
    expect(await refused).toMatch(/Tool fixture__slow failed: .*not approved.*not this one/);
    expect(calls()).toBe(1);

    // `deny`: refused at once by the rule, before the server and without a pending request.
    expect(await toolTurn('helper', 'fixture__greeting')).toMatch(
      /Tool fixture__greeting failed: .*the approval rules deny it/,
    );
    expect(await admin.call('admin.approval.pending')).toEqual({ requests: [] });
    // The allow-list gate still comes first: an agent not allowed the tool is never asked about.
    expect(await toolTurn('denied', 'fixture__echo', { text: 'x' })).toContain(
      'Tool not allowed for this agent',
    );
    expect(await admin.call('admin.approval.pending')).toEqual({ requests: [] });
  });

  it('reports MCP server status in capabilities.introspect: all servers to a client, its own tools to an agent', async () => {
    daemon = await pool.start(pool.tempDir(), {
      config: {
        agents: {
          entries: {
            ...agents.entries,
            looker: { name: 'looker', tools: ['capabilities_introspect', 'fixture__echo'] },
            stranger: { name: 'stranger', tools: ['capabilities_introspect', 'fixture__*'] },
          },
        },
        mcp: { servers: { fixture: stdioServer({ agents: ['helper', 'looker'] }) } },
      },
      env: { FIXTURE_GREETING: 'hi' },
    });
    await connectedWith('fixture', 'fixture__echo');
    const rpc = rpcClient(daemon.url);
    const introspected = await rpc.call<{
      runs: unknown[];
      mcp: { servers: Array<{ id: string; state: string; tools: string[]; lastError: string | null }> };
    }>('capabilities.introspect');
    expect(introspected.runs).toEqual([]);
    expect(introspected.mcp.servers).toEqual([
      {
        id: 'fixture',
        state: 'connected',
        tools: expect.arrayContaining(['fixture__echo', 'fixture__slow', 'fixture__pid']),
        lastError: null,
      },
    ]);
    // The agent's own view through its tool: the server, narrowed to the tools it may call.
    const own = await toolTurn('looker', 'capabilities_introspect');
    expect(own).toContain(
      '"servers":[{"id":"fixture","state":"connected","tools":["fixture__echo"],"lastError":null}]',
    );
    // An agent the server is not configured for does not see it.
    expect(await toolTurn('stranger', 'capabilities_introspect')).toContain('"mcp":{"servers":[]}');
  });

  it('uses a Streamable HTTP server with secret headers, applies config changes live and times calls out', async () => {
    const seen: string[] = [];
    const httpServer = await listenLocal(async (request, response) => {
      seen.push(String(request.headers.authorization));
      if (request.headers.authorization !== 'Bearer http-secret') {
        response.writeHead(401).end();
        return;
      }
      const server = createFixtureServer();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      response.once('close', () => void server.close());
      await server.connect(transport);
      await transport.handleRequest(request, response);
    });
    const url = `${pool.closeAfter(httpServer).url}/mcp`;
    daemon = await pool.start(pool.tempDir(), { config: { agents }, env: { WEB_TOKEN: 'http-secret' } });
    expect(await mcpStatus()).toEqual([]);

    const admin = rpcClient(daemon.url);
    await admin.call('config.patch', {
      mcp: {
        servers: {
          web: {
            url,
            headers: { authorization: 'Bearer ${secret:WEB_TOKEN}', 'x-team-key': 'planted-team-credential' },
            callTimeoutMs: 1000,
            start: 'lazy',
          },
        },
      },
    });
    const lazy = await eventually(async () =>
      (await mcpStatus()).find((server) => server.id === 'web' && server.tools.includes('web__echo')),
    );
    expect(lazy.state).toBe('idle');
    expect(await toolTurn('helper', 'web__echo', { text: 'over http' })).toContain('echo: over http');
    expect(seen.every((header) => header === 'Bearer http-secret')).toBe(true);
    const timedOut = await toolTurn('helper', 'web__slow', { ms: 4000 });
    expect(timedOut).toContain('did not answer slow within 1000 ms');

    // Disabled: the server stops and its tools are withdrawn.
    await admin.call('config.patch', { mcp: { servers: { web: { enabled: false } } } });
    const disabled = await eventually(async () =>
      (await mcpStatus()).find((server) => server.id === 'web' && server.state === 'disabled'),
    );
    expect(disabled.tools).toEqual([]);
    expect(await toolTurn('helper', 'web__echo', { text: 'x' })).toContain('failed');
    // Neither the resolved secret nor a literal header value comes back in an answer.
    const answers = JSON.stringify([
      await admin.call('gateway.status'),
      await admin.call('config.read', { section: 'mcp' }),
    ]);
    expect(answers).not.toContain('http-secret');
    expect(answers).not.toContain('planted-team-credential');
    expect(answers).toContain('"x-team-key":"[REDACTED]"');
  });

  it('answers a server roots, sampling (the agent model) and elicitation (the operator), under the approval rules', async () => {
    const dataDir = pool.tempDir();
    daemon = await pool.start(dataDir, {
      config: {
        agents,
        mcp: { servers: { fixture: stdioServer({ env: {} }) } },
        approvals: {
          enabled: true,
          defaultMode: 'auto',
          rules: [
            { tool: 'mcp.fixture.*', mode: 'require' },
            { tool: 'fixture__*', mode: 'auto' },
          ],
        },
      },
    });
    await connectedWith('fixture', 'fixture__confirm');
    const admin = rpcClient(daemon.url);

    // roots/list during helper's call: helper's workspace, as a file:// URI.
    const roots = await toolTurn('helper', 'fixture__roots');
    const uri = pathToFileURL(join(dataDir, 'workspaces', 'helper')).href;
    expect(roots).toContain(
      JSON.stringify(JSON.stringify({ roots: [{ uri, name: 'workspace of agent helper' }] })),
    );

    // sampling/createMessage: waits for the operator, then the calling agent's own model answers.
    const sampling = toolTurn('helper', 'fixture__summarise', { text: 'what is MCP' });
    const sampleRequest = await pending('mcp.fixture.sampling');
    expect(sampleRequest.agentId).toBe('helper');
    await admin.call('admin.approval.resolve', { id: sampleRequest.id, approved: true });
    expect(await sampling).toMatch(/\\"model\\":\\"offline\//);
    const refusedSampling = toolTurn('helper', 'fixture__summarise', { text: 'again' });
    const second = await pending('mcp.fixture.sampling');
    await admin.call('admin.approval.resolve', { id: second.id, approved: false, reason: 'no' });
    expect(await refusedSampling).toMatch(/Tool fixture__summarise failed: .*not approved/);

    // elicitation/create: the operator's approval accepts (with the form's defaults), a denial declines.
    const confirmed = toolTurn('helper', 'fixture__confirm');
    await admin.call('admin.approval.resolve', {
      id: (await pending('mcp.fixture.elicitation')).id,
      approved: true,
    });
    expect(await confirmed).toContain('{\\"action\\":\\"accept\\",\\"content\\":{\\"go\\":true}}');
    const declined = toolTurn('outsider', 'fixture__confirm');
    await admin.call('admin.approval.resolve', {
      id: (await pending('mcp.fixture.elicitation')).id,
      approved: false,
      reason: 'not now',
    });
    expect(await declined).toContain('{\\"action\\":\\"decline\\"}');
  });

  it('gives a vision model an MCP tool image as an image part, not as base64 text', async () => {
    const model = await startFakeOpenAi({
      apiKey: 'sk-model',
      respond: (_body, index) =>
        index === 0
          ? { toolCalls: [{ id: 'c1', name: 'fixture__chart', input: {} }], finishReason: 'tool_calls' }
          : { text: 'A flat chart.' },
    });
    pool.closeAfter(model);
    daemon = await pool.start(pool.tempDir(), {
      config: {
        providers: openAiProviders('oai', model.url, 'MODEL_KEY', ['gpt-vision']),
        agents: { entries: { viewer: { name: 'viewer', provider: 'oai', tools: ['fixture__*'] } } },
        mcp: { servers: { fixture: stdioServer({ env: {} }) } },
      },
      env: { MODEL_KEY: 'sk-model' },
    });
    await connectedWith('fixture', 'fixture__chart');
    const answer = await rpcClient(daemon.url).call<{ response: string }>('agent.execute', {
      agentId: 'viewer',
      message: 'describe the chart',
    });
    expect(answer.response).toBe('A flat chart.');
    const second = model.requests.filter((request) => request.path === '/v1/chat/completions')[1];
    const messages = (second!.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    const tool = messages.find((message) => message.role === 'tool');
    expect(tool?.content).toBe('"the chart:\\n[image/png image, attached]"');
    const images = messages.at(-1);
    expect(images).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Images from fixture__chart:' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${CHART_PNG}` } },
      ],
    });
  });
});
