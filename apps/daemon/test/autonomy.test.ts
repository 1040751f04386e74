import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  type FakeProvider,
  type FakeReply,
  startFakeOpenAi,
} from '../../../packages/agent-runtime/test/fake-providers.js';
import { ADMIN_TOKEN, daemonPool, eventually, openAiProviders, openRaw, rpcClient } from './helpers.js';

type Json = Record<string, unknown>;

interface Run {
  runId: string;
  status: string;
  sessionKey: string;
  parentRunId?: string;
  rootRunId: string;
  response?: string;
  tokensUsed?: { total: number };
  completedAt?: number;
  endReason?: string;
  resumed: number;
}

const pool = daemonPool('agentd-autonomy-');
afterEach(() => pool.cleanup());

/** The text of the last user message of a chat-completions body. */
function lastUser(body: Json): string {
  const messages = (body.messages as Array<{ role: string; content: unknown }>) ?? [];
  const last = [...messages].reverse().find((message) => message.role === 'user');
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
}

/** Whether the body's last message is a tool result (the model's step after a tool call). */
function afterTool(body: Json): boolean {
  const messages = (body.messages as Array<{ role: string }>) ?? [];
  return messages.at(-1)?.role === 'tool';
}

/** The config of the tests' daemons, with the model fake at `fakeUrl`. */
function testConfig(fakeUrl: string, extra: Json = {}): Json {
  const timeouts = { turnMs: 120_000, stallMs: 90_000, toolMs: 60_000 };
  return {
    gateway: { wsHeartbeatMs: 0 },
    providers: openAiProviders('fake', fakeUrl, 'K', ['m']),
    agents: {
      entries: {
        boss: { name: 'Boss', tools: ['subagent_*', 'capabilities_introspect'], timeouts },
        narrow: { name: 'Narrow', tools: ['subagent_list'] },
        slow: {
          name: 'Slow',
          provider: 'fake',
          tools: ['subagent_list', 'capabilities_introspect'],
          timeouts,
        },
        scripted: {
          name: 'Scripted',
          provider: 'fake',
          tools: ['subagent_*', 'capabilities_introspect'],
          timeouts,
        },
      },
    },
    ...extra,
  };
}

/**
 * A daemon whose agents are `boss` (offline, may spawn and wait), `narrow` (offline, may only
 * list), `slow` and `scripted` (on a local OpenAI-compatible fake whose replies each test scripts).
 */
async function autonomyDaemon(
  respond: (body: Json, index: number) => FakeReply = () => ({ hangMs: 30_000, text: 'late' }),
  extra: Json = {},
  dataDir = pool.tempDir(),
) {
  const fake = pool.closeAfter(await startFakeOpenAi({ apiKey: 'k', respond }));
  const daemon = await pool.start(dataDir, { env: { K: 'k' }, config: testConfig(fake.url, extra) });
  return { daemon, fake, rpc: rpcClient(daemon.url), dataDir };
}

/** Model calls the fake has received (its provider probe is not one). */
function chatCalls(fake: FakeProvider): number {
  return fake.requests.filter((request) => request.path.endsWith('/chat/completions')).length;
}

/** Spawns `task` on `agentId` from the operator's session `default:rpc:ops`; answers the new run. */
function spawnFromOps(
  rpc: ReturnType<typeof rpcClient>,
  agentId: string,
  task: string,
): Promise<{ runId: string; sessionKey: string }> {
  return rpc.call('session.spawn', { parentKey: 'default:rpc:ops', task, agentId });
}

async function statusOf(rpc: ReturnType<typeof rpcClient>, runId: string): Promise<Run> {
  return rpc.call<Run>('session.run_status', { run_id: runId }) as Promise<Run>;
}

async function ended(rpc: ReturnType<typeof rpcClient>, runId: string): Promise<Run> {
  return eventually(async () => {
    const run = await statusOf(rpc, runId);
    return run.status === 'running' ? undefined : run;
  }, 30_000);
}

async function auditActions(rpc: ReturnType<typeof rpcClient>): Promise<string[]> {
  const { rows } = await rpc.call<{ rows: Array<{ refs: Json }> }>('obs.audit.query', { kind: 'lease' });
  return rows.map((row) => String(row.refs.action));
}

