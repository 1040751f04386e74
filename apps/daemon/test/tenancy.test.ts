import { createHttpClient, RpcCallError, type TenantMemoryInfo } from '@agentd/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningDaemon } from '../src/index.js';
import { daemonPool, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-tenancy-');
/** The test's daemon, which the helpers below call. */
let daemon: RunningDaemon | undefined;
afterEach(async () => {
  await pool.cleanup();
  daemon = undefined;
});

type Caller = ReturnType<typeof createHttpClient>;

/** Calls any method by name (the typed client knows the catalogue's names only as literals). */
function callAny(client: Caller, method: string, params: Record<string, unknown>): Promise<unknown> {
  return (client.call as unknown as (name: string, params: unknown) => Promise<unknown>)(method, params);
}

async function refusedCode(call: Promise<unknown>): Promise<number | undefined> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return error instanceof RpcCallError ? error.code : undefined;
}

/** Has the admin create an rpc token with `params` on the test daemon and answers a client holding it. */
async function tokenClient(params: Record<string, unknown>): Promise<Caller> {
  const url = daemon!.url;
  const created = await rpcClient(url).call<{ token: string }>('tokens.create', {
    scopes: ['rpc'],
    ...params,
  });
  return createHttpClient({ url, token: created.token });
}

describe('tenant-bound tokens (issue #23)', () => {
  it("reach only their tenant and prefixes, find another tenant's sessions and memory absent (-32004, audited), and unbound tokens keep their reach", async () => {
    daemon = await pool.start(pool.tempDir());
    const admin = rpcClient(daemon.url);
    const acme = await tokenClient({ id: 'acme-app', tenantId: 'acme' });
    const bob = await tokenClient({
      id: 'globex-bob',
      tenantId: 'globex',
      sessionPrefixes: ['globex:chat:bob'],
    });
    const plain = await tokenClient({ id: 'plain' });

    await acme.call('agent.execute', { message: 'hello from acme', sessionKey: 'acme:chat:alice' });
    await bob.call('session.send', { key: 'globex:chat:bob', message: 'hello from bob' });
    await plain.call('session.send', { key: 'default:chat:zed', message: 'hello from zed' });
    // A bound caller that names no session lands in its own tenant.
    const own = (await acme.call('agent.execute', { message: 'hello again' })) as { sessionKey: string };
    expect(own.sessionKey).toBe('acme:rpc:acme-app');

    const refusals: Array<[Caller, string, Record<string, unknown>]> = [
      [acme, 'agent.execute', { message: 'x', sessionKey: 'globex:chat:bob' }],
      [
        acme,
        'agent.execute',
        { message: 'x', sessionKey: { tenantId: 'globex', channelId: 'chat', userId: 'bob' } },
      ],
      [acme, 'session.history', { key: 'globex:chat:bob' }],
      [acme, 'session.send', { key: 'acmex:chat:eve', message: 'x' }],
      [acme, 'session.status', { key: 'default:chat:zed' }],
      [bob, 'session.send', { key: 'globex:chat:carol', message: 'x' }],
      // Prefixes match whole key segments.
      [bob, 'session.send', { key: 'globex:chat:bobby', message: 'x' }],
      [acme, 'memory.search', { query: 'hello', tenant: 'globex' }],
    ];
    for (const [caller, method, params] of refusals) {
      const error = await caller.call(method, params).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      const label = `${method} ${JSON.stringify(params)}`;
      expect(error, label).toBeInstanceOf(RpcCallError);
      expect((error as RpcCallError).code, label).toBe(-32004);
      // As if absent: the answer of a missing session, naming what the caller named.
      expect((error as RpcCallError).message, label).toMatch(/^(Session|Memory tenant) not found: /);
    }
    expect(await bob.call('session.send', { key: 'globex:chat:bob:thread', message: 'x' })).toMatchObject({
      sessionKey: 'globex:chat:bob:thread',
    });

    const keys = (listed: unknown) =>
      (listed as { sessions: Array<{ sessionKey: string }> }).sessions
        .map((session) => session.sessionKey)
        .sort();
    expect(keys(await acme.call('session.list', {}))).toEqual(['acme:chat:alice', 'acme:rpc:acme-app']);
    expect(keys(await bob.call('session.list', {}))).toEqual(['globex:chat:bob', 'globex:chat:bob:thread']);
    expect(keys(await plain.call('session.list', {}))).toHaveLength(5);
    const hits = (await acme.call('session.search', { query: 'hello' })) as Array<{ sessionKey: string }>;
    expect(hits.map((hit) => hit.sessionKey).sort()).toEqual(['acme:chat:alice', 'acme:rpc:acme-app']);
    expect(await plain.call('session.history', { key: 'globex:chat:bob' })).toMatchObject({
      sessionKey: 'globex:chat:bob',
    });

    const rows = (
      await admin.call<{ rows: Array<{ refs: Record<string, unknown> }> }>('obs.audit.query', {
        kind: 'scope',
      })
    ).rows;
    const tenantRefusals = rows.filter((row) => row.refs.reason === 'tenant');
    expect(tenantRefusals).toHaveLength(refusals.length);
    expect(tenantRefusals.map((row) => row.refs.caller)).toContain('globex-bob');
  });

  it("binds cron jobs to the creating token's tenant: named, listed, touched and run only within it", async () => {
    // Learning's daemon-wide `Memory lifecycle` job would be in the admin's list too.
    daemon = await pool.start(pool.tempDir(), { config: { learning: { enabled: false } } });
    const admin = rpcClient(daemon.url);
    const acme = await tokenClient({ id: 'acme-app', tenant: 'acme' });
    const globex = await tokenClient({ id: 'globex-app', tenant: 'globex' });
    const schedule = { kind: 'interval', everyMs: 3_600_000 };
    expect(await acme.call('cron.add', { name: 'digest', message: 'digest', schedule })).toMatchObject({
      created: true,
      name: 'digest',
    });
    // Names are per tenant: another tenant's same name is no "job exists" that would reveal it.
    await globex.call('cron.add', { name: 'digest', message: 'digest', schedule });
    await admin.call('cron.add', { name: 'ops-backup', message: 'backup', schedule });
    // An operator-made job under a tenant's prefix is not the tenant's.
    await admin.call('cron.add', { name: 'acme/planted', message: 'x', schedule });
    const names = (listed: unknown) =>
      (listed as { jobs: Array<{ name: string }> }).jobs.map((job) => job.name).sort();
    expect(names(await acme.call('cron.list', {}))).toEqual(['digest']);
    expect(names(await admin.call('cron.list'))).toEqual([
      'acme/digest',
      'acme/planted',
      'globex/digest',
      'ops-backup',
    ]);
    // Another owner's job cannot even be named: the tenant's names resolve under its prefix.
    for (const [method, params] of [
      ['cron.remove', { name: 'ops-backup' }],
      ['cron.update', { name: 'ops-backup', enabled: false }],
      ['cron.status', { name: 'ops-backup' }],
      ['cron.runs', { jobName: 'ops-backup' }],
      ['cron.run', { name: 'ops-backup' }],
    ] as const) {
      expect(await refusedCode(acme.call(method, params)), method).toBe(-32004);
    }
    // An operator-made job under the tenant's prefix is not the tenant's: absent too.
    for (const [method, params] of [
      ['cron.status', { name: 'planted' }],
      ['cron.remove', { name: 'planted' }],
    ] as const) {
      expect(await refusedCode(acme.call(method, params)), method).toBe(-32004);
    }
    // Running every due job spans every tenant: a scope refusal.
    expect(await refusedCode(acme.call('cron.run', { mode: 'due' }))).toBe(-32603);
    expect(await acme.call('cron.status', { name: 'digest' })).toMatchObject({ name: 'digest' });
    expect(await acme.call('cron.run', { name: 'digest' })).toMatchObject({ jobName: 'digest' });
    // The job's turn runs in the tenant's own session space.
    const sessions = (await acme.call('session.list', {})) as { sessions: Array<{ sessionKey: string }> };
    for (let attempt = 0; attempt < 100 && sessions.sessions.length === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      sessions.sessions = ((await acme.call('session.list', {})) as typeof sessions).sessions;
    }
    expect(sessions.sessions.map((session) => session.sessionKey)).toEqual([
      expect.stringMatching(/^acme:cron:/),
    ]);
    const runs = (await acme.call('cron.runs', { jobName: 'digest' })) as {
      runs: Array<{ jobName: string }>;
    };
    for (const run of runs.runs) expect(run.jobName).toBe('digest');
    expect(await admin.call('cron.remove', { name: 'ops-backup' })).toMatchObject({ removed: true });
    expect(await globex.call('cron.remove', { name: 'digest' })).toMatchObject({
      removed: true,
      name: 'digest',
    });
    expect(names(await acme.call('cron.list', {}))).toEqual(['digest']);
  });

  it("binds graphs to the caller's tenant: defined, saved, run and listed within it, its nodes in the tenant's sessions", async () => {
    daemon = await pool.start(pool.tempDir());
    const admin = rpcClient(daemon.url);
    const acme = await tokenClient({ id: 'acme-app', tenant: 'acme' });
    const globex = await tokenClient({ id: 'globex-app', tenant: 'globex' });
    const call = <T>(client: Caller, method: string, params: Record<string, unknown> = {}) =>
      callAny(client, method, params) as Promise<T>;
    const definition = { nodes: [{ id: 'a', prompt: 'say hello' }] };
    const { graphId } = await call<{ graphId: string }>(acme, 'graph.define', definition);
    const { runId } = await call<{ runId: string }>(acme, 'graph.execute', { graphId });
    let status = '';
    for (let attempt = 0; attempt < 200 && status !== 'completed'; attempt++) {
      status = (await call<{ status: string }>(acme, 'graph.status', { runId })).status;
      if (status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(status).toBe('completed');
    // The node's turn ran in the tenant's session space.
    const sessions = await call<{ sessions: Array<{ sessionKey: string }> }>(acme, 'session.list', {
      kind: 'graph',
    });
    expect(sessions.sessions.map((session) => session.sessionKey)).toEqual([`acme:graph:${runId}:a`]);

    // Saved names are per tenant; the operator sees them qualified.
    expect(await call(acme, 'graph.save', { graphId, name: 'pipe' })).toMatchObject({ name: 'pipe' });
    const other = await call<{ graphId: string }>(globex, 'graph.define', definition);
    await call(globex, 'graph.save', { graphId: other.graphId, name: 'pipe' });
    const names = (listed: unknown) =>
      (listed as { graphs: Array<{ name: string }> }).graphs.map((g) => g.name);
    expect(names(await call(acme, 'graph.list'))).toEqual(['pipe']);
    expect(names(await call(admin as unknown as Caller, 'graph.list'))).toEqual(['acme/pipe', 'globex/pipe']);
    expect(await call(acme, 'graph.load', { name: 'pipe' })).toMatchObject({ name: 'pipe' });

    // Another tenant cannot see, run or touch them.
    expect(await refusedCode(call(globex, 'graph.execute', { graphId }))).toBe(-32004);
    expect(await refusedCode(call(globex, 'graph.save', { graphId, name: 'stolen' }))).toBe(-32004);
    for (const method of [
      'graph.status',
      'graph.outputs',
      'graph.cancel',
      'graph.runDetail',
      'graph.deleteRun',
    ]) {
      expect(await refusedCode(call(globex, method, { runId })), method).toBe(-32004);
    }
    expect((await call<{ runs: unknown[] }>(globex, 'graph.runs')).runs).toEqual([]);
    expect(
      (await call<{ runs: Array<{ runId: string }> }>(acme, 'graph.runs')).runs.map((run) => run.runId),
    ).toEqual([runId]);
    // An operator-made saved graph under the tenant's prefix is not the tenant's.
    await admin.call('graph.save', { graphId, name: 'acme/planted' });
    expect(await refusedCode(call(acme, 'graph.load', { name: 'planted' }))).toBe(-32004);
    expect(await call(acme, 'graph.delete', { name: 'pipe' })).toMatchObject({ deleted: true, name: 'pipe' });
    expect(await call(acme, 'graph.deleteRun', { runId })).toMatchObject({ deleted: true });
  });

  it('refuses bound tokens the namespaces every tenant shares, which unbound tokens keep', async () => {
    daemon = await pool.start(pool.tempDir());
    const acme = await tokenClient({ id: 'acme-app', tenant: 'acme' });
    const unbound = await tokenClient({ id: 'plain' });
    const shared: Array<[string, Record<string, unknown>]> = [
      ['browser.status', {}],
      ['heartbeat.history', {}],
      ['scheduler.wake', { text: 'hello' }],
      ['obs.diagnostics', {}],
    ];
    for (const [method, params] of shared) {
      expect(await refusedCode(callAny(acme, method, params)), method).toBe(-32603);
      expect(await refusedCode(callAny(unbound, method, params)), `${method} unbound`).toBeUndefined();
    }
  });

  it('takes the pinned tenantId (tenant stays an alias), lists it as tenantId, and inspects only the tenant memory', async () => {
    daemon = await pool.start(pool.tempDir());
    const admin = rpcClient(daemon.url);
    const created = await admin.call<Record<string, unknown>>('tokens.create', {
      scopes: ['rpc'],
      id: 'acme-app',
      tenantId: 'acme',
    });
    expect(created).toMatchObject({ id: 'acme-app', tenantId: 'acme' });
    expect(created).not.toHaveProperty('tenant');
    await admin.call('tokens.create', { scopes: ['rpc'], id: 'old-style', tenant: 'acme' });
    const listed = (await admin.call<{ tokens: Array<Record<string, unknown>> }>('tokens.list')).tokens;
    for (const id of ['acme-app', 'old-style']) {
      const token = listed.find((entry) => entry.id === id);
      expect(token, id).toMatchObject({ tenantId: 'acme' });
      expect(token, id).not.toHaveProperty('tenant');
    }
    const conflict = await admin.fail('tokens.create', {
      scopes: ['rpc'],
      tenantId: 'acme',
      tenant: 'globex',
    });
    expect(conflict.code).toBe(-32602);
    expect(conflict.message).toContain('tenant');

    const acme = createHttpClient({ url: daemon.url, token: String(created.token) });
    const own = await admin.call<{ id: string }>('memory.store', {
      content: 'acme keeps kiwis',
      tenant: 'acme',
    });
    const theirs = await admin.call<{ id: string }>('memory.store', {
      content: 'globex keeps owls',
      tenant: 'globex',
    });
    const fallback = await admin.call<{ id: string }>('memory.store', { content: 'default keeps cats' });
    const summary = (await acme.call('memory.inspect', {})) as TenantMemoryInfo;
    expect(summary).toMatchObject({ tenant: 'acme', entries: 1, memories: 1, observations: 0 });
    expect(summary.latest.map((entry) => entry.id)).toEqual([own.id]);
    expect(await acme.call('memory.inspect', { id: own.id })).toMatchObject({ id: own.id, tenant: 'acme' });
    for (const id of [theirs.id, fallback.id]) {
      const error = await acme.call('memory.inspect', { id }).then(
        () => undefined,
        (caught: unknown) => caught as RpcCallError,
      );
      expect(error?.code).toBe(-32004);
      expect(error?.message).toBe(`Memory entry not found: ${id}`);
    }
    // The operator's statistics still span every tenant.
    expect(await admin.call('memory.inspect', {})).toMatchObject({ entries: 3 });
  });

  it('refuses a binding with admin reach or prefixes outside the tenant', async () => {
    daemon = await pool.start(pool.tempDir());
    const admin = rpcClient(daemon.url);
    expect((await admin.fail('tokens.create', { scopes: ['admin'], tenant: 'acme' })).code).toBe(-32602);
    expect(
      (await admin.fail('tokens.create', { scopes: ['rpc'], tenant: 'acme', sessionPrefixes: ['globex:x'] }))
        .code,
    ).toBe(-32602);
  });
});
