import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHttpClient } from '@agentd/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningDaemon } from '../src/index.js';
import { daemonPool, eventually, type RpcClient, rpcClient } from './helpers.js';

// Every path a tool call of a tenant's turn can take, against one daemon whose operator agent
// `ops` may use the tools every tenant shares (orchestrate, the workspace, media) and memory.
const pool = daemonPool('agentd-tenant-paths-');
let daemon: RunningDaemon;
let dataDir: string;
let admin: RpcClient;
/** An `rpc` token bound to tenant `acme`. */
let acme: ReturnType<typeof createHttpClient>;
let acmeToken: string;

const REFUSED = /may act on state every tenant shares; a turn of tenant 'acme' may not use it/;
/** A workspace file of `ops` that every tenant talking to `ops` would share. */
const SHARED_FILE = 'operator-notes.txt';
/** What the jailed script leaves behind if it ever runs for acme. */
const MARKER = 'acme-was-here.txt';

/** The offline provider's tool directive. */
const toolCall = (tool: string, input: Record<string, unknown>) => `/tool ${tool} ${JSON.stringify(input)}`;

/** The probe's script: the shared workspace, and memory through the capability socket. */
const orchestrateTask = toolCall('orchestrate', {
  script: `
    import { invoke } from '/agentd/orch.mjs';
    import fs from 'node:fs';
    fs.writeFileSync('/workspace/${MARKER}', fs.readFileSync('/workspace/${SHARED_FILE}', 'utf8'));
    const found = await invoke('memory_search', { query: 'kiwi' });
    await invoke('memory_store', { content: 'planted by a tenant script' });
    console.log(JSON.stringify(found));
  `,
});
const memoryTask = toolCall('memory_search', { query: 'kiwi' });

beforeAll(async () => {
  dataDir = pool.tempDir();
  const timeouts = { turnMs: 120_000, stallMs: 90_000, toolMs: 60_000 };
  daemon = await pool.start(dataDir, {
    config: {
      gateway: { wsHeartbeatMs: 0 },
      memory: { enabled: true },
      agents: {
        entries: {
          ops: {
            name: 'Ops',
            tools: [
              'orchestrate',
              'workspace_*',
              'media_analyze_image',
              'memory_search',
              'memory_store',
              'subagent_spawn',
            ],
            timeouts,
          },
        },
      },
    },
  });
  admin = rpcClient(daemon.url);
  for (const tenant of ['acme', 'globex', undefined]) {
    await admin.call('memory.store', {
      content: `the kiwi of ${tenant ?? 'the default tenant'}`,
      agentId: 'ops',
      ...(tenant ? { tenant } : {}),
    });
  }
  const workspace = join(dataDir, 'workspaces', 'ops');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, SHARED_FILE), 'the operator keeps this for every tenant');
  const created = await admin.call<{ token: string }>('tokens.create', {
    scopes: ['rpc'],
    id: 'acme-app',
    tenantId: 'acme',
  });
  acmeToken = created.token;
  acme = createHttpClient({ url: daemon.url, token: acmeToken });
}, 60_000);
afterAll(() => pool.cleanup());

/** The tool results of a session, in order, as the admin reads them. */
async function toolResults(sessionKey: string): Promise<Array<{ toolName: string; content: string }>> {
  const history = await admin.call<{
    messages: Array<{ role: string; toolName?: string; content: string }>;
  }>('session.history', { key: sessionKey });
  return history.messages
    .filter((message) => message.role === 'tool')
    .map((message) => ({ toolName: message.toolName ?? '', content: message.content }));
}

/** The tenant's script never ran: no file in the shared workspace, nothing in anyone's memory. */
async function expectScriptNeverRan(): Promise<void> {
  expect(existsSync(join(dataDir, 'workspaces', 'ops', MARKER))).toBe(false);
  for (const tenant of ['acme', 'default']) {
    const found = await admin.call<{ results: unknown[] }>('memory.search', { query: 'planted', tenant });
    expect(found.results, tenant).toEqual([]);
  }
}

/** A memory search result that shows acme's entry and nothing of globex or the default tenant. */
function expectAcmeMemoryOnly(content: string): void {
  const { results } = JSON.parse(content) as { results: Array<{ content: string }> };
  expect(results.map((result) => result.content)).toEqual(['the kiwi of acme']);
}

async function runEnded(runId: string): Promise<void> {
  await eventually(async () => {
    const run = await admin.call<{ status: string }>('session.run_status', { run_id: runId });
    return run.status === 'running' ? undefined : run;
  }, 60_000);
}