describe('sub-agents through the daemon', () => {
  it('spawns at once, reports status, notifies the spawning client, lists runs', async () => {
    const { daemon, rpc } = await autonomyDaemon();
    const { token } = await rpc.call<{ token: string }>('tokens.create', {
      scopes: ['rpc'],
      clientId: 'alice',
    });
    const socket = await openRaw(daemon.wsUrl, token);
    const alice = rpcClient(daemon.url, token);
    // The parent session exists (alice's default rpc session), so the result is noted on it.
    await alice.call('agent.execute', { message: 'hello', agentId: 'boss' });
    const spawned = await alice.call<{ runId: string; sessionKey: string; status: string }>('session.spawn', {
      parentKey: 'default:rpc:alice',
      task: 'say hello',
      agentId: 'boss',
    });
    expect(spawned).toEqual({
      runId: expect.any(String),
      sessionKey: `default:subagent:${spawned.runId}`,
      status: 'running',
    });
    const notice = (await socket.next(30_000)) as { method: string; params: Json };
    expect(notice).toMatchObject({
      method: 'session.completed',
      params: { sessionKey: spawned.sessionKey, result: expect.stringContaining('offline') },
    });
    const run = await statusOf(alice, spawned.runId);
    expect(run).toMatchObject({
      runId: spawned.runId,
      status: 'completed',
      agentId: 'boss',
      task: 'say hello',
      response: notice.params.result,
      tokensUsed: { total: expect.any(Number) },
    });
    expect(run.completedAt).toBeGreaterThanOrEqual((run as unknown as { startedAt: number }).startedAt);
    const parentHistory = await eventually(async () => {
      const history = await alice.call<{ messages: Array<{ role: string; content: string }> }>(
        'session.history',
        { key: 'default:rpc:alice' },
      );
      return history.messages.length === 3 ? history : undefined;
    });
    expect(parentHistory.messages[2]).toMatchObject({
      role: 'user',
      content: expect.stringContaining(`[sub-agent run ${spawned.runId} completed]`),
    });
    const explained = await rpc.call<{ sessionKey: string; agentId: string }>('obs.explain', {
      rootRunId: spawned.runId,
    });
    expect(explained).toMatchObject({ sessionKey: spawned.sessionKey, agentId: 'boss' });
    const listed = await alice.call<{ runs: Run[] }>('subagent.list', { status: 'completed', limit: 5 });
    expect(listed.runs.map((entry) => entry.runId)).toEqual([spawned.runId]);
    const sessions = await rpc.call<{ sessions: Array<{ sessionKey: string }> }>('session.list', {
      kind: 'subagent',
    });
    expect(sessions.sessions.map((entry) => entry.sessionKey)).toContain(spawned.sessionKey);
    expect((await rpc.fail('session.run_status', { run_id: 'nope' })).code).toBe(-32004);
    expect((await rpc.fail('session.spawn', { parentKey: 'a:b:c', task: 'x', agentId: 'ghost' })).code).toBe(
      -32004,
    );
    expect((await rpc.fail('subagent.list', { status: 'weird' })).message).toContain('status');
    socket.close();
  });

  it('lets an agent spawn and wait through its tool, never wider than its own tools', async () => {
    const { rpc } = await autonomyDaemon();
    const task = `/tool subagent_spawn ${JSON.stringify({ task: 'grandchild task', agentId: 'boss', wait: true })}`;
    const parent = await spawnFromOps(rpc, 'boss', task);
    const done = await ended(rpc, parent.runId);
    expect(done.status).toBe('completed');
    expect(done.response).toContain('Tool subagent_spawn returned');
    const { runs } = await rpc.call<{ runs: Run[] }>('subagent.list', {});
    const child = runs.find((run) => run.parentRunId === parent.runId);
    expect(child).toMatchObject({ status: 'completed', rootRunId: parent.runId });

    const narrow = await spawnFromOps(rpc, 'narrow', `/tool subagent_spawn ${JSON.stringify({ task: 'x' })}`);
    expect((await ended(rpc, narrow.runId)).response).toContain('Tool subagent_spawn failed');
  });

  it('kills a run and its grandchild, aborting the model call in progress', async () => {
    const { rpc, fake } = await autonomyDaemon();
    const task = `/tool subagent_spawn ${JSON.stringify({ task: 'think long', agentId: 'slow', wait: true })}`;
    const child = await spawnFromOps(rpc, 'boss', task);
    await eventually(async () => (chatCalls(fake) > 0 ? true : undefined));
    const { runs } = await rpc.call<{ runs: Run[] }>('subagent.list', { status: 'running' });
    const grandchild = runs.find((run) => run.parentRunId === child.runId);
    expect(grandchild).toBeDefined();
    const killed = await rpc.call('subagent.kill', { target: child.runId, reason: 'operator' });
    expect(killed).toEqual({ runId: child.runId, status: 'killed', killed: 2 });
    await fake.aborted;
    expect((await statusOf(rpc, grandchild?.runId ?? '')).status).toBe('killed');
    expect((await statusOf(rpc, child.runId)).status).toBe('killed');
    const underKilled = await rpc.fail('session.spawn', {
      parentKey: grandchild?.sessionKey ?? '',
      task: 'x',
    });
    expect(underKilled).toMatchObject({ code: -32602, message: expect.stringContaining('parentKey') });
    expect(
      await eventually(async () => ((await auditActions(rpc)).includes('subagent.kill') ? true : undefined)),
    ).toBe(true);
  });

  it('steers by respawn, then (after a live config change) by injection, one call per 2 s', async () => {
    const { rpc } = await autonomyDaemon((body) =>
      lastUser(body) === 'think long'
        ? { hangMs: 4000, text: 'first answer' }
        : { text: `echo: ${lastUser(body)}` },
    );
    const run = await spawnFromOps(rpc, 'slow', 'think long');
    const steered = await rpc.call<{ status: string; oldRunId: string; newRunId: string }>('subagent.steer', {
      target: run.runId,
      message: 'new plan',
    });
    expect(steered).toEqual({ status: 'steered', oldRunId: run.runId, newRunId: expect.any(String) });
    expect((await statusOf(rpc, run.runId)).status).toBe('killed');
    expect((await ended(rpc, steered.newRunId)).response).toBe('echo: new plan');

    await rpc.call('config.patch', { security: { agentToAgent: { steerInject: true } } });
    const second = await spawnFromOps(rpc, 'slow', 'think long');
    expect(await rpc.call('subagent.steer', { target: second.sessionKey, message: 'also this' })).toEqual({
      status: 'steered_inject',
      runId: second.runId,
    });
    const limited = await rpc.fail('subagent.steer', { target: second.runId, message: 'too soon' });
    expect(limited.code).toBe(-32000);
    const done = await ended(rpc, second.runId);
    expect(done).toMatchObject({ status: 'completed', response: 'echo: also this' });
    const history = await rpc.call<{ messages: Array<{ role: string; content: string }> }>(
      'session.history',
      {
        key: second.sessionKey,
      },
    );
    expect(history.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'think long',
      'also this',
    ]);
  });

  it('injects a steer into the running turn at its next step boundary: after the tool result, before the next model call', async () => {
    const { rpc, fake } = await autonomyDaemon(
      (body) => {
        // Step 1 thinks a while, then calls a tool; a later step answers what it last heard.
        const messages = (body.messages as Array<{ role: string }>) ?? [];
        if (!messages.some((message) => message.role === 'tool')) {
          return { hangMs: 1500, toolCalls: [{ id: 'c1', name: 'subagent_list', input: {} }] };
        }
        return { text: `echo: ${lastUser(body)}` };
      },
      { security: { agentToAgent: { steerInject: true } } },
    );
    const run = await spawnFromOps(rpc, 'scripted', 'work in steps');
    // Steered while the turn's first model call is in progress.
    await eventually(async () => (chatCalls(fake) >= 1 ? true : undefined));
    expect(await rpc.call('subagent.steer', { target: run.runId, message: 'change course' })).toEqual({
      status: 'steered_inject',
      runId: run.runId,
    });
    const limited = await rpc.fail('subagent.steer', { target: run.runId, message: 'too soon' });
    expect(limited.code).toBe(-32000);
    expect(await ended(rpc, run.runId)).toMatchObject({
      status: 'completed',
      response: 'echo: change course',
    });
    // One turn of two model calls: the second carries the tool result, then the steer.
    const chats = fake.requests.filter((request) => request.path.endsWith('/chat/completions'));
    expect(chats).toHaveLength(2);
    const second = ((chats[1]?.body?.messages ?? []) as Array<{ role: string }>).map(
      (message) => message.role,
    );
    expect(second.slice(-3)).toEqual(['assistant', 'tool', 'user']);
    expect(lastUser(chats[1]?.body ?? {})).toBe('change course');
    const history = await rpc.call<{ messages: Array<{ role: string; content: string }> }>(
      'session.history',
      { key: run.sessionKey },
    );
    expect(history.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'user',
      'assistant',
    ]);
    expect(history.messages[3]?.content).toBe('change course');
  });
});

