import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { type Coordinator, openCoordination } from '@agentd/storage';
import { openTestDatabase, testDialects } from '@agentd/storage/testing';
import { databasePerTest, rejectionOf } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { createEchoExecutor } from './echo-executor.js';
import { GraphError } from './errors.js';
import type { NodeExecutor, NodeRequest } from './execute.js';
import { createGraphService, type GraphService, type GraphServiceOptions } from './service.js';

// Every test runs on both dialects (PostgreSQL when the test server is set): the package's
// dialect conformance suite.
describe.each(testDialects())('graph service on %s', (dialect) => {
  const temp = databasePerTest('graph-service-', (dataDir) => openTestDatabase(dialect, dataDir));
  const services: GraphService[] = [];
  const coordinators: Coordinator[] = [];

  afterEach(async () => {
    for (const service of services.splice(0)) await service.close();
    for (const coordinator of coordinators.splice(0)) await coordinator.close();
  });

  /** On PostgreSQL (cluster mode) each service gets a started coordinator, as the daemon gives it. */
  async function clustered(): Promise<Partial<GraphServiceOptions>> {
    if (dialect !== 'pg') return {};
    const coordinator = await openCoordination(temp.db, { leaseMs: 2000 });
    coordinators.push(coordinator);
    await coordinator.start();
    return { coordinator };
  }

  /** A completed node's kept output: its file on libsql, its `graph_node_outputs` row on PostgreSQL. */
  async function keptOutput(runId: string, nodeId: string): Promise<string | undefined> {
    if (dialect !== 'pg') {
      const file = join(temp.dir, 'graph-runs', runId, `${nodeId}.txt`);
      return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    }
    const row = await temp.db.get<{ output: string }>(
      'SELECT output FROM graph_node_outputs WHERE run_id = ? AND node_id = ?',
      [runId, nodeId],
    );
    return row?.output;
  }

  async function dropOutput(runId: string, nodeId: string): Promise<void> {
    if (dialect !== 'pg') unlinkSync(join(temp.dir, 'graph-runs', runId, `${nodeId}.txt`));
    else
      await temp.db.execute('DELETE FROM graph_node_outputs WHERE run_id = ? AND node_id = ?', [
        runId,
        nodeId,
      ]);
  }

  async function open(options: Partial<GraphServiceOptions> = {}): Promise<GraphService> {
    const service = createGraphService({
      db: temp.db,
      runsDir: join(temp.dir, 'graph-runs'),
      executor: createEchoExecutor(),
      retryDelayMs: 0,
      ...(await clustered()),
      ...options,
    });
    services.push(service);
    await service.start();
    return service;
  }

  const rejection = (promise: Promise<unknown>) => rejectionOf(promise, GraphError);

  const diamond = {
    name: 'diamond',
    nodes: [
      { id: 'a', prompt: 'A({{inputs.x}})' },
      { id: 'b', prompt: 'B({{nodes.a.output}})', dependsOn: ['a'] },
      { id: 'c', prompt: 'C({{nodes.a.output}})', dependsOn: ['a'] },
      { id: 'd', prompt: 'D({{nodes.b.output}},{{nodes.c.output}})', dependsOn: ['b', 'c'] },
    ],
  };

  // Execution, status and outputs (memory and disk).
  describe('createGraphService', () => {
    it('defines, executes and reports status, outputs and files of a diamond', async () => {
      const service = await open();
      const { graphId, nodeCount } = await service.define(diamond);
      expect(nodeCount).toBe(4);
      const { runId } = await service.execute({ graphId, inputs: { x: 1 } });
      expect(await service.waitForRun(runId)).toBe('completed');
      const status = await service.status(runId);
      expect(status).toMatchObject({ runId, graphId, status: 'completed' });
      expect(status.finishedAt).toBeGreaterThanOrEqual(status.startedAt);
      expect(status.nodes.find((node) => node.id === 'd')).toEqual({
        id: 'd',
        status: 'completed',
        output: 'D(B(A(1)),C(A(1)))',
      });
      expect(await service.outputs(runId, ['a', 'd'])).toEqual({
        outputs: { a: 'A(1)', d: 'D(B(A(1)),C(A(1)))' },
        source: 'memory',
      });
      expect(await keptOutput(runId, 'd')).toBe('D(B(A(1)),C(A(1)))');
    });

    it('cuts outputs at 12,000 characters and status outputs at 500, and falls back to disk', async () => {
      const big = 'x'.repeat(20_000);
      const service = await open({ executor: { run: async (r) => (r.nodeId === 'big' ? big : 'small') } });
      const { graphId } = await service.define({
        nodes: [
          { id: 'big', prompt: 'p' },
          { id: 'small', prompt: 'p' },
          { id: 'never', prompt: 'p', dependsOn: ['fails'] },
          { id: 'fails', prompt: 'p', timeoutMs: 1 },
        ],
      });
      const { runId } = await service.execute({ graphId });
      await service.waitForRun(runId);
      const fromMemory = await service.outputs(runId);
      expect(fromMemory.source).toBe('memory');
      expect(fromMemory.outputs.big).toHaveLength(12_000);
      expect(fromMemory.outputs.small).toBe('small');
      const status = await service.status(runId);
      expect(status.nodes.find((node) => node.id === 'big')!.output).toHaveLength(500);

      service.evictMemory();
      const fromDisk = await service.outputs(runId);
      expect(fromDisk.source).toBe('disk');
      expect(fromDisk.outputs).toEqual(fromMemory.outputs);
      expect(await keptOutput(runId, 'big')).toHaveLength(20_000);
    });

    it('answers null for nodes that are not complete and names an unknown node', async () => {
      const service = await open({
        executor: { run: async (r) => (r.nodeId === 'bad' ? Promise.reject(new Error('no')) : 'ok') },
      });
      const { graphId } = await service.define({
        nodes: [
          { id: 'bad', prompt: 'p' },
          { id: 'after', prompt: 'p', dependsOn: ['bad'] },
          { id: 'fine', prompt: 'p' },
        ],
      });
      const { runId } = await service.execute({ graphId });
      expect(await service.waitForRun(runId)).toBe('failed');
      service.evictMemory(runId);
      expect(await service.outputs(runId)).toEqual({
        outputs: { bad: null, after: null, fine: 'ok' },
        source: 'disk',
      });
      const status = await service.status(runId);
      expect(status.nodes).toEqual([
        { id: 'bad', status: 'failed', error: 'no' },
        { id: 'after', status: 'skipped', error: "dependency 'bad' did not complete" },
        { id: 'fine', status: 'completed', output: 'ok' },
      ]);
      expect((await rejection(service.outputs(runId, ['ghost']))).code).toBe('NODE_NOT_FOUND');
    });

    it('serves memory up to memoryRuns finished runs and disk for older ones', async () => {
      const service = await open({ memoryRuns: 1 });
      const { graphId } = await service.define({ nodes: [{ id: 'a', prompt: 'hello' }] });
      const first = await service.execute({ graphId });
      await service.waitForRun(first.runId);
      const second = await service.execute({ graphId });
      await service.waitForRun(second.runId);
      expect((await service.outputs(first.runId)).source).toBe('disk');
      expect(await service.outputs(second.runId)).toEqual({ outputs: { a: 'hello' }, source: 'memory' });
    });
  });

  // Saved graphs, run listings and deletion.
  describe('createGraphService', () => {
    it('saves, lists, loads and deletes named graphs without touching definitions or runs', async () => {
      let clock = 1_000;
      const service = await open({ now: () => clock++ });
      const { graphId } = await service.define(diamond);
      const saved = await service.save(graphId, 'my pipeline');
      expect(saved).toEqual({ name: 'my pipeline', graphId, createdAt: expect.any(Number), nodeCount: 4 });
      expect(await service.list()).toEqual({
        graphs: [{ name: 'my pipeline', createdAt: saved.createdAt, nodeCount: 4 }],
      });
      const loaded = await service.load('my pipeline');
      expect(loaded.graphId).not.toBe(graphId);
      expect(loaded).toMatchObject({ nodeCount: 4, name: 'my pipeline' });
      const { runId } = await service.execute({ graphId: loaded.graphId, inputs: { x: 'y' } });
      expect(await service.waitForRun(runId)).toBe('completed');

      expect(await service.delete('my pipeline')).toEqual({ deleted: true, name: 'my pipeline' });
      expect(await service.list()).toEqual({ graphs: [] });
      expect((await rejection(service.load('my pipeline'))).code).toBe('SAVED_GRAPH_NOT_FOUND');
      expect((await rejection(service.delete('my pipeline'))).message).toBe('Graph not found: my pipeline');
      // The definition and the run outlive the saved name.
      expect((await service.status(runId)).status).toBe('completed');
      expect(await service.execute({ graphId: loaded.graphId })).toHaveProperty('runId');
      expect((await rejection(service.save('nope', 'x'))).code).toBe('GRAPH_NOT_FOUND');
      expect((await rejection(service.save(graphId, 'bad\nname'))).code).toBe('INVALID_ARGUMENT');
    });

    it('replaces a saved graph of the same name', async () => {
      const service = await open();
      const one = await service.define({ nodes: [{ id: 'a', prompt: 'p' }] });
      const two = await service.define(diamond);
      await service.save(one.graphId, 'same');
      await service.save(two.graphId, 'same');
      expect((await service.list()).graphs).toEqual([
        { name: 'same', createdAt: expect.any(Number), nodeCount: 4 },
      ]);
    });

    it('lists runs newest first, filters by graph and describes a run in detail', async () => {
      let clock = 10_000;
      const service = await open({ now: () => (clock += 10) });
      const g1 = await service.define(diamond);
      const g2 = await service.define({ nodes: [{ id: 'only', prompt: 'p', agentId: 'helper' }] });
      const r1 = await service.execute({ graphId: g1.graphId, inputs: { x: 'first' }, concurrency: 2 });
      await service.waitForRun(r1.runId);
      const r2 = await service.execute({ graphId: g2.graphId });
      await service.waitForRun(r2.runId);
      const r3 = await service.execute({ graphId: g1.graphId, inputs: { x: 'again' } });
      await service.waitForRun(r3.runId);

      const all = await service.runs();
      expect(all.runs.map((run) => run.runId)).toEqual([r3.runId, r2.runId, r1.runId]);
      expect((await service.runs({ graphId: g1.graphId, limit: 1 })).runs).toEqual([
        expect.objectContaining({ runId: r3.runId, status: 'completed', nodeCount: 4 }),
      ]);

      const detail = await service.runDetail(r1.runId);
      expect(detail).toMatchObject({
        runId: r1.runId,
        graphId: g1.graphId,
        name: 'diamond',
        status: 'completed',
        inputs: { x: 'first' },
        concurrency: 2,
        cancelRequested: false,
        resumedCount: 0,
        counts: { completed: 4, failed: 0, pending: 0 },
      });
      expect(detail.nodes[3]).toMatchObject({
        id: 'd',
        dependsOn: ['b', 'c'],
        attempts: 1,
        outputChars: 'D(B(A(first)),C(A(first)))'.length,
      });
      expect((await service.runDetail(r2.runId)).nodes[0]).toMatchObject({ agentId: 'helper' });
    });

    it('lists runs started in the same millisecond newest first, in the order they were created', async () => {
      const service = await open({ now: () => 50_000 });
      const { graphId } = await service.define({ nodes: [{ id: 'a', prompt: 'p' }] });
      const created: string[] = [];
      for (let index = 0; index < 4; index += 1) {
        const { runId } = await service.execute({ graphId });
        await service.waitForRun(runId);
        created.push(runId);
      }
      expect((await service.runs()).runs.map((run) => run.runId)).toEqual(created.reverse());
    });

    it('refuses to delete a running run and deletes a finished one with its files', async () => {
      const service = await open({ executor: createEchoExecutor({ delayMs: 200 }) });
      const { graphId } = await service.define({ nodes: [{ id: 'a', prompt: 'p' }] });
      const { runId } = await service.execute({ graphId });
      const refused = await rejection(service.deleteRun(runId));
      expect(refused.code).toBe('RUN_ACTIVE');
      expect(refused.message).toBe(`Run is still running: ${runId}`);
      await service.waitForRun(runId);
      expect(await keptOutput(runId, 'a')).toBe('p');
      expect(await service.deleteRun(runId)).toEqual({ deleted: true, runId });
      expect(await keptOutput(runId, 'a')).toBeUndefined();
      expect(existsSync(join(temp.dir, 'graph-runs', runId))).toBe(false);
      // One call at a time: a call made before the previous one settled would reject unobserved.
      for (const call of [
        () => service.status(runId),
        () => service.outputs(runId),
        () => service.runDetail(runId),
        () => service.deleteRun(runId),
      ]) {
        const error = await rejection(call());
        expect(error.code).toBe('RUN_NOT_FOUND');
        expect(error.message).toBe(`Run not found: ${runId}`);
      }
    });
  });

  // Cancel and resume.
  describe('createGraphService', () => {
    it('cancels a running run: in-flight nodes finish and the run ends cancelled', async () => {
      const started: string[] = [];
      const release: Array<() => void> = [];
      const service = await open({
        executor: {
          run: (request) =>
            new Promise((resolve) => {
              started.push(request.nodeId);
              release.push(() => resolve(`${request.nodeId}!`));
            }),
        },
      });
      const { graphId } = await service.define({
        nodes: [
          { id: 'a', prompt: 'p' },
          { id: 'b', prompt: 'p', dependsOn: ['a'] },
          { id: 'c', prompt: 'p' },
        ],
      });
      const { runId } = await service.execute({ graphId, concurrency: 1 });
      while (started.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await service.cancel(runId)).toEqual({ runId, status: 'running', cancelled: true });
      release[0]!();
      expect(await service.waitForRun(runId)).toBe('cancelled');
      expect(started).toEqual(['a']);
      const status = await service.status(runId);
      expect(status.nodes.map((node) => node.status)).toEqual(['completed', 'cancelled', 'cancelled']);
      expect(await service.outputs(runId)).toEqual({
        outputs: { a: 'a!', b: null, c: null },
        source: 'memory',
      });
      expect(await service.cancel(runId)).toEqual({ runId, status: 'cancelled', cancelled: false });
      expect((await service.runDetail(runId)).cancelRequested).toBe(true);
    });

    it('resumes an interrupted run after a restart: completed nodes keep outputs, interrupted ones run again', async () => {
      const calls: string[] = [];
      const blocking: NodeExecutor = {
        run: (request) => {
          calls.push(request.nodeId);
          if (request.nodeId === 'first') return Promise.resolve('first-out');
          return new Promise((_, reject) =>
            request.signal.addEventListener('abort', () => reject(request.signal.reason)),
          );
        },
      };
      const before = await open({ executor: blocking });
      const { graphId } = await before.define({
        nodes: [
          { id: 'first', prompt: 'p' },
          { id: 'second', prompt: 'got {{nodes.first.output}}', dependsOn: ['first'] },
          { id: 'third', prompt: 'end {{nodes.second.output}}', dependsOn: ['second'] },
        ],
      });
      const { runId } = await before.execute({ graphId });
      while (!calls.includes('second')) await new Promise((resolve) => setTimeout(resolve, 5));
      await before.close();
      services.splice(services.indexOf(before), 1);
      expect(
        (await temp.db.get<{ status: string }>('SELECT status FROM graph_runs WHERE run_id = ?', [runId]))
          ?.status,
      ).toBe('running');

      const prompts: NodeRequest[] = [];
      const after = await open({
        executor: {
          run: async (request) => {
            prompts.push(request);
            return `${request.prompt}.`;
          },
        },
      });
      expect(await after.waitForRun(runId)).toBe('completed');
      expect(prompts.map((request) => [request.nodeId, request.prompt])).toEqual([
        ['second', 'got first-out'],
        ['third', 'end got first-out.'],
      ]);
      expect(prompts[0]!.attempt).toBe(1);
      expect(await after.outputs(runId)).toEqual({
        outputs: { first: 'first-out', second: 'got first-out.', third: 'end got first-out..' },
        source: 'memory',
      });
      const detail = await after.runDetail(runId);
      expect(detail.resumedCount).toBe(1);
      expect(detail.nodes.map((node) => node.attempts)).toEqual([1, 2, 1]);
    });

    it('runs a completed node again on resume when its output file is gone', async () => {
      const before = await open({
        executor: {
          run: (request) =>
            request.nodeId === 'a'
              ? Promise.resolve('A')
              : new Promise((_, reject) =>
                  request.signal.addEventListener('abort', () => reject(new Error('stop'))),
                ),
        },
      });
      const { graphId } = await before.define({
        nodes: [
          { id: 'a', prompt: 'p' },
          { id: 'b', prompt: '{{nodes.a.output}}', dependsOn: ['a'] },
        ],
      });
      const { runId } = await before.execute({ graphId });
      while ((await before.status(runId)).nodes[1]!.status !== 'running')
        await new Promise((r) => setTimeout(r, 5));
      await before.close();
      services.splice(services.indexOf(before), 1);
      await dropOutput(runId, 'a');
      const seen: string[] = [];
      const after = await open({
        executor: {
          run: async (r) => {
            seen.push(r.nodeId);
            return `${r.nodeId}:${r.prompt}`;
          },
        },
      });
      expect(await after.waitForRun(runId)).toBe('completed');
      expect(seen).toEqual(['a', 'b']);
    });

    it('leaves unfinished runs alone without an executor and can still cancel them', async () => {
      const before = await open({
        executor: {
          run: (r) =>
            new Promise((_, reject) => r.signal.addEventListener('abort', () => reject(new Error('x')))),
        },
      });
      const { graphId } = await before.define({ nodes: [{ id: 'a', prompt: 'p' }] });
      const { runId } = await before.execute({ graphId });
      await new Promise((resolve) => setTimeout(resolve, 20));
      await before.close();
      services.splice(services.indexOf(before), 1);

      const warnings: string[] = [];
      const idle = await open({
        executor: undefined,
        logger: {
          debug: () => undefined,
          info: () => undefined,
          warn: (_fields, message) => void warnings.push(message ?? ''),
          error: () => undefined,
        },
      });
      expect(idle.canExecute).toBe(false);
      expect(warnings).toEqual(['unfinished graph runs not resumed: no node executor']);
      expect((await idle.status(runId)).status).toBe('running');
      expect((await rejection(idle.execute({ graphId }))).code).toBe('EXECUTOR_UNAVAILABLE');
      expect(await idle.cancel(runId)).toEqual({ runId, status: 'cancelled', cancelled: true });
      expect((await idle.status(runId)).nodes).toEqual([
        { id: 'a', status: 'cancelled', error: 'run cancelled before the node started' },
      ]);
      expect(await idle.deleteRun(runId)).toEqual({ deleted: true, runId });
    });
  });

  // Argument checks, authoring events, lifecycle.
  describe('createGraphService', () => {
    it('validates execute arguments and reports unknown graphs', async () => {
      const service = await open({ maxConcurrency: 8 });
      const { graphId } = await service.define(diamond);
      expect((await rejection(service.execute({ graphId, concurrency: 9 }))).issues[0]!.path).toEqual([
        'concurrency',
      ]);
      expect((await rejection(service.execute({ graphId, inputs: 'text' }))).issues[0]!.path).toEqual([
        'inputs',
      ]);
      const missing = await rejection(service.execute({ graphId: 'ghost' }));
      expect(missing.code).toBe('GRAPH_NOT_FOUND');
      expect(missing.message).toBe('Graph not found: ghost');
    });

    it('emits pipeline:authored for every define and execute with validity and capability class', async () => {
      const events: Array<[string, Record<string, unknown>]> = [];
      const service = await open({
        events: { emit: (name, payload) => void events.push([name, payload]) },
        capabilityClassOf: (agentId) => (agentId === 'tiny' ? 'small' : 'frontier'),
        now: () => 5,
      });
      const author = { origin: 'tool' as const, agentId: 'tiny' };
      const { graphId } = await service.define(diamond, author);
      await rejection(service.define({ nodes: [{ id: 'a', prompt: 'p', dependsOn: ['a'] }] }, author));
      await rejection(service.define({ nodes: 'nope' }));
      await rejection(service.define({ nodes: [] }));
      const { runId } = await service.execute({ graphId }, { author });
      await rejection(service.execute({ graphId }, { author, authorize: () => false }));
      await rejection(service.execute({ graphId: 'ghost' }));
      expect(events.map(([name]) => name)).toEqual(Array(7).fill('pipeline:authored'));
      // Who authored each call: the tool calls name the agent, the others come over RPC.
      const byTool = { origin: 'tool', agentId: 'tiny', capabilityClass: 'small', timestamp: 5 };
      const byRpc = { origin: 'rpc', agentId: null, capabilityClass: 'unknown', timestamp: 5 };
      expect(events.map(([, payload]) => payload)).toEqual([
        { ...byTool, action: 'define', valid: true, nodeCount: 4, graphId },
        { ...byTool, action: 'define', valid: false, nodeCount: 1, invalidReason: 'validation' },
        { ...byRpc, action: 'define', valid: false, nodeCount: 0, invalidReason: 'parse' },
        {
          ...byRpc,
          action: 'define',
          valid: false,
          nodeCount: 0,
          invalidReason: 'parse',
          excluded: 'empty_define',
        },
        { ...byTool, action: 'execute', valid: true, nodeCount: 4, graphId, runId },
        { ...byTool, action: 'execute', valid: true, nodeCount: 4, excluded: 'policy_rejected', graphId },
        {
          ...byRpc,
          action: 'execute',
          valid: false,
          nodeCount: 0,
          invalidReason: 'not_found',
          graphId: 'ghost',
        },
      ]);
      // Payloads never carry prompts.
      expect(JSON.stringify(events)).not.toContain('{{');
    });

    it('refuses use before start and after close', async () => {
      const service = createGraphService({
        db: temp.db,
        runsDir: join(temp.dir, 'graph-runs'),
        ...(await clustered()),
      });
      expect((await rejection(service.define(diamond))).code).toBe('CLOSED');
      await service.start();
      await service.close();
      expect((await rejection(service.list())).code).toBe('CLOSED');
    });

    it('rejects invalid options', () => {
      expect(() => createGraphService({ db: temp.db, runsDir: '' })).toThrow(GraphError);
    });
  });

  // Tenants: a tenant's graphs, saved graphs and runs are its own.
  describe('createGraphService tenants', () => {
    it("keeps a tenant's graphs, saved graphs and runs apart and runs its nodes as the tenant", async () => {
      const requests: NodeRequest[] = [];
      const executor: NodeExecutor = {
        run: async (request) => {
          requests.push(request);
          return `ok ${request.nodeId}`;
        },
      };
      const service = await open({ executor });
      const acme = { origin: 'rpc' as const, tenant: 'acme' };
      const { graphId } = await service.define(diamond, acme);
      const operatorGraph = await service.define(diamond);
      expect(await service.ownerOf({ graphId })).toEqual({ tenant: 'acme' });
      expect(await service.ownerOf({ graphId: operatorGraph.graphId })).toEqual({});
      expect(await service.ownerOf({ graphId: 'nope' })).toBeUndefined();

      // Another tenant (or the operator's graph for a tenant) is not found.
      const foreign = await rejection(
        service.execute({ graphId }, { author: { origin: 'rpc', tenant: 'globex' } }),
      );
      expect(foreign.code).toBe('GRAPH_NOT_FOUND');
      expect((await rejection(service.save(graphId, 'pipe', 'globex'))).code).toBe('GRAPH_NOT_FOUND');

      const { runId } = await service.execute({ graphId, inputs: { x: 1 } }, { author: acme });
      expect(await service.waitForRun(runId)).toBe('completed');
      expect(requests.map((request) => request.tenant)).toEqual(['acme', 'acme', 'acme', 'acme']);
      expect(await service.ownerOf({ runId })).toEqual({ tenant: 'acme' });
      const operatorRun = await service.execute({ graphId: operatorGraph.graphId });
      await service.waitForRun(operatorRun.runId);
      expect(requests.slice(4).every((request) => request.tenant === undefined)).toBe(true);
      expect((await service.runs({ tenant: 'acme' })).runs.map((run) => run.runId)).toEqual([runId]);
      expect((await service.runs()).runs).toHaveLength(2);

      await service.save(graphId, 'acme/pipe', 'acme');
      await service.save(operatorGraph.graphId, 'ops');
      expect((await service.list('acme')).graphs.map((graph) => graph.name)).toEqual(['acme/pipe']);
      expect((await service.list()).graphs.map((graph) => graph.name)).toEqual(['acme/pipe', 'ops']);
      expect(await service.ownerOf({ name: 'acme/pipe' })).toEqual({ tenant: 'acme' });
      // A loaded graph belongs to the saved graph's tenant.
      const loaded = await service.load('acme/pipe');
      expect(await service.ownerOf({ graphId: loaded.graphId })).toEqual({ tenant: 'acme' });
    });

    it('resumes a tenant run after a restart still as the tenant', async () => {
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const first = await open({
        executor: { run: (request) => gate.then(() => `late ${request.nodeId}`) },
      });
      const { graphId } = await first.define(
        { nodes: [{ id: 'only', prompt: 'p' }] },
        { origin: 'rpc', tenant: 'acme' },
      );
      const { runId } = await first.execute({ graphId }, { author: { origin: 'rpc', tenant: 'acme' } });
      await first.close();
      release();
      services.splice(services.indexOf(first), 1);
      const seen: NodeRequest[] = [];
      const record: NodeExecutor = {
        run: async (request) => {
          seen.push(request);
          return 'done';
        },
      };
      const second = await open({ executor: record });
      expect(await second.waitForRun(runId)).toBe('completed');
      expect(seen.map((request) => request.tenant)).toEqual(['acme']);
    });
  });
});
