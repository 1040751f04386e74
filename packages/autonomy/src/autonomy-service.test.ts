import { spawn as spawnProcess } from 'node:child_process';
import { alive } from '@agentd/test-support';
import type { Dialect } from '@agentd/storage';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { autonomyFixture, DIALECTS, scriptedRunner, until } from '../test/helpers.js';
import { isAutonomyError } from './errors.js';

let fixture: ReturnType<typeof autonomyFixture>;
let dialect: Dialect = 'libsql';
afterEach(() => fixture.cleanup());

async function setup(
  options: { autonomy?: Record<string, unknown>; security?: Record<string, unknown> } = {},
) {
  fixture = autonomyFixture(dialect);
  const db = await fixture.open();
  const runner = scriptedRunner();
  const notices: Array<{ clientId: string | undefined; method: string; params: Record<string, unknown> }> =
    [];
  const notes: Array<[string, string]> = [];
  const service = await fixture.service(db, {
    runner: () => runner,
    recordOnParent: async (key, note) => {
      notes.push([key, note]);
    },
    ...options,
  });
  service.setNotifier((clientId, method, params) => notices.push({ clientId, method, params }));
  return { db, runner, service, notices, notes };
}

// Every test runs on each dialect; on PostgreSQL through the cluster path (a coordinator per handle).
describe.each(DIALECTS)('on %s', (name) => {
  beforeAll(() => {
    dialect = name;
  });

  describe('spawn, status and completion', () => {
    it('writes the run before its turn starts, answers at once and records the end', async () => {
      const { db, runner, service, notices, notes } = await setup();
      const spawned = await service.spawn({
        parentSessionKey: 'default:rpc:alice',
        task: 'sum it up',
        clientId: 'alice',
      });
      expect(spawned).toEqual({
        runId: expect.any(String),
        sessionKey: `default:subagent:${spawned.runId}`,
        status: 'running',
      });
      const row = await db.get('SELECT status, task FROM autonomy_runs WHERE run_id = ?', [spawned.runId]);
      expect(row).toMatchObject({ status: 'running', task: 'sum it up' });
      const turn = await runner.turnOf(spawned.sessionKey);
      expect(turn.request).toMatchObject({
        origin: 'subagent',
        message: 'sum it up',
        allowedTools: ['echo', 'subagent_list', 'subagent_spawn'],
      });
      const running = await service.status(spawned.runId);
      expect(running.status).toBe('running');
      expect(running).not.toHaveProperty('response');
      expect(running).not.toHaveProperty('completedAt');

      turn.finish('the answer', 30);
      const done = await until(async () => {
        const view = await service.status(spawned.runId);
        return view.status === 'running' ? undefined : view;
      });
      expect(done).toMatchObject({
        status: 'completed',
        response: 'the answer',
        tokensUsed: { input: 26, output: 4, total: 30 },
      });
      expect(done.completedAt).toBeGreaterThanOrEqual(done.startedAt);
      await until(() => (notes.length > 0 ? true : undefined));
      expect(notices).toEqual([
        {
          clientId: 'alice',
          method: 'session.completed',
          params: expect.objectContaining({
            sessionKey: spawned.sessionKey,
            result: 'the answer',
            runId: spawned.runId,
          }),
        },
      ]);
      expect(notes[0]?.[0]).toBe('default:rpc:alice');
      expect(await service.status(spawned.sessionKey)).toMatchObject({ runId: spawned.runId });
      expect((await service.list({ status: 'completed' })).map((run) => run.runId)).toEqual([spawned.runId]);
    });

    it("broadcasts an untargeted completion, but never a tenant's", async () => {
      const { runner, service, notices, notes } = await setup();
      const open = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 't' });
      const tenant = await service.spawn({ parentSessionKey: 't1:rpc:1', task: 't', memoryTenant: 't1' });
      (await runner.turnOf(open.sessionKey)).finish('public');
      (await runner.turnOf(tenant.sessionKey)).finish('private');
      await service.wait([open.runId, tenant.runId], { timeoutMs: 5000 });
      await until(() => (notes.length === 2 ? true : undefined));
      expect(notices.map((notice) => [notice.clientId, notice.params.result])).toEqual([
        [undefined, 'public'],
      ]);
    });

    it('ends a run failed when its turn fails, and timeout when its turn times out', async () => {
      const { runner, service } = await setup();
      const failing = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 't' });
      const slow = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 't' });
      (await runner.turnOf(failing.sessionKey)).finish('', 5, 'error');
      (await runner.turnOf(slow.sessionKey)).finish('part', 5, 'timeout');
      const [failed, timedOut] = await service.wait([failing.runId, slow.runId], { timeoutMs: 5000 });
      expect(failed).toMatchObject({ status: 'failed', error: 'the turn failed' });
      expect(timedOut).toMatchObject({ status: 'timeout', response: 'part' });
    });

    it('refuses spawns past depth, children per parent and daemon-wide concurrency', async () => {
      const { runner, service } = await setup({
        autonomy: { maxDepth: 2, maxChildrenPerParent: 2, maxConcurrentRuns: 3 },
      });
      const limitOf = async (call: Promise<unknown>) => {
        const error = await call.then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(isAutonomyError(error, 'LIMIT_EXCEEDED')).toBe(true);
        return (error as { data: { limit: string } }).data.limit;
      };
      const a = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 't' });
      await service.spawn({ parentSessionKey: 'p:rpc:1', task: 't' });
      expect(await limitOf(service.spawn({ parentSessionKey: 'p:rpc:1', task: 't' }))).toBe(
        'maxChildrenPerParent',
      );
      const child = await service.spawn({ parentSessionKey: a.sessionKey, task: 't' });
      expect((await service.status(child.runId)).depth).toBe(2);
      expect(await limitOf(service.spawn({ parentSessionKey: child.sessionKey, task: 't' }))).toBe(
        'maxDepth',
      );
      expect(await limitOf(service.spawn({ parentSessionKey: 'p:rpc:2', task: 't' }))).toBe(
        'maxConcurrentRuns',
      );
      (await runner.turnOf(child.sessionKey)).finish();
      await until(async () =>
        (await service.status(child.runId)).status === 'completed' ? true : undefined,
      );
      expect((await service.spawn({ parentSessionKey: 'p:rpc:2', task: 't' })).status).toBe('running');
    });

    it("fixes a child's tools at spawn, never wider than its parent's", async () => {
      const { runner, service } = await setup();
      const parent = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 't', agentId: 'narrow' });
      const child = await service.spawn({
        parentSessionKey: parent.sessionKey,
        task: 't',
        agentId: 'default',
      });
      expect((await runner.turnOf(child.sessionKey)).request.allowedTools).toEqual(['subagent_list']);
      const unknown = await service
        .spawn({ parentSessionKey: 'p:rpc:1', task: 't', agentId: 'ghost' })
        .catch((e: unknown) => e);
      expect(isAutonomyError(unknown, 'INVALID_OPTIONS')).toBe(true);
    });
  });

  describe('kill and steer', () => {
    it('kills a run, its grandchild and the process it started, and revokes their leases', async () => {
      const { runner, service, notices } = await setup();
      const root = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 't', clientId: 'c1' });
      const child = await service.spawn({ parentSessionKey: root.sessionKey, task: 't' });
      const grandchild = await service.spawn({ parentSessionKey: child.sessionKey, task: 't' });
      const other = await service.spawn({ parentSessionKey: 'p:rpc:2', task: 't' });
      const turn = await runner.turnOf(grandchild.sessionKey);
      const sleeper = spawnProcess('sleep', ['300'], { detached: true, stdio: 'ignore' });
      expect(service.trackProcess(grandchild.sessionKey, sleeper)).toBe(true);
      const exited = new Promise((resolve) => sleeper.once('exit', resolve));

      const result = await service.kill(child.runId, 'operator said so');
      expect(result).toEqual({ runId: child.runId, status: 'killed', killed: 2 });
      await exited;
      expect(alive(sleeper.pid ?? 0)).toBe(false);
      expect(turn.request.signal?.aborted).toBe(true);
      expect((await service.status(grandchild.runId)).status).toBe('killed');
      expect((await service.status(root.runId)).status).toBe('running');
      expect((await service.status(other.runId)).status).toBe('running');
      const grand = await service.status(grandchild.runId);
      expect(grand.endReason).toBe('killed');
      // The killed child's notification goes to the client that started the tree.
      expect(notices.filter((notice) => notice.params.status === 'killed').map((n) => n.clientId)).toEqual([
        'c1',
        'c1',
      ]);
      // Killed runs' sessions take no more tool calls.
      const refused = await service
        .spawn({ parentSessionKey: grandchild.sessionKey, task: 't' })
        .catch((e: unknown) => e);
      expect(isAutonomyError(refused, 'NOT_RUNNING')).toBe(true);
      const verdict = await service.gate().before({ sessionKey: grandchild.sessionKey, toolName: 'echo' });
      expect(verdict).toMatchObject({ allow: false, errorKind: 'lease_revoked' });
    });

    it('steers by kill and respawn, rate-limited per target', async () => {
      const { runner, service } = await setup();
      const run = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 'old task' });
      await runner.turnOf(run.sessionKey);
      const steered = await service.steer(run.runId, 'new task');
      expect(steered).toEqual({ status: 'steered', oldRunId: run.runId, newRunId: expect.any(String) });
      if (steered.status !== 'steered') throw new Error('unexpected');
      expect((await service.status(run.runId)).status).toBe('killed');
      const fresh = await service.status(steered.newRunId);
      expect(fresh).toMatchObject({ status: 'running', task: 'new task', parentKey: 'p:rpc:1' });
      expect(fresh.sessionKey).not.toBe(run.sessionKey);
      const limited = await service.steer(steered.newRunId, 'again').catch((e: unknown) => e);
      expect(isAutonomyError(limited, 'RATE_LIMITED')).toBe(true);
      const ended = await service.steer(run.runId, 'x').catch((e: unknown) => e);
      expect(isAutonomyError(ended, 'RATE_LIMITED')).toBe(true);
    });

    it('steers by injection: same run, same session, a further turn', async () => {
      const { runner, service } = await setup({ security: { agentToAgent: { steerInject: true } } });
      const run = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 'first' });
      const first = await runner.turnOf(run.sessionKey);
      expect(await service.steer(run.sessionKey, 'second')).toEqual({
        status: 'steered_inject',
        runId: run.runId,
      });
      first.finish('one');
      const second = await runner.turnOf(run.sessionKey);
      expect(second.request.message).toBe('second');
      second.finish('two');
      const done = await until(async () => {
        const view = await service.status(run.runId);
        return view.status === 'completed' ? view : undefined;
      });
      expect(done.response).toBe('two');
      expect(done.tokensUsed?.total).toBe(20);
    });
  });

  describe('leases, run.kill, evict and the gate', () => {
    it('revokes a tree cooperatively, kills a tree, evicts to the default profile', async () => {
      const { runner, service } = await setup();
      const gate = service.gate();
      const call = (sessionKey: string, toolName: string) => gate.before({ sessionKey, toolName });
      const root = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 't' });
      const child = await service.spawn({ parentSessionKey: root.sessionKey, task: 't' });
      expect(await call(child.sessionKey, 'echo')).toEqual({ allow: true });
      expect(await call(child.sessionKey, 'forbidden')).toMatchObject({
        allow: false,
        errorKind: 'capability_denied',
      });

      expect(await service.evict(root.runId)).toEqual({ evicted: true });
      expect(await call(child.sessionKey, 'echo')).toMatchObject({
        allow: false,
        errorKind: 'capability_denied',
      });
      expect(await call(child.sessionKey, 'subagent_list')).toEqual({ allow: true });
      expect((await service.introspect({ sessionKey: child.sessionKey })).runs[0]).toMatchObject({
        evicted: true,
        capabilities: ['subagent_list'],
      });

      expect(await service.revoke({ rootRunId: root.runId })).toEqual({ revoked: 2 });
      expect(await call(child.sessionKey, 'subagent_list')).toMatchObject({
        allow: false,
        errorKind: 'lease_revoked',
      });
      expect((await service.status(child.runId)).status).toBe('running');

      const turn = await runner.turnOf(root.sessionKey);
      expect(await service.killTree(root.runId)).toEqual({ killed: 2 });
      expect(turn.request.signal?.aborted).toBe(true);
      expect((await service.list({ status: 'killed' })).length).toBe(2);
      const missing = await service.killTree('nope').catch((e: unknown) => e);
      expect(isAutonomyError(missing, 'RUN_NOT_FOUND')).toBe(true);
    });

    it('mints child leases under a running run, never wider, revoked with the run', async () => {
      const { service } = await setup();
      const run = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 't' });
      const { lease, secret } = await service.mintChildLease(run.sessionKey, { capabilities: ['echo'] });
      expect(lease).toMatchObject({ runId: run.runId, rootRunId: run.runId, capabilities: ['echo'] });
      expect(JSON.stringify(lease)).not.toContain(secret);
      expect((await service.leases.validate(secret, 'echo')).leaseId).toBe(lease.leaseId);
      const wider = await service
        .mintChildLease(run.runId, { capabilities: ['forbidden'] })
        .catch((e: unknown) => e);
      expect(isAutonomyError(wider, 'INVALID_OPTIONS')).toBe(true);
      const renewed = await service.leases.renew(secret, 10_000);
      expect(renewed.expiresAt).toBeGreaterThan(lease.createdAt);

      await service.kill(run.runId);
      const refused = await service.leases.validate(secret).catch((e: unknown) => e);
      expect(isAutonomyError(refused, 'LEASE_INVALID')).toBe(true);
      expect((refused as { data: { reason: string } }).data.reason).toBe('revoked');
      const ended = await service.mintChildLease(run.runId, { capabilities: [] }).catch((e: unknown) => e);
      expect(isAutonomyError(ended, 'NOT_RUNNING')).toBe(true);
    });

    it('ends the run tree after N consecutive denied calls and counts tool calls against the budget', async () => {
      const { db, service } = await setup({
        autonomy: { denialBreakerThreshold: 3, budget: { maxToolCalls: 2 } },
      });
      const gate = service.gate();
      const root = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 't' });
      const child = await service.spawn({ parentSessionKey: root.sessionKey, task: 't' });
      const ran = { ran: true, text: '1', content: '1' };
      await gate.after({ sessionKey: child.sessionKey, toolName: 'echo' }, ran);
      await gate.after({ sessionKey: child.sessionKey, toolName: 'echo' }, ran);
      expect(await gate.before({ sessionKey: child.sessionKey, toolName: 'echo' })).toMatchObject({
        errorKind: 'budget_exceeded',
      });
      const denied = { ran: false, errorKind: 'denied', text: '', content: '' };
      await gate.after({ sessionKey: child.sessionKey, toolName: 'x' }, denied);
      await gate.after({ sessionKey: root.sessionKey, toolName: 'x' }, denied);
      expect((await service.status(root.runId)).status).toBe('running');
      await gate.after({ sessionKey: child.sessionKey, toolName: 'x' }, denied);
      for (const run of [root, child]) {
        expect(await service.status(run.runId)).toMatchObject({
          status: 'completed',
          endReason: 'denial_breaker',
        });
      }
      const signals = await db.query('SELECT signal FROM autonomy_signals ORDER BY id');
      expect(signals.map((row) => row.signal)).toEqual(['budget_breach', 'denial_breaker']);
      expect((await service.status(child.runId)).toolCalls).toBe(2);
    });
  });

  describe('durability', () => {
    it('resumes safe runs, orphans unsafe ones and never resumes revoked ones', async () => {
      fixture = autonomyFixture(dialect);
      const db = await fixture.open();
      const first = scriptedRunner();
      const before = await fixture.service(db, { runner: () => first });
      const safe = await before.spawn({ parentSessionKey: 'p:rpc:1', task: 'safe' });
      const unsafe = await before.spawn({ parentSessionKey: 'p:rpc:2', task: 'unsafe' });
      const revoked = await before.spawn({ parentSessionKey: 'p:rpc:3', task: 'revoked' });
      await before.gate().after(
        { sessionKey: unsafe.sessionKey, toolName: 'echo' },
        {
          ran: true,
          text: '',
          content: '',
        },
      );
      await before.revoke({ rootRunId: revoked.runId });
      await before.close();
      expect((await before.status(safe.runId)).status).toBe('running');

      const second = scriptedRunner((request) => `resumed ${request.message}`);
      const after = await fixture.service(db, { runner: () => second });
      const done = await until(async () => {
        const view = await after.status(safe.runId);
        return view.status === 'completed' ? view : undefined;
      });
      expect(done).toMatchObject({ response: 'resumed safe', resumed: 1 });
      expect(await after.status(unsafe.runId)).toMatchObject({ status: 'orphaned', endReason: 'restart' });
      expect(await after.status(revoked.runId)).toMatchObject({ status: 'failed', endReason: 'revoked' });
      const signals = await db.query(
        'SELECT signal, count(*) AS n FROM autonomy_signals GROUP BY signal ORDER BY signal',
      );
      expect(signals.map((row) => [row.signal, Number(row.n)])).toEqual([
        ['orphaned', 1],
        ['resumed', 1],
        ['revoked', 1],
      ]);
    });
  });

  describe('introspect: MCP tool servers', () => {
    /** A connected MCP server with two tools, configured for every agent. */
    const filesServer = {
      id: 'files',
      state: 'connected' as const,
      tools: ['files__read', 'files__write'],
      agents: ['*'],
      lastError: null,
    };

    it('shows a gateway client every server, an agent only its servers and the tools it may call', async () => {
      const { service } = await setup();
      expect((await service.introspect({ clientId: 'ops' })).mcp).toEqual({ servers: [] });
      service.useToolServers(() => [
        filesServer,
        { id: 'vault', state: 'connected', tools: ['vault__open'], agents: ['boss'], lastError: null },
        { id: 'down', state: 'reconnecting', tools: [], agents: ['*'], lastError: 'spawn failed: ENOENT' },
      ]);
      const all = (await service.introspect({ clientId: 'ops' })).mcp.servers;
      expect(all).toEqual([
        { id: 'files', state: 'connected', tools: ['files__read', 'files__write'], lastError: null },
        { id: 'vault', state: 'connected', tools: ['vault__open'], lastError: null },
        { id: 'down', state: 'reconnecting', tools: [], lastError: 'spawn failed: ENOENT' },
      ]);

      // An agent: only servers configured for it, narrowed to its own allow-list (none of files__*).
      const narrow = await service.introspect({ sessionKey: 'default:rpc:n', agentId: 'narrow' });
      expect(narrow.mcp.servers).toEqual([
        { id: 'files', state: 'connected', tools: [], lastError: null },
        { id: 'down', state: 'reconnecting', tools: [], lastError: 'spawn failed: ENOENT' },
      ]);
      // A session of no known agent sees none.
      expect((await service.introspect({ sessionKey: 'default:rpc:x' })).mcp.servers).toEqual([]);
    });

    it("narrows a run's view to its capability set (an evicted run loses the tools its profile drops)", async () => {
      fixture = autonomyFixture(dialect);
      const db = await fixture.open();
      const runner = scriptedRunner();
      const service = await fixture.service(db, {
        runner: () => runner,
        toolsOf: (agentId) => (agentId === 'ghost' ? undefined : ['echo', 'subagent_list', 'files__read']),
      });
      service.useToolServers(() => [filesServer]);
      const run = await service.spawn({ parentSessionKey: 'p:rpc:1', task: 't' });
      const before = await service.introspect({ sessionKey: run.sessionKey });
      expect(before.mcp.servers).toEqual([
        { id: 'files', state: 'connected', tools: ['files__read'], lastError: null },
      ]);
      await service.evict(run.runId);
      const after = await service.introspect({ sessionKey: run.sessionKey });
      expect(after.mcp.servers).toEqual([{ id: 'files', state: 'connected', tools: [], lastError: null }]);
    });
  });
});