describe('leases and run control through the daemon', () => {
  it('revokes a lease mid-run: the next tool call is refused, the run goes on', async () => {
    const { rpc } = await autonomyDaemon((body) =>
      afterTool(body)
        ? { text: 'after the tool' }
        : { hangMs: 3000, toolCalls: [{ id: 'c1', name: 'subagent_list', input: {} }] },
    );
    const run = await spawnFromOps(rpc, 'scripted', 'list');
    expect(await rpc.call('lease.revoke', { rootRunId: run.runId })).toEqual({ revoked: 1 });
    expect(await ended(rpc, run.runId)).toMatchObject({ status: 'completed', response: 'after the tool' });
    const history = await rpc.call<{ messages: Array<{ role: string; content: string }> }>(
      'session.history',
      {
        key: run.sessionKey,
      },
    );
    expect(history.messages.find((m) => m.role === 'tool')?.content).toContain('lease');
    expect((await rpc.fail('lease.revoke', { leaseId: 'a', rootRunId: 'b' })).code).toBe(-32602);
    expect((await rpc.fail('lease.revoke', { leaseId: 'missing' })).code).toBe(-32004);
    await eventually(async () => ((await auditActions(rpc)).includes('lease.revoke') ? true : undefined));
  });

  it('run.kill aborts the tree and revokes its leases; autonomy.evict narrows the tree to the default profile', async () => {
    const { rpc } = await autonomyDaemon((body) =>
      lastUser(body) === 'probe'
        ? afterTool(body)
          ? { text: 'probed' }
          : { hangMs: 3000, toolCalls: [{ id: 'p1', name: 'subagent_spawn', input: { task: 'x' } }] }
        : { hangMs: 30_000, text: 'late' },
    );
    const task = `/tool subagent_spawn ${JSON.stringify({ task: 'think long', agentId: 'slow', wait: true })}`;
    const root = await spawnFromOps(rpc, 'boss', task);
    await eventually(async () => {
      const { runs } = await rpc.call<{ runs: Run[] }>('subagent.list', { status: 'running' });
      return runs.length === 2 ? true : undefined;
    });
    expect(await rpc.call('run.kill', { rootRunId: root.runId })).toEqual({ killed: 2 });
    expect(await rpc.call('lease.revoke', { rootRunId: root.runId })).toEqual({ revoked: 0 });
    expect((await rpc.call<{ runs: Run[] }>('subagent.list', { status: 'killed' })).runs).toHaveLength(2);
    expect((await rpc.fail('run.kill', { rootRunId: 'nope' })).code).toBe(-32004);

    const evicted = await spawnFromOps(rpc, 'scripted', 'probe');
    expect(await rpc.call('autonomy.evict', { rootRunId: evicted.runId })).toEqual({ evicted: true });
    const introspected = await rpc.call<{
      runs: Array<{ runId: string; evicted: boolean; capabilities: string[] }>;
    }>('capabilities.introspect');
    expect(introspected.runs.find((run) => run.runId === evicted.runId)).toMatchObject({
      evicted: true,
      capabilities: ['capabilities_introspect', 'subagent_list', 'subagent_wait'],
    });
    expect(await ended(rpc, evicted.runId)).toMatchObject({ status: 'completed', response: 'probed' });
    const history = await rpc.call<{ messages: Array<{ role: string; content: string }> }>(
      'session.history',
      {
        key: evicted.sessionKey,
      },
    );
    expect(history.messages.find((m) => m.role === 'tool')?.content).toContain('default profile');
    const denials = await eventually(async () => {
      const { rows } = await rpc.call<{ rows: Array<{ sessionKey?: string; refs: Json }> }>(
        'obs.audit.query',
        {
          kind: 'capability',
        },
      );
      return rows.length > 0 ? rows : undefined;
    });
    expect(denials[0]).toMatchObject({
      sessionKey: evicted.sessionKey,
      refs: expect.objectContaining({
        toolName: 'subagent_spawn',
        reason: 'capability_denied',
        runId: evicted.runId,
      }),
    });
    await eventually(async () => {
      const actions = await auditActions(rpc);
      return actions.includes('run.kill') && actions.includes('autonomy.evict') ? true : undefined;
    });
  });

  it("introspects only the caller's own runs, identity from the request, never a parameter", async () => {
    const { daemon, rpc } = await autonomyDaemon();
    const { token } = await rpc.call<{ token: string }>('tokens.create', {
      scopes: ['rpc'],
      clientId: 'carol',
    });
    const carol = rpcClient(daemon.url, token);
    const run = await carol.call<{ runId: string }>('session.spawn', {
      parentKey: 'default:rpc:carol',
      task: 'think long',
      agentId: 'slow',
    });
    const own = await carol.call<{ runs: Json[]; quota: Json }>('capabilities.introspect');
    expect(own.runs).toEqual([
      expect.objectContaining({
        runId: run.runId,
        agentId: 'slow',
        budget: expect.objectContaining({ remaining: expect.objectContaining({ toolCalls: 200 }) }),
      }),
    ]);
    expect(own.quota).toMatchObject({ runningRuns: 1, maxConcurrentRuns: 8 });
    expect((await rpc.call<{ runs: Json[] }>('capabilities.introspect')).runs).toEqual([]);
    expect((await carol.fail('capabilities.introspect', { _agentId: 'slow' })).code).toBe(-32602);
    expect((await carol.fail('run.kill', { rootRunId: run.runId })).code).toBe(-32603);
  });

  it('ends the run tree after consecutive denied tool calls (the denial breaker)', async () => {
    const { rpc } = await autonomyDaemon(
      () => ({ toolCalls: [{ id: `d${Math.random()}`, name: 'graph_list', input: {} }] }),
      { autonomy: { denialBreakerThreshold: 3 } },
    );
    const run = await spawnFromOps(rpc, 'scripted', 'misbehave');
    expect(await ended(rpc, run.runId)).toMatchObject({ status: 'completed', endReason: 'denial_breaker' });
    await eventually(async () => ((await auditActions(rpc)).includes('denial_breaker') ? true : undefined));
    const fleet = await rpc.call<{ autonomy: Json; findings: Array<{ code: string }> }>(
      'obs.fleet.health',
      {},
    );
    expect(fleet.autonomy).toMatchObject({ runs: { total: 1 }, denialBreakerTrips: 1, revoked: 0 });
    expect(fleet.findings.map((finding) => finding.code)).toContain('autonomy_denial_breaker');
    const signals = await rpc.call<{ events: Array<{ category: string }> }>('obs.diagnostics', {
      category: 'autonomy_denial_breaker',
    });
    expect(JSON.stringify(signals)).toContain(run.runId);
  });

  it('refuses spawns past the configured limits with -32000', async () => {
    const { rpc } = await autonomyDaemon(undefined, { autonomy: { maxConcurrentRuns: 1 } });
    await spawnFromOps(rpc, 'slow', 'think long');
    const refused = await rpc.fail('session.spawn', {
      parentKey: 'default:rpc:ops',
      task: 'more',
      agentId: 'slow',
    });
    expect(refused.code).toBe(-32000);
    expect(refused.message).toContain('autonomy.maxConcurrentRuns');
  });
});