describe("a tenant's tool calls, on every path", () => {
  it("direct: a turn's own calls of shared tools are refused, its memory tools see only the tenant", async () => {
    const key = 'acme:chat:direct';
    for (const message of [
      orchestrateTask,
      toolCall('workspace_read', { path: SHARED_FILE }),
      toolCall('media_analyze_image', { path: SHARED_FILE }),
      memoryTask,
    ]) {
      await acme.call('session.send', { key, agentId: 'ops', message });
    }
    const results = await toolResults(key);
    expect(results.map((result) => result.toolName)).toEqual([
      'orchestrate',
      'workspace_read',
      'media_analyze_image',
      'memory_search',
    ]);
    for (const refused of results.slice(0, 3)) expect(refused.content, refused.toolName).toMatch(REFUSED);
    expectAcmeMemoryOnly(results[3]?.content ?? '');
    await expectScriptNeverRan();
  });

  it("orchestrate's capability socket: a tenant's turn never gets a jailed script, so its invoke() reaches nothing", async () => {
    // The probe: a sub-agent run of the tenant whose task runs a script through `orchestrate`.
    await acme.call('session.send', { key: 'acme:chat:probe', agentId: 'ops', message: 'hello' });
    const run = (await acme.call('session.spawn', {
      parentKey: 'acme:chat:probe',
      task: orchestrateTask,
      agentId: 'ops',
    })) as { runId: string; sessionKey: string };
    await runEnded(run.runId);
    const [result] = await toolResults(run.sessionKey);
    expect(result).toMatchObject({ toolName: 'orchestrate', content: expect.stringMatching(REFUSED) });
    await expectScriptNeverRan();
  });

  it('MCP: a turn asked for over /mcp with a bound token is the tenant turn', async () => {
    const client = new Client({ name: 'tenant-paths', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${acmeToken}` } },
      }),
    );
    try {
      const sessionKey = 'acme:mcp:ask';
      for (const message of [orchestrateTask, memoryTask]) {
        const answer = await client.callTool({
          name: 'ask_agent',
          arguments: { message, agentId: 'ops', sessionKey },
        });
        expect(answer.isError, message).not.toBe(true);
      }
      const results = await toolResults(sessionKey);
      expect(results[0]).toMatchObject({ toolName: 'orchestrate', content: expect.stringMatching(REFUSED) });
      expectAcmeMemoryOnly(results[1]?.content ?? '');
      // The MCP server's own memory tool is the gateway's memory.search as the caller.
      const found = await client.callTool({
        name: 'memory_search',
        arguments: { query: 'kiwi', agentId: 'ops' },
      });
      const text = (found.content as Array<{ type: string; text?: string }>)[0]?.text ?? '';
      expect(text).toContain('the kiwi of acme');
      expect(text).not.toMatch(/kiwi of (globex|the default tenant)/);
    } finally {
      await client.close();
    }
    await expectScriptNeverRan();
  });

  it("graph nodes: a tenant's graph runs its nodes as tenant turns", async () => {
    const { graphId } = (await acme.call('graph.define', {
      nodes: [
        { id: 'script', prompt: orchestrateTask, agentId: 'ops' },
        { id: 'recall', prompt: memoryTask, agentId: 'ops' },
      ],
    })) as { graphId: string };
    const { runId } = (await acme.call('graph.execute', { graphId })) as { runId: string };
    await eventually(async () => {
      const status = (await acme.call('graph.status', { runId })) as { status: string };
      return status.status === 'completed' ? status : undefined;
    }, 60_000);
    const [script] = await toolResults(`acme:graph:${runId}:script`);
    expect(script).toMatchObject({ toolName: 'orchestrate', content: expect.stringMatching(REFUSED) });
    const [recall] = await toolResults(`acme:graph:${runId}:recall`);
    expectAcmeMemoryOnly(recall?.content ?? '');
    await expectScriptNeverRan();
  });

  it("sub-agents: a child spawned by a tenant's turn inherits the tenant, with the same refusals", async () => {
    const key = 'acme:chat:parent';
    for (const task of [orchestrateTask, memoryTask]) {
      await acme.call('session.send', {
        key,
        agentId: 'ops',
        message: toolCall('subagent_spawn', { task, wait: true, timeoutMs: 60_000 }),
      });
    }
    const spawned = await toolResults(key);
    expect(spawned.map((result) => result.toolName)).toEqual(['subagent_spawn', 'subagent_spawn']);
    const children = spawned.map((result) => JSON.parse(result.content) as { sessionKey: string });
    const [script] = await toolResults(children[0]?.sessionKey ?? '');
    expect(script).toMatchObject({ toolName: 'orchestrate', content: expect.stringMatching(REFUSED) });
    const [recall] = await toolResults(children[1]?.sessionKey ?? '');
    expectAcmeMemoryOnly(recall?.content ?? '');
    await expectScriptNeverRan();
  });
});
