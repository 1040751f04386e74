import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled, testInstances } from '@agentd/storage/testing';
import { type Deferred, deferred, eventually, recordingLogger } from '@agentd/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NodeExecutor, NodeRequest } from './execute.js';
import { createGraphService, type GraphService, type GraphServiceOptions } from './service.js';

// Instances, each with its own pool, coordinator and runs folder, on one PostgreSQL database.
describe.skipIf(!pgSuitesEnabled())(
  'graph runs on several instances (PostgreSQL)',
  { timeout: 60_000 },
  () => {
    let url: string;
    let dir: string;
    const instances = testInstances();

    beforeEach(async () => {
      url = await freshPgDatabaseUrl('agentd_graph_cluster');
      dir = mkdtempSync(join(tmpdir(), 'agentd-graph-cluster-'));
    });
    afterEach(async () => {
      await instances.closeAll();
      rmSync(dir, { recursive: true, force: true });
    });

    async function instance(
      instanceId: string,
      options: Partial<GraphServiceOptions> & { notify?: boolean } = {},
    ): Promise<GraphService> {
      const { notify = true, ...rest } = options;
      const { db, coordinator, track } = await instances.open(url, instanceId, {
        coordination: { leaseMs: 2000, pollMs: 100, notify },
      });
      const service = track(
        createGraphService({
          db,
          runsDir: join(dir, instanceId),
          coordinator,
          retryDelayMs: 0,
          runLeaseMs: 1500,
          ...rest,
        }),
      );
      await service.start();
      return service;
    }

    /** Records each request; nodes named in `held` wait for their deferred, the rest answer at once. */
    function recorder(held: Record<string, Deferred<string>> = {}): NodeExecutor & { seen: NodeRequest[] } {
      const seen: NodeRequest[] = [];
      return {
        seen,
        run: (request) => {
          seen.push(request);
          return held[request.nodeId]?.promise ?? Promise.resolve(`${request.nodeId}(${request.prompt})`);
        },
      };
    }

    const chain = {
      nodes: [
        { id: 'a', prompt: 'start' },
        { id: 'b', prompt: '{{nodes.a.output}}', dependsOn: ['a'] },
        { id: 'c', prompt: '{{nodes.b.output}}', dependsOn: ['b'] },
      ],
    };

    async function row(db: GraphService, runId: string) {
      return (await db.runDetail(runId)) as Awaited<ReturnType<GraphService['runDetail']>>;
    }

    it('leaves a live owner its run at start and takes a dead owner’s run over from its completed nodes; the old owner’s late writes are refused', async () => {
      const heldB = deferred<string>();
      const first = recorder({ b: heldB });
      // A long lease: the first instance renews it only every 20 s, so it stands still in this test.
      const a = await instance('i-a', { executor: first, runLeaseMs: 60_000 });
      const { graphId } = await a.define(chain);
      const { runId } = await a.execute({ graphId });
      await eventually(() => (first.seen.some((request) => request.nodeId === 'b') ? true : undefined));

      // A second instance starting while the owner is alive resumes nothing.
      const second = recorder();
      const b = await instance('i-b', { executor: second });
      expect(second.seen).toEqual([]);

      // The owner is paused past its lease: the second instance's next round takes the run over.
      const probe = instances.track(await openDatabase({ url, poolMax: 1 }));
      await probe.execute('UPDATE graph_runs SET lease_until = 0 WHERE run_id = ?', [runId]);
      expect(
        await eventually(async () => ((await b.waitForRun(runId)) === 'completed' ? true : undefined)),
      ).toBe(true);
      // Node a completed on the first instance and was not run again; b (in flight) ran again once.
      expect(first.seen.map((request) => request.nodeId)).toEqual(['a', 'b']);
      expect(second.seen.map((request) => [request.nodeId, request.prompt])).toEqual([
        ['b', 'a(start)'],
        ['c', 'b(a(start))'],
      ]);

      // The old owner's node finishes late: its write is refused and it dispatches nothing more.
      heldB.resolve('stale');
      expect(await a.waitForRun(runId)).toBe('running');
      expect(first.seen.map((request) => request.nodeId)).toEqual(['a', 'b']);
      expect(await b.outputs(runId)).toEqual({
        outputs: { a: 'a(start)', b: 'b(a(start))', c: 'c(b(a(start)))' },
        source: 'memory',
      });
      const kept = await probe.query<{ node_id: string; output: string }>(
        'SELECT node_id, output FROM graph_node_outputs WHERE run_id = ? ORDER BY node_id',
        [runId],
      );
      expect(kept.map((entry) => entry.output)).toEqual(['a(start)', 'b(a(start))', 'c(b(a(start)))']);
      const detail = await row(a, runId);
      expect(detail).toMatchObject({ status: 'completed', resumedCount: 1 });
      expect(detail.nodes.map((node) => [node.id, node.status, node.attempts])).toEqual([
        ['a', 'completed', 1],
        ['b', 'completed', 2],
        ['c', 'completed', 1],
      ]);
    });

    it('reads another instance’s outputs from the table and resumes a released run without re-running completed nodes', async () => {
      const first = recorder({ b: deferred<string>() });
      const a = await instance('i-a', { executor: first });
      const { graphId } = await a.define(chain);
      const { runId } = await a.execute({ graphId });
      await eventually(() => (first.seen.some((request) => request.nodeId === 'b') ? true : undefined));
      const second = recorder();
      const b = await instance('i-b', { executor: second });
      expect((await b.outputs(runId)).outputs).toEqual({ a: 'a(start)', b: null, c: null });
      // A shutdown hands the run back at once; the other instance's next round resumes it.
      await a.close();
      await eventually(async () => ((await b.status(runId)).status === 'completed' ? true : undefined));
      expect(second.seen.map((request) => request.nodeId)).toEqual(['b', 'c']);
      b.evictMemory();
      expect(await b.outputs(runId)).toEqual({
        outputs: { a: 'a(start)', b: 'b(a(start))', c: 'c(b(a(start)))' },
        source: 'disk',
      });
    });

    it('stops a run on its owner when another instance cancels it, without NOTIFY (the row is the truth)', async () => {
      const heldA = deferred<string>();
      const first = recorder({ a: heldA });
      const logger = recordingLogger();
      const a = await instance('i-a', { executor: first, logger, notify: false });
      const b = await instance('i-b', { executor: recorder(), notify: false });
      const { graphId } = await a.define(chain);
      const { runId } = await a.execute({ graphId });
      await eventually(() => (first.seen.length === 1 ? true : undefined));

      expect(await b.cancel(runId)).toEqual({ runId, status: 'running', cancelled: true });
      expect(await b.cancel(runId)).toEqual({ runId, status: 'running', cancelled: false });
      await eventually(() =>
        logger.entries.some((entry) => entry.message === 'graph run cancelled from another instance')
          ? true
          : undefined,
      );
      // The in-flight node finishes; nothing new starts; the owner ends the run cancelled.
      heldA.resolve('A');
      expect(await a.waitForRun(runId)).toBe('cancelled');
      expect(first.seen.map((request) => request.nodeId)).toEqual(['a']);
      const status = await b.status(runId);
      expect(status.status).toBe('cancelled');
      expect(status.nodes.map((node) => node.status)).toEqual(['completed', 'cancelled', 'cancelled']);
    });

    it('finishes a cancelled run nobody holds on the instance asked', async () => {
      const a = await instance('i-a', { executor: recorder({ a: deferred<string>() }) });
      const { graphId } = await a.define(chain);
      const { runId } = await a.execute({ graphId });
      await a.close();
      const idle = await instance('i-idle', { executor: undefined });
      expect(await idle.cancel(runId)).toEqual({ runId, status: 'cancelled', cancelled: true });
      expect((await idle.status(runId)).nodes.map((node) => node.status)).toEqual([
        'cancelled',
        'cancelled',
        'cancelled',
      ]);
    });
  },
);