describe('durable runs across a crash', () => {
  it('after kill -9 mid-run, resumes the run that called no tool and orphans the one that did', async () => {
    let phase: 'before' | 'after' = 'before';
    const fake = await startFakeOpenAi({
      apiKey: 'k',
      respond: (body) => {
        if (phase === 'after') return { text: `after restart: ${lastUser(body)}` };
        if (lastUser(body) === 'unsafe' && !afterTool(body)) {
          return { toolCalls: [{ id: 'u1', name: 'subagent_list', input: {} }] };
        }
        return { hangMs: 60_000, text: 'never' };
      },
    });
    pool.closeAfter(fake);
    const dataDir = pool.tempDir();
    writeFileSync(join(dataDir, 'config.yaml'), stringify(testConfig(fake.url)));
    const first = await pool.startProcess(dataDir, { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN, K: 'k' });
    const before = rpcClient(first.url);
    const spawn = (task: string) => spawnFromOps(before, 'scripted', task);
    const safe = await spawn('safe');
    const unsafe = await spawn('unsafe');
    // Both turns are in their model call: the unsafe one after its tool call.
    await eventually(async () => (chatCalls(fake) >= 3 ? true : undefined), 30_000);
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;

    phase = 'after';
    const callsBefore = chatCalls(fake);
    const daemon = await pool.start(dataDir, { env: { K: 'k' } });
    const rpc = rpcClient(daemon.url);
    expect(await ended(rpc, safe.runId)).toMatchObject({
      status: 'completed',
      resumed: 1,
      response: 'after restart: safe',
    });
    expect(await statusOf(rpc, unsafe.runId)).toMatchObject({
      status: 'orphaned',
      endReason: 'restart',
      toolCalls: 1,
    });
    // Only the resumed run called the model again, once.
    expect(chatCalls(fake) - callsBefore).toBe(1);
    await eventually(async () => ((await auditActions(rpc)).includes('orphaned') ? true : undefined));
    const fleet = await rpc.call<{ autonomy: Json; findings: Array<{ code: string }> }>(
      'obs.fleet.health',
      {},
    );
    expect(fleet.autonomy).toMatchObject({
      runs: { total: 2, degraded: 1, degradedRate: 0.5 },
      orphaned: 1,
      resumed: 1,
      worstRootRunId: unsafe.runId,
    });
    const codes = fleet.findings.map((finding) => finding.code);
    expect(codes).toContain('fleet_autonomy_degradation');
    expect(codes).toContain('durable_orphaned');
  }, 120_000);
});
