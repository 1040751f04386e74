import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { mcpSectionSchema } from './config.js';
import type { McpClientHooks } from './internal/client-requests.js';
import { createMcpToolHost, type McpToolHost } from './tool-host.js';
import { toolRegistry, until } from '../test/helpers.js';

let server: Server | undefined;
let host: McpToolHost | undefined;
afterEach(async () => {
  await host?.close();
  server?.closeAllConnections();
  await new Promise((done) => (server ? server.close(done) : done(undefined)));
  server = host = undefined;
});

/**
 * A stateful Streamable HTTP MCP server (sessions, SSE answers) on port 0, as the SDK's own
 * examples build it: what `setup` registers runs in one McpServer per session, so a tool can
 * send requests back to the client during its call.
 */
async function serveStateful(setup: (mcp: McpServer) => void): Promise<string> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  server = createServer(async (request, response) => {
    const id = request.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sessionId) => void sessions.set(sessionId, created),
      });
      const mcp = new McpServer({ name: 'fixture', version: '1' });
      setup(mcp);
      await mcp.connect(created);
      transport = created;
    }
    await transport.handleRequest(request, response);
  });
  await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/mcp`;
}

/** A host of one server `srv` for agent `a`, its tools registered once it is connected. */
async function hostOf(url: string, client: McpClientHooks, agents = ['a']) {
  const tools = toolRegistry();
  const servers = mcpSectionSchema.parse({ servers: { srv: { url, agents } } }).servers;
  host = createMcpToolHost({ servers, tools, client });
  await host.start();
  await until(() => tools.tools.size > 0);
  return tools;
}

const context = (agentId = 'a') => ({
  agentId,
  sessionKey: `default:rpc:${agentId}`,
  signal: new AbortController().signal,
});

const schema = {
  type: 'object' as const,
  properties: { confirm: { type: 'boolean' as const, default: true } },
  required: ['confirm'],
};

/** A 1x1 PNG. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('MCP servers asking agentd (roots, sampling, elicitation, tasks)', () => {
  it('attaches image results to the call for the model instead of giving it base64 text', async () => {
    const url = await serveStateful((mcp) => {
      mcp.registerTool('chart', {}, () => ({
        content: [
          { type: 'text', text: 'the chart:' },
          { type: 'image', data: PNG, mimeType: 'image/png' },
        ],
      }));
    });
    const tools = await hostOf(url, {});
    const attached: unknown[] = [];
    const result = await tools.tools
      .get('srv__chart')!
      .handler({}, { ...context(), attachImages: (images) => void attached.push(...images) });
    expect(attached).toEqual([{ data: PNG, mediaType: 'image/png' }]);
    expect(result).toBe('the chart:\n[image/png image, attached]');
    // A runtime that takes no images gets a note, still never the bytes.
    expect(await tools.tools.get('srv__chart')!.handler({}, context())).toBe(
      'the chart:\n[image/png image, not shown]',
    );
  });

  it('declares roots and answers roots/list with the workspace of the agent whose call is in flight', async () => {
    const url = await serveStateful((mcp) => {
      mcp.registerTool('roots', {}, async (extra) => {
        const { roots } = await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema);
        return { content: [{ type: 'text', text: JSON.stringify(roots) }] };
      });
    });
    const tools = await hostOf(url, { workspaceOf: (agentId) => `/srv/agentd/workspaces/${agentId}` }, [
      'a',
      'b',
    ]);
    const roots = JSON.parse(String(await tools.tools.get('srv__roots')!.handler({}, context('b'))));
    expect(roots).toEqual([
      { uri: pathToFileURL('/srv/agentd/workspaces/b').href, name: 'workspace of agent b' },
    ]);
  });

  it('answers sampling/createMessage with the calling agent model, once the approval rules allow it', async () => {
    const url = await serveStateful((mcp) => {
      mcp.registerTool('summarise', { inputSchema: { text: z.string() } }, async ({ text }, extra) => {
        const answer = await extra.sendRequest(
          {
            method: 'sampling/createMessage',
            params: {
              systemPrompt: 'Be brief.',
              messages: [{ role: 'user', content: { type: 'text', text: `Summarise: ${text}` } }],
              maxTokens: 64,
            },
          },
          CreateMessageResultSchema,
        );
        return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
      });
    });
    const checks: unknown[] = [];
    const completions: unknown[] = [];
    let allow = true;
    const tools = await hostOf(
      url,
      {
        approve: async (check) => {
          checks.push({ ...check, signal: undefined });
          return allow
            ? { allow: true, via: 'auto' }
            : { allow: false, via: 'denied', reason: 'no sampling' };
        },
        complete: async (request) => {
          completions.push({ ...request, signal: undefined });
          return { text: `${request.agentId}: short`, model: 'tiny/tiny-1', finishReason: 'stop' };
        },
      },
      ['a', 'b'],
    );
    const summarise = tools.tools.get('srv__summarise')!;
    const answer = JSON.parse(String(await summarise.handler({ text: 'long' }, context('b'))));
    expect(answer).toEqual({
      role: 'assistant',
      content: { type: 'text', text: 'b: short' },
      model: 'tiny/tiny-1',
      stopReason: 'endTurn',
    });
    expect(completions).toEqual([
      {
        agentId: 'b',
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'Summarise: long' }],
        maxOutputTokens: 64,
        signal: undefined,
      },
    ]);
    expect(checks).toMatchObject([
      { agentId: 'b', sessionKey: 'default:rpc:b', toolName: 'mcp.srv.sampling' },
    ]);

    allow = false;
    await expect(summarise.handler({ text: 'again' }, context('b'))).rejects.toThrow(
      /not approved \(no sampling\)/,
    );
    expect(completions).toHaveLength(1);
  });

  it('turns elicitation/create into an approval request: approved accepts, denied declines, unanswered cancels', async () => {
    const url = await serveStateful((mcp) => {
      mcp.registerTool('deploy', {}, async (extra) => {
        const answer = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: { mode: 'form', message: 'Deploy now?', requestedSchema: schema },
          },
          ElicitResultSchema,
        );
        return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
      });
    });
    const verdicts = [
      { allow: true as const, via: 'approved' },
      { allow: false as const, via: 'denied', reason: 'not today' },
      { allow: false as const, via: 'denied', reason: 'timeout' },
      { allow: true as const, via: 'off' },
      { allow: true as const, via: 'auto' },
    ];
    const checks: Array<{ toolName: string; input: unknown }> = [];
    const tools = await hostOf(url, {
      approve: async (check) => {
        checks.push({ toolName: check.toolName, input: check.input });
        return verdicts.shift()!;
      },
    });
    const deploy = tools.tools.get('srv__deploy')!;
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(JSON.parse(String(await deploy.handler({}, context()))));
    expect(answers).toEqual([
      { action: 'accept', content: { confirm: true } },
      { action: 'decline' },
      { action: 'cancel' },
      { action: 'cancel' },
      { action: 'cancel' },
    ]);
    expect(checks[0]).toEqual({
      toolName: 'mcp.srv.elicitation',
      input: { message: 'Deploy now?', requestedSchema: schema },
    });
  });

  it('runs a tool that requires task augmentation as a task, over stdio', async () => {
    const tools = toolRegistry();
    const servers = mcpSectionSchema.parse({
      servers: {
        tasks: {
          command: process.execPath,
          args: [join(import.meta.dirname, '..', 'test', 'fixtures', 'task-server.mjs')],
        },
      },
    }).servers;
    host = createMcpToolHost({ servers, tools });
    await host.start();
    await until(() => tools.tools.has('tasks__slow_echo'));
    expect(await tools.tools.get('tasks__slow_echo')!.handler({ word: 'later' }, context())).toBe(
      'done: later',
    );
  });
});
