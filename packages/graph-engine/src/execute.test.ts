import { type Deferred, deferred } from '@agentd/test-support';
import { describe, expect, it } from 'vitest';
import { compileGraph, type GraphNodeDefinition } from './definition.js';
import { executeGraph, type NodeExecutor, type NodeRequest, type NodeState } from './execute.js';

/** An executor answering from a script, recording every request and the peak concurrency. */
function scripted(answer: (request: NodeRequest) => string | Promise<string>) {
  const calls: NodeRequest[] = [];
  let inFlight = 0;
  let peak = 0;
  const executor: NodeExecutor = {
    async run(request) {
      calls.push(request);
      inFlight++;
      peak = Math.max(peak, inFlight);
      try {
        return await answer(request);
      } finally {
        inFlight--;
      }
    },
  };
  return { executor, calls, peak: () => peak };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
const graphOf = (nodes: GraphNodeDefinition[]) => compileGraph({ nodes });

// Ordering, concurrency, failure, retries and timeouts.
describe('executeGraph', () => {
  it('runs a diamond in dependency order and feeds outputs into later prompts', async () => {
    const graph = graphOf([
      { id: 'a', prompt: 'topic {{inputs.topic}}' },
      { id: 'b', prompt: 'left of {{nodes.a.output}}', dependsOn: ['a'] },
      { id: 'c', prompt: 'right of {{nodes.a.output}}', dependsOn: ['a'] },
      { id: 'd', prompt: '{{nodes.b.output}} + {{nodes.c.output}}', dependsOn: ['b', 'c'] },
    ]);
    const script = scripted((request) => `<${request.prompt}>`);
    const execution = executeGraph({ graph, executor: script.executor, inputs: { topic: 'graphs' } });
    expect(await execution.done).toBe('completed');
    expect(script.calls.map((call) => call.nodeId)).toEqual(['a', 'b', 'c', 'd']);
    expect(execution.output('d')).toBe('<<left of <topic graphs>> + <right of <topic graphs>>>');
    expect(execution.nodes().every((node) => node.status === 'completed' && node.attempts === 1)).toBe(true);
  });

  it('fans out up to the concurrency limit and fans back in', async () => {
    const width = 12;
    const graph = graphOf([
      { id: 'source', prompt: 'go' },
      ...Array.from({ length: width }, (_, index) => ({
        id: `w${index}`,
        prompt: `worker ${index}`,
        dependsOn: ['source'],
      })),
      {
        id: 'sink',
        prompt: Array.from({ length: width }, (_, index) => `{{nodes.w${index}.output}}`).join(','),
        dependsOn: Array.from({ length: width }, (_, index) => `w${index}`),
      },
    ]);
    const script = scripted(async (request) => {
      await tick();
      return request.nodeId;
    });
    const execution = executeGraph({ graph, executor: script.executor, concurrency: 3 });
    expect(await execution.done).toBe('completed');
    expect(script.peak()).toBe(3);
    expect(script.calls.at(-1)?.prompt).toBe(
      Array.from({ length: width }, (_, index) => `w${index}`).join(','),
    );
  });

  it('skips the dependants of a failed node while independent branches go on', async () => {
    const graph = graphOf([
      { id: 'bad', prompt: 'x' },
      { id: 'child', prompt: 'x', dependsOn: ['bad'] },
      { id: 'grandchild', prompt: 'x', dependsOn: ['child', 'other'] },
      { id: 'other', prompt: 'x' },
      { id: 'after-other', prompt: 'x', dependsOn: ['other'] },
    ]);
    const script = scripted(async (request) => {
      if (request.nodeId === 'bad') throw new Error('model refused');
      await tick();
      return 'ok';
    });
    const settled: string[] = [];
    const execution = executeGraph({
      graph,
      executor: script.executor,
      listener: { nodeSettled: (id, state) => void settled.push(`${id}:${state.status}`) },
    });
    expect(await execution.done).toBe('failed');
    const byId = Object.fromEntries(execution.nodes().map((node) => [node.id, node]));
    expect(byId.bad).toMatchObject({ status: 'failed', error: 'model refused' });
    expect(byId.child).toMatchObject({ status: 'skipped', error: "dependency 'bad' did not complete" });
    expect(byId.grandchild!.status).toBe('skipped');
    expect(byId.other!.status).toBe('completed');
    expect(byId['after-other']!.status).toBe('completed');
    expect(script.calls.map((call) => call.nodeId).sort()).toEqual(['after-other', 'bad', 'other']);
    expect(settled.sort()).toEqual([
      'after-other:completed',
      'bad:failed',
      'child:skipped',
      'grandchild:skipped',
      'other:completed',
    ]);
  });

  it('retries a failing node up to its retries and reports the attempt number', async () => {
    let failuresLeft = 2;
    const script = scripted((request) => {
      if (failuresLeft-- > 0) throw new Error(`flaky ${request.attempt}`);
      return `ok on ${request.attempt}`;
    });
    const ok = executeGraph({
      graph: graphOf([{ id: 'a', prompt: 'x', retries: 2 }]),
      executor: script.executor,
    });
    expect(await ok.done).toBe('completed');
    expect(ok.node('a')).toMatchObject({ status: 'completed', attempts: 3, output: 'ok on 3' });

    failuresLeft = 5;
    const gaveUp = executeGraph({
      graph: graphOf([{ id: 'a', prompt: 'x', retries: 1 }]),
      executor: script.executor,
      retryDelayMs: 1,
    });
    expect(await gaveUp.done).toBe('failed');
    expect(gaveUp.node('a')).toMatchObject({ status: 'failed', attempts: 2, error: 'flaky 2' });
  });

  it('fails an attempt that runs past its timeout even if the executor ignores the signal', async () => {
    const signals: AbortSignal[] = [];
    const executor: NodeExecutor = {
      run: (request) => {
        signals.push(request.signal);
        return request.attempt === 1 ? new Promise<string>(() => undefined) : Promise.resolve('second try');
      },
    };
    const slow = executeGraph({ graph: graphOf([{ id: 'slow', prompt: 'x', timeoutMs: 30 }]), executor });
    expect(await slow.done).toBe('failed');
    expect(slow.node('slow')!.error).toBe("node 'slow' timed out after 30 ms");
    expect(signals[0]!.aborted).toBe(true);

    const retried = executeGraph({
      graph: graphOf([{ id: 'slow', prompt: 'x', timeoutMs: 30, retries: 1 }]),
      executor,
    });
    expect(await retried.done).toBe('completed');
    expect(retried.node('slow')).toMatchObject({ attempts: 2, output: 'second try' });
  });

  it('uses the default timeout for nodes that set none', async () => {
    const execution = executeGraph({
      graph: graphOf([{ id: 'a', prompt: 'x' }]),
      executor: { run: () => new Promise<string>(() => undefined) },
      defaultTimeoutMs: 20,
    });
    expect(await execution.done).toBe('failed');
    expect(execution.node('a')!.error).toContain('timed out after 20 ms');
  });
});

// Cancel, interrupt and resume.
describe('executeGraph', () => {
  it('on cancel lets in-flight nodes finish, dispatches nothing new and ends cancelled', async () => {
    const graph = graphOf([
      { id: 'a', prompt: 'x' },
      { id: 'b', prompt: 'x' },
      { id: 'c', prompt: 'x', dependsOn: ['a'] },
      { id: 'd', prompt: 'x' },
    ]);
    const gates = new Map<string, Deferred<string>>();
    const script = scripted((request) => {
      const gate = deferred<string>();
      gates.set(request.nodeId, gate);
      return gate.promise;
    });
    const execution = executeGraph({ graph, executor: script.executor, concurrency: 2 });
    await tick();
    expect([...gates.keys()]).toEqual(['a', 'b']);
    expect(execution.cancel()).toBe(true);
    expect(execution.cancel()).toBe(false);
    gates.get('a')!.resolve('a done');
    await tick();
    expect(execution.status).toBe('running');
    gates.get('b')!.resolve('b done');
    expect(await execution.done).toBe('cancelled');
    expect(script.calls.map((call) => call.nodeId)).toEqual(['a', 'b']);
    const statuses = Object.fromEntries(execution.nodes().map((node) => [node.id, node.status]));
    expect(statuses).toEqual({ a: 'completed', b: 'completed', c: 'cancelled', d: 'cancelled' });
    expect(execution.output('a')).toBe('a done');
    expect(execution.cancel()).toBe(false);
  });

  it('does not retry an in-flight node after a cancel', async () => {
    const gate = deferred<string>();
    const execution = executeGraph({
      graph: graphOf([{ id: 'a', prompt: 'x', retries: 3 }]),
      executor: { run: () => gate.promise },
    });
    await tick();
    execution.cancel();
    gate.reject(new Error('broke'));
    expect(await execution.done).toBe('cancelled');
    expect(execution.node('a')).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('on interrupt aborts in-flight attempts and reports nothing for them', async () => {
    const signals: AbortSignal[] = [];
    const settled: string[] = [];
    const execution = executeGraph({
      graph: graphOf([
        { id: 'a', prompt: 'x' },
        { id: 'b', prompt: 'x', dependsOn: ['a'] },
      ]),
      executor: {
        run: (request) => {
          signals.push(request.signal);
          return new Promise<string>(() => undefined);
        },
      },
      listener: { nodeSettled: (id) => void settled.push(id) },
    });
    await tick();
    execution.interrupt();
    expect(await execution.done).toBe('interrupted');
    expect(signals[0]!.aborted).toBe(true);
    expect(settled).toEqual([]);
    expect(execution.node('a')!.status).toBe('running');
  });

  it('resumes from carried-over states without re-running completed nodes', async () => {
    const graph = graphOf([
      { id: 'a', prompt: 'x' },
      { id: 'b', prompt: 'after {{nodes.a.output}}', dependsOn: ['a'] },
      { id: 'broken', prompt: 'x' },
      { id: 'c', prompt: 'x', dependsOn: ['broken'] },
    ]);
    const script = scripted((request) => request.prompt);
    const resumeFrom = new Map<string, NodeState>([
      ['a', { status: 'completed', output: 'kept', attempts: 1 }],
      ['b', { status: 'running', attempts: 1 }],
      ['broken', { status: 'failed', error: 'earlier', attempts: 1 }],
    ]);
    const execution = executeGraph({ graph, executor: script.executor, resumeFrom });
    expect(await execution.done).toBe('failed');
    expect(script.calls.map((call) => [call.nodeId, call.prompt, call.attempt])).toEqual([
      ['b', 'after kept', 1],
    ]);
    expect(execution.node('b')).toMatchObject({ status: 'completed', attempts: 2 });
    expect(execution.node('c')!.status).toBe('skipped');
  });

  it('starts cancelled when a cancel was recorded before a restart', async () => {
    const script = scripted(() => 'x');
    const execution = executeGraph({
      graph: graphOf([{ id: 'a', prompt: 'x' }]),
      executor: script.executor,
      cancelled: true,
    });
    expect(await execution.done).toBe('cancelled');
    expect(script.calls).toEqual([]);
  });

  it('fails a node whose executor returns something other than a string', async () => {
    const execution = executeGraph({
      graph: graphOf([{ id: 'a', prompt: 'x' }]),
      executor: { run: () => Promise.resolve(42 as unknown as string) },
    });
    expect(await execution.done).toBe('failed');
    expect(execution.node('a')!.error).toContain('non-string');
  });

  it('hands the node agent, or the default agent, to the executor', async () => {
    const script = scripted(() => '');
    await executeGraph({
      graph: graphOf([
        { id: 'a', prompt: 'x', agentId: 'researcher' },
        { id: 'b', prompt: 'x' },
      ]),
      executor: script.executor,
      defaultAgentId: 'main',
      runId: 'r1',
      graphId: 'g1',
    }).done;
    expect(script.calls.map((call) => [call.agentId, call.runId, call.graphId])).toEqual([
      ['researcher', 'r1', 'g1'],
      ['main', 'r1', 'g1'],
    ]);
  });

  it('waits for a completed node to be recorded before starting its dependants', async () => {
    const order: string[] = [];
    const script = scripted((request) => {
      order.push(`run ${request.nodeId}`);
      return 'x';
    });
    await executeGraph({
      graph: graphOf([
        { id: 'a', prompt: 'x' },
        { id: 'b', prompt: 'x', dependsOn: ['a'] },
      ]),
      executor: script.executor,
      listener: {
        nodeSettled: async (id) => {
          await tick();
          order.push(`recorded ${id}`);
        },
      },
    }).done;
    expect(order).toEqual(['run a', 'recorded a', 'run b', 'recorded b']);
  });
});
