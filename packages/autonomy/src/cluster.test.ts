import type { CoordinationOptions } from '@agentd/storage';
import { thrownBy } from '@agentd/test-support';
import { freshPgDatabaseUrl, pgSuitesEnabled, testInstances, withDatabase } from '@agentd/storage/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { scriptedRunner, until } from '../test/helpers.js';
import {
  type AutonomyService,
  type AutonomyServiceOptions,
  createAutonomyService,
} from './autonomy-service.js';
import { isAutonomyError } from './errors.js';
import { LeaseStore } from './lease-store.js';

const toolsOf = () => ['echo', 'subagent_list', 'subagent_spawn'];
// Far longer than any test: a stop seen here came from the notice, not from a poll.
const NO_POLL = 3_600_000;

describe('autonomy on PostgreSQL without a coordinator', () => {
  it.skipIf(!pgSuitesEnabled())('is refused, naming the option', async () => {
    const caught = await withDatabase(await freshPgDatabaseUrl('agentd_autonomy'), async (db) =>
      thrownBy<Error>(() => createAutonomyService({ db, toolsOf, runner: () => scriptedRunner() })),
    );
    expect(isAutonomyError(caught, 'INVALID_OPTIONS')).toBe(true);
    expect(String(caught.message)).toContain('coordinator');
  });
});

// Instances, each with its own pool and coordinator, on one PostgreSQL database.
describe.skipIf(!pgSuitesEnabled())('autonomy across instances on PostgreSQL', () => {
  let url: string;
  const instances = testInstances();
  beforeAll(async () => {
    url = await freshPgDatabaseUrl('agentd_autonomy');
  });
  afterEach(async () => {
    await instances.closeAll();
    await withDatabase(url, async (db) => {
      await db.execute('DELETE FROM autonomy_runs');
      await db.execute('DELETE FROM autonomy_steers');
    });
  });

  async function instance(
    instanceId: string,
    options: CoordinationOptions = {},
    service: Partial<AutonomyServiceOptions> = {},
  ) {
    const { db, coordinator, track } = await instances.open(url, instanceId, { coordination: options });
    const runner = scriptedRunner();
    const autonomy: AutonomyService = track(
      createAutonomyService({ db, coordinator, toolsOf, runner: () => runner, ...service }),
    );
    await autonomy.start();
    return { db, runner, service: autonomy };
  }

  it('a kill made on B reaches the run executing on A, by the notice', async () => {
    const a = await instance('a', { pollMs: NO_POLL });
    const b = await instance('b', { pollMs: NO_POLL });
    const run = await a.service.spawn({ parentSessionKey: 'p:rpc:1', task: 'work' });
    const turn = await a.runner.turnOf(run.sessionKey);
    const owner = await a.db.get<{ owner: string; fence: number }>(
      'SELECT owner, fence FROM autonomy_runs WHERE run_id = ?',
      [run.runId],
    );
    expect(owner).toEqual({ owner: 'a', fence: 1 });

    // A wait on B for a run executing on A ends when A writes the run's end.
    const waited = b.service.wait([run.runId], { timeoutMs: 10_000 });
    expect(await b.service.kill(run.runId, 'stop it')).toMatchObject({ runId: run.runId, killed: 1 });
    expect((await waited).map((view) => view.status)).toEqual(['killed']);
    await until(() => (turn.request.signal?.aborted ? true : undefined), 10_000);
    const ended = await until(async () => {
      const view = await b.service.status(run.runId);
      return view.status === 'killed' ? view : undefined;
    }, 10_000);
    expect(ended.endReason).toBe('killed');
    expect(a.service.activeRuns).toBe(0);
  });

  it('a steer injected on B reaches A’s run by polling when NOTIFY is off', async () => {
    const a = await instance('a', { pollMs: 200, notify: false });
    const b = await instance(
      'b',
      { pollMs: 200, notify: false },
      { security: { agentToAgent: { steerInject: true } } },
    );
    const run = await a.service.spawn({ parentSessionKey: 'p:rpc:1', task: 'work' });
    const turn = await a.runner.turnOf(run.sessionKey);
    expect(await b.service.steer(run.runId, 'also do this')).toEqual({
      status: 'steered_inject',
      runId: run.runId,
    });
    const injections = turn.request.injections as () => string[];
    const taken: string[] = [];
    await until(() => {
      taken.push(...injections());
      return taken.length > 0 ? true : undefined;
    }, 10_000);
    expect(taken).toEqual(['also do this']);
  });

  it('a start takes over only the runs of gone instances; a taken-over run rejects its old owner’s end', async () => {
    // A renews rarely, so a lease made to lapse here stays lapsed, as for a paused instance.
    const a = await instance('a', {}, { runLeaseMs: 60_000 });
    const run = await a.service.spawn({ parentSessionKey: 'p:rpc:1', task: 'work' });
    await a.runner.turnOf(run.sessionKey);

    // A live owner keeps its run: C's start leaves it alone.
    const c = await instance('c', {}, { runLeaseMs: 600 });
    expect(c.service.activeRuns).toBe(0);
    expect((await c.service.status(run.runId)).status).toBe('running');

    // A's lease lapses: C takes the run over at the next fence and resumes it (no tool call yet).
    await a.db.execute('UPDATE autonomy_runs SET lease_until = 0 WHERE run_id = ?', [run.runId]);
    const resumed = await c.runner.turnOf(run.sessionKey);
    expect(resumed.request.turnKey).toBe(`subagent:${run.runId}:r1:0`);
    const owned = () =>
      c.db.get<{ owner: string | null; fence: number; status: string }>(
        'SELECT owner, fence, status FROM autonomy_runs WHERE run_id = ?',
        [run.runId],
      );
    expect(await owned()).toEqual({ owner: 'c', fence: 2, status: 'running' });

    // A, unaware, ends its copy: the end carries fence 1 and is rejected.
    await a.service.kill(run.runId);
    expect(a.service.activeRuns).toBe(0);
    expect(await owned()).toEqual({ owner: 'c', fence: 2, status: 'running' });
    resumed.finish('done on c');
    expect(
      await until(async () => {
        const view = await c.service.status(run.runId);
        return view.status === 'completed' ? view : undefined;
      }, 10_000),
    ).toMatchObject({ response: 'done on c', resumed: 1 });
  });

  it('times capability leases by the database clock, so instances with skewed clocks agree', async () => {
    const a = await instance('a');
    let id = 0;
    const onA = new LeaseStore(a.db, Date.now, () => `lease-${++id}`);
    // B's clock runs an hour ahead: by its own clock the lease below would have expired.
    const onB = new LeaseStore(
      a.db,
      () => Date.now() + 3_600_000,
      () => `lease-${++id}`,
    );
    const { lease, secret } = await onA.mint({
      runId: 'r1',
      rootRunId: 'r1',
      agentId: 'main',
      capabilities: ['echo'],
      ttlMs: 60_000,
    });
    expect((await onB.validate(secret, 'echo')).leaseId).toBe(lease.leaseId);
    expect(await onB.usable(lease.leaseId)).toMatchObject({ ok: true });
    await a.db.execute('UPDATE autonomy_leases SET expires_at = expires_at - 120000 WHERE lease_id = ?', [
      lease.leaseId,
    ]);
    expect(await onA.usable(lease.leaseId)).toEqual({ ok: false, reason: 'expired' });
  });
});
