import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHttpClient } from '@agentd/client';
import type { NodeExecutor, NodeRequest } from '@agentd/graph-engine';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningDaemon } from '../src/index.js';
import { daemonPool, type RpcClient, rpcClient, rpcFailure } from './helpers.js';

const pool = daemonPool('agentd-graph-');
afterEach(() => pool.cleanup());

type Call = RpcClient['call'];

/** Admin calls to `daemon`. */
const caller = (daemon: RunningDaemon): Call => rpcClient(daemon.url).call;

async function finished(call: Call, runId: string): Promise<Record<string, unknown>> {
  for (;;) {
    const status = await call('graph.status', { runId });
    if (status.status !== 'running' && status.status !== 'pending') return status;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Answers each node with an uppercase echo of its prompt; nodes named fail-* throw. */
const upper: NodeExecutor = {
  run: async (request: NodeRequest) => {
    if (request.nodeId.startsWith('fail')) throw new Error('model unavailable');
    return request.prompt.toUpperCase();
  },
};

const pipeline = {
  name: 'research',
  nodes: [
    { id: 'plan', prompt: 'plan {{inputs.topic}}' },
    { id: 'left', prompt: 'left {{nodes.plan.output}}', dependsOn: ['plan'] },
    { id: 'right', prompt: 'right {{nodes.plan.output}}', dependsOn: ['plan'] },
    { id: 'merge', prompt: '{{nodes.left.output}} & {{nodes.right.output}}', dependsOn: ['left', 'right'] },
  ],
};

describe('graph namespace', () => {
  it('defines, executes, reports and lists a pipeline end to end', async () => {
    const daemon = await pool.start(pool.tempDir(), { graphExecutor: upper });
    const call = caller(daemon);
    const defined = await call<{ graphId: string; nodeCount: number }>('graph.define', pipeline);
    expect(defined.nodeCount).toBe(4);
    const { runId } = await call<{ runId: string }>('graph.execute', {
      graphId: defined.graphId,
      inputs: { topic: 'bees' },
      concurrency: 2,
    });
    const status = await finished(call, runId);
    expect(status).toMatchObject({ runId, graphId: defined.graphId, status: 'completed' });
    expect(status.nodes).toContainEqual({
      id: 'merge',
      status: 'completed',
      output: 'LEFT PLAN BEES & RIGHT PLAN BEES',
    });
    expect(await call('graph.outputs', { runId, nodeIds: ['plan'] })).toEqual({
      outputs: { plan: 'PLAN BEES' },
      source: 'memory',
    });
    expect(readFileSync(join(daemon.dataDir, 'graph-runs', runId, 'merge.txt'), 'utf8')).toBe(
      'LEFT PLAN BEES & RIGHT PLAN BEES',
    );
    const runs = await call<{ runs: Array<Record<string, unknown>> }>('graph.runs', {
      graphId: defined.graphId,
    });
    expect(runs.runs).toEqual([expect.objectContaining({ runId, status: 'completed', nodeCount: 4 })]);
    const detail = await call('graph.runDetail', { runId });
    expect(detail).toMatchObject({ name: 'research', inputs: { topic: 'bees' }, concurrency: 2 });
  });

  it('saves, loads, lists and deletes named graphs', async () => {
    const daemon = await pool.start(pool.tempDir(), { graphExecutor: upper });
    const call = caller(daemon);
    const { graphId } = await call<{ graphId: string }>('graph.define', pipeline);
    expect(await call('graph.save', { graphId, name: 'Weekly research' })).toMatchObject({
      name: 'Weekly research',
      nodeCount: 4,
    });
    const listed = await call<{ graphs: unknown[] }>('graph.list');
    expect(listed.graphs).toEqual([{ name: 'Weekly research', createdAt: expect.any(Number), nodeCount: 4 }]);
    const loaded = await call<{ graphId: string }>('graph.load', { name: 'Weekly research' });
    expect(loaded.graphId).not.toBe(graphId);
    const { runId } = await call<{ runId: string }>('graph.execute', { graphId: loaded.graphId });
    expect((await finished(call, runId)).status).toBe('completed');
    expect(await call('graph.delete', { name: 'Weekly research' })).toEqual({
      deleted: true,
      name: 'Weekly research',
    });
    expect(await call('graph.list')).toEqual({ graphs: [] });
    // Deleting the saved name leaves runs and their files alone.
    expect((await call('graph.outputs', { runId })).source).toBe('memory');
    const missing = await rpcFailure(call('graph.load', { name: 'Weekly research' }));
    expect(missing.code).toBe(-32004);
    expect(missing.message).toBe('Graph not found: Weekly research');
  });

  it('answers -32602 naming the field for invalid definitions and reports each authoring', async () => {
    const events: Array<Record<string, unknown>> = [];
    const daemon = await pool.start(pool.tempDir(), {
      graphExecutor: upper,
      events: { emit: (name, payload) => void (name === 'pipeline:authored' && events.push(payload)) },
    });
    const call = caller(daemon);
    const cycle = await rpcFailure(
      call('graph.define', {
        nodes: [
          { id: 'a', prompt: 'x', dependsOn: ['b'] },
          { id: 'b', prompt: 'x', dependsOn: ['a'] },
        ],
      }),
    );
    expect(cycle.code).toBe(-32602);
    expect(cycle.message).toMatch(/^Invalid params: nodes: cycle: (a → b → a|b → a → b)$/);
    const duplicate = await rpcFailure(
      call('graph.define', {
        nodes: [
          { id: 'a', prompt: 'x' },
          { id: 'a', prompt: 'y' },
        ],
      }),
    );
    expect(duplicate.message).toBe("Invalid params: nodes.1.id: duplicate node id 'a'");
    expect((duplicate.data as { issues: unknown[] }).issues).toHaveLength(1);
    const dangling = await rpcFailure(
      call('graph.define', { nodes: [{ id: 'a', prompt: 'x', dependsOn: ['zz'] }] }),
    );
    expect(dangling.message).toContain('nodes.0.dependsOn.0');
    const malformed = await rpcFailure(call('graph.define', { nodes: 'all of them' }));
    expect(malformed.code).toBe(-32602);
    expect(malformed.message).toContain('nodes');
    const { graphId } = await call<{ graphId: string }>('graph.define', pipeline);
    await call('graph.execute', { graphId });
    const badExecute = await rpcFailure(call('graph.execute', { graphId, concurrency: 0 }));
    expect(badExecute.code).toBe(-32602);
    expect(badExecute.message).toContain('concurrency');

    expect(events.map((event) => [event.action, event.valid, event.invalidReason ?? null])).toEqual([
      ['define', false, 'validation'],
      ['define', false, 'validation'],
      ['define', false, 'validation'],
      ['define', false, 'parse'],
      ['define', true, null],
      ['execute', true, null],
      ['execute', false, 'parse'],
    ]);
    expect(events.every((event) => event.origin === 'rpc' && event.capabilityClass === 'unknown')).toBe(true);
  });

  it("reports the authoring agent's capability class when an agent defines a pipeline with its tool", async () => {
    const events: Array<Record<string, unknown>> = [];
    const daemon = await pool.start(pool.tempDir(), {
      config: {
        gateway: { wsHeartbeatMs: 0 },
        providers: {
          entries: {
            tiny: { type: 'offline', models: ['offline-nano'], capabilities: { capabilityClass: 'nano' } },
          },
        },
        agents: { entries: { planner: { name: 'Planner', provider: 'tiny', tools: ['graph_define'] } } },
      },
      events: { emit: (name, payload) => void (name === 'pipeline:authored' && events.push(payload)) },
    });
    const call = caller(daemon);
    await call('agent.execute', {
      agentId: 'planner',
      message: '/tool graph_define {"nodes":[{"id":"a","prompt":"hello"}]}',
    });
    expect(events).toEqual([
      expect.objectContaining({ action: 'define', valid: true, capabilityClass: 'nano' }),
    ]);
    expect(events[0]?.origin).not.toBe('rpc');
  });

  it('answers -32004 for unknown graphs, runs and nodes', async () => {
    const daemon = await pool.start(pool.tempDir(), { graphExecutor: upper });
    const call = caller(daemon);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['graph.execute', { graphId: 'nope' }, 'Graph not found: nope'],
      ['graph.save', { graphId: 'nope', name: 'n' }, 'Graph not found: nope'],
      ['graph.delete', { name: 'nope' }, 'Graph not found: nope'],
      ['graph.status', { runId: 'r1' }, 'Run not found: r1'],
      ['graph.outputs', { runId: 'r1' }, 'Run not found: r1'],
      ['graph.cancel', { runId: 'r1' }, 'Run not found: r1'],
      ['graph.runDetail', { runId: 'r1' }, 'Run not found: r1'],
      ['graph.deleteRun', { runId: 'r1' }, 'Run not found: r1'],
    ];
    for (const [method, params, message] of cases) {
      const error = await rpcFailure(call(method, params));
      expect([method, error.code, error.message]).toEqual([method, -32004, message]);
    }
    const { graphId } = await call<{ graphId: string }>('graph.define', pipeline);
    const { runId } = await call<{ runId: string }>('graph.execute', { graphId });
    await finished(call, runId);
    const node = await rpcFailure(call('graph.outputs', { runId, nodeIds: ['ghost'] }));
    expect([node.code, node.message]).toEqual([-32004, 'Node not found: ghost']);
    const badId = await rpcFailure(call('graph.status', { runId: '../etc' }));
    expect(badId.code).toBe(-32602);
  });

  it('propagates failures: dependants skipped, independent branches complete, run failed', async () => {
    const daemon = await pool.start(pool.tempDir(), { graphExecutor: upper });
    const call = caller(daemon);
    const { graphId } = await call<{ graphId: string }>('graph.define', {
      nodes: [
        { id: 'fail-a', prompt: 'x' },
        { id: 'after', prompt: 'x', dependsOn: ['fail-a'] },
        { id: 'solo', prompt: 'fine' },
      ],
    });
    const { runId } = await call<{ runId: string }>('graph.execute', { graphId });
    const status = await finished(call, runId);
    expect(status.status).toBe('failed');
    expect(status.nodes).toEqual([
      { id: 'fail-a', status: 'failed', error: 'model unavailable' },
      { id: 'after', status: 'skipped', error: "dependency 'fail-a' did not complete" },
      { id: 'solo', status: 'completed', output: 'FINE' },
    ]);
    expect(await call('graph.outputs', { runId })).toEqual({
      outputs: { 'fail-a': null, after: null, solo: 'FINE' },
      source: 'memory',
    });
  });

  it('cancels a run, refuses to delete it while running, then deletes its records and files', async () => {
    const release: Array<() => void> = [];
    const daemon = await pool.start(pool.tempDir(), {
      graphExecutor: {
        run: (request) => new Promise((resolve) => release.push(() => resolve(`${request.nodeId} done`))),
      },
    });
    const call = caller(daemon);
    const { graphId } = await call<{ graphId: string }>('graph.define', {
      nodes: [
        { id: 'first', prompt: 'x' },
        { id: 'second', prompt: 'x', dependsOn: ['first'] },
      ],
    });
    const { runId } = await call<{ runId: string }>('graph.execute', { graphId });
    while (release.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const refused = await rpcFailure(call('graph.deleteRun', { runId }));
    expect([refused.code, refused.message]).toEqual([-32009, `Run is still running: ${runId}`]);
    expect(await call('graph.cancel', { runId })).toEqual({ runId, status: 'running', cancelled: true });
    release[0]!();
    const status = await finished(call, runId);
    expect(status.status).toBe('cancelled');
    expect(status.nodes).toEqual([
      { id: 'first', status: 'completed', output: 'first done' },
      { id: 'second', status: 'cancelled', error: 'run cancelled before the node started' },
    ]);
    expect(release).toHaveLength(1);
    expect(await call('graph.deleteRun', { runId })).toEqual({ deleted: true, runId });
    expect((await rpcFailure(call('graph.status', { runId }))).code).toBe(-32004);
    expect(() => readFileSync(join(daemon.dataDir, 'graph-runs', runId, 'first.txt'))).toThrow();
  });

  it('cuts outputs at 12,000 characters, status at 500, and reads them from disk after a restart', async () => {
    const dataDir = pool.tempDir();
    const long = 'ab'.repeat(10_000);
    const first = await pool.start(dataDir, { graphExecutor: { run: async () => long } });
    let call = caller(first);
    const { graphId } = await call<{ graphId: string }>('graph.define', {
      nodes: [{ id: 'long', prompt: 'x' }],
    });
    const { runId } = await call<{ runId: string }>('graph.execute', { graphId });
    const status = await finished(call, runId);
    expect((status.nodes as Array<{ output: string }>)[0]!.output).toBe(long.slice(0, 500));
    const inMemory = await call<{ outputs: Record<string, string>; source: string }>('graph.outputs', {
      runId,
    });
    expect(inMemory.source).toBe('memory');
    expect(inMemory.outputs.long).toBe(long.slice(0, 12_000));
    await first.stop();

    call = caller(await pool.start(dataDir, { graphExecutor: upper }));
    expect(await call('graph.outputs', { runId })).toEqual({
      outputs: { long: long.slice(0, 12_000) },
      source: 'disk',
    });
    expect(
      ((await call('graph.status', { runId })).nodes as Array<{ output: string }>)[0]!.output,
    ).toHaveLength(500);
  });

  it('runs graph nodes as turns of the built-in agent runtime when no executor is given', async () => {
    const daemon = await pool.start(pool.tempDir());
    const call = caller(daemon);
    const { graphId } = await call<{ graphId: string }>('graph.define', {
      nodes: [
        { id: 'first', prompt: 'Say {{inputs.word}}' },
        { id: 'second', prompt: 'Repeat: {{nodes.first.output}}', dependsOn: ['first'] },
      ],
    });
    const { runId } = await call<{ runId: string }>('graph.execute', { graphId, inputs: { word: 'hello' } });
    const status = await finished(call, runId);
    expect(status.status).toBe('completed');
    const { outputs } = await call<{ outputs: Record<string, string> }>('graph.outputs', { runId });
    // The offline provider answers every node, and says it is offline.
    expect(outputs.first).toMatch(/offline/i);
    expect(outputs.second).toMatch(/offline/i);
    const history = await call<{ messages: Array<{ role: string; content: string }> }>('session.history', {
      key: `graph:${runId}:second`,
    });
    expect(history.messages[0]?.content).toContain('Repeat: ');
  });

  it('lets an rpc-scoped token use the graph namespace', async () => {
    const daemon = await pool.start(pool.tempDir(), { graphExecutor: upper });
    const admin = caller(daemon);
    const { token } = await admin<{ token: string }>('tokens.create', { scopes: ['rpc'] });
    const client = createHttpClient({ url: daemon.url, token });
    expect(await client.call('graph.list' as 'system.ping', {} as never)).toEqual({ graphs: [] });
  });
});
