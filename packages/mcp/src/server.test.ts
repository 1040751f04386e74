import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import type { GatewayCall } from './gateway-call.js';
import { createAgentdMcpServer } from './server.js';

async function connected(call: GatewayCall): Promise<Client> {
  const server = await createAgentdMcpServer({ call, graphPollMs: 1 });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(clientSide);
  return client;
}

describe('createAgentdMcpServer', () => {
  it('maps each tool to one gateway call, leaving out arguments not given', async () => {
    const calls: Array<[string, unknown]> = [];
    const client = await connected(async (method, params) => {
      calls.push([method, params]);
      return { ok: true };
    });
    await client.callTool({ name: 'session_history', arguments: { sessionKey: 'a:b:c' } });
    await client.callTool({ name: 'ask_agent', arguments: { message: 'hi', agentId: 'helper' } });
    await client.callTool({ name: 'memory_store', arguments: { content: 'fact', tags: ['x'] } });
    expect(calls).toEqual([
      ['session.history', { key: 'a:b:c' }],
      ['agent.execute', { message: 'hi', agentId: 'helper' }],
      ['memory.store', { content: 'fact', tags: ['x'] }],
    ]);
  });

  it('turns a gateway refusal into a tool error carrying its message and code', async () => {
    const client = await connected(async () => {
      throw { code: -32603, message: "Insufficient scope: requires 'admin'" };
    });
    const result = await client.callTool({ name: 'memory_store', arguments: { content: 'x' } });
    expect(result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: "Insufficient scope: requires 'admin' (-32603)" }],
    });
  });

  it('waits for a graph run by polling its status, then answers its outputs; wait false answers the run id', async () => {
    let polls = 0;
    const client = await connected(async (method) => {
      if (method === 'graph.execute') return { runId: 'run-1' };
      if (method === 'graph.status') return { status: ++polls < 3 ? 'running' : 'completed' };
      if (method === 'graph.outputs') return { outputs: { only: 'done' } };
      throw new Error(`unexpected ${method}`);
    });
    const waited = await client.callTool({ name: 'graph_execute', arguments: { graphId: 'g' } });
    expect(waited.structuredContent).toEqual({
      runId: 'run-1',
      status: 'completed',
      finished: true,
      outputs: { only: 'done' },
    });
    expect(polls).toBe(3);
    const started = await client.callTool({
      name: 'graph_execute',
      arguments: { graphId: 'g', wait: false },
    });
    expect(started.structuredContent).toEqual({ runId: 'run-1' });
  });

  it('validates arguments against the tool schema before any gateway call', async () => {
    let called = false;
    const client = await connected(async () => {
      called = true;
      return {};
    });
    const result = await client.callTool({ name: 'ask_agent', arguments: { message: '' } });
    expect(result.isError).toBe(true);
    expect(called).toBe(false);
  });
});
