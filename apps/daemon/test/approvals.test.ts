import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { PendingApproval } from '@agentd/approvals';
import { createHttpClient } from '@agentd/client';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  ADMIN_TOKEN,
  cliNodeArgs,
  daemonPool,
  eventually,
  openRaw,
  type RawSocket,
  rpcClient,
} from './helpers.js';

const run = promisify(execFile);
const pool = daemonPool('agentd-approvals-');
afterEach(() => pool.cleanup());

type Json = Record<string, unknown>;
interface TurnResult {
  response: string;
}

const PLANTED = 'sk-planted-0123456789abcdefghijklmnop';

/** An offline agent allowed the graph tools, with approvals as given. */
function config(approvals: Json = { enabled: true, defaultMode: 'require' }): Json {
  return {
    gateway: { wsHeartbeatMs: 0 },
    providers: { entries: { tiny: { type: 'offline', models: ['offline-nano'] } } },
    agents: { entries: { ops: { name: 'Ops', provider: 'tiny', tools: ['graph_define', 'graph_list'] } } },
    approvals,
  };
}

/** A `/tool graph_define` message: the offline provider calls the tool with this input. */
const defineGraph = (node = 'a', prompt = 'hello') =>
  `/tool graph_define ${JSON.stringify({ nodes: [{ id: node, prompt }] })}`;

async function start(approvals?: Json, dataDir = pool.tempDir()) {
  const daemon = await pool.start(dataDir, { config: config(approvals) });
  const admin = rpcClient(daemon.url);
  // Turns wait on approvals: a client with a long request timeout runs them.
  const turns = createHttpClient({ url: daemon.url, token: ADMIN_TOKEN, requestTimeoutMs: 120_000 });
  const turn = (message: string, sessionKey = 'default:rpc:ops-user') =>
    turns.call('agent.execute', { agentId: 'ops', message, sessionKey }) as Promise<TurnResult>;
  const pending = async () =>
    (await admin.call<{ requests: PendingApproval[] }>('admin.approval.pending')).requests;
  const waitPending = (count: number) =>
    eventually(async () => {
      const list = await pending();
      return list.length === count ? list : undefined;
    });
  const auditRows = async () =>
    (
      await admin.call<{ rows: Array<{ classification: string; refs: Json }> }>('obs.audit.query', {
        kind: 'approval',
      })
    ).rows;
  return { daemon, dataDir, admin, turn, pending, waitPending, auditRows };
}

/** Next notification of `method` on a raw socket (other messages are skipped). */
async function nextNotification(socket: RawSocket, method: string): Promise<Json> {
  for (;;) {
    const message = (await socket.next(10_000)) as Json;
    if (message.method === method) return message.params as Json;
  }
}

describe('approval gates (issue #15)', { timeout: 120_000 }, () => {
  it('pauses a required tool call until it is approved, then the tool runs; admins are notified', async () => {
    const { daemon, admin, turn, waitPending, auditRows } = await start();
    const adminSocket = await openRaw(daemon.wsUrl);
    const created = await admin.call<{ token: string }>('tokens.create', { scopes: ['rpc'], id: 'app' });
    const rpcSocket = await openRaw(daemon.wsUrl, created.token);

    let done = false;
    const result = turn(defineGraph('a', `hello, call it with Bearer ${PLANTED}`)).finally(() => {
      done = true;
    });
    const [request] = await waitPending(1);
    expect(request).toMatchObject({
      sessionKey: 'default:rpc:ops-user',
      agentId: 'ops',
      toolName: 'graph_define',
      waiting: 1,
      argsDigest: { sha256: expect.stringMatching(/^[0-9a-f]{16}$/), bytes: expect.any(Number) },
    });
    expect(request?.ageMs).toBeGreaterThanOrEqual(0);
    expect(request?.argsDigest.preview).toContain('hello');
    expect(JSON.stringify(request)).not.toContain(PLANTED);
    expect(done).toBe(false);

    const announced = await nextNotification(adminSocket, 'approval.requested');
    expect(announced).toMatchObject({ id: request?.id, toolName: 'graph_define' });
    expect(JSON.stringify(announced)).not.toContain(PLANTED);

    const resolution = await admin.call('admin.approval.resolve', {
      id: request?.id,
      approved: true,
      reason: 'ok',
    });
    expect(resolution).toMatchObject({ id: request?.id, approved: true, status: 'approved', reason: 'ok' });
    expect((await result).response).toMatch(/Tool graph_define returned: .*graphId/);
    expect(await nextNotification(adminSocket, 'approval.resolved')).toMatchObject({
      id: request?.id,
      approved: true,
    });
    // Notifications name sessions of every tenant: only admin sockets get them.
    rpcSocket.send(JSON.stringify({ jsonrpc: '2.0', method: 'system.ping', id: 1 }));
    expect(await rpcSocket.next()).toMatchObject({ id: 1 });

    // The approval is cached for the session and tool: the next call runs at once.
    expect((await turn(defineGraph('b'))).response).toMatch(/Tool graph_define returned/);
    const rows = await auditRows();
    expect(rows.map((row) => [row.classification, row.refs.action, row.refs.reason])).toEqual(
      expect.arrayContaining([
        ['escalated', 'request', undefined],
        ['allowed', 'resolve', 'operator'],
        ['allowed', 'cache', 'approval_cache'],
      ]),
    );
    expect(JSON.stringify(rows)).not.toContain(PLANTED);
    adminSocket.close();
    rpcSocket.close();
  });

  it('denies: the tool does not run, the denial is cached until clearDenialCache; session.reset clears approvals', async () => {
    const { admin, turn, waitPending } = await start();
    const first = turn(defineGraph());
    const [request] = await waitPending(1);
    await admin.call('admin.approval.resolve', { id: request?.id, approved: false, reason: 'not now' });
    expect((await first).response).toMatch(/Tool graph_define failed: .*not approved.*not now/);
    // Denied moments ago: refused at once without a new request.
    expect((await turn(defineGraph('c'))).response).toMatch(/denied moments ago \(not now\)/);
    expect(await admin.call('admin.approval.pending')).toEqual({ requests: [] });
    expect(await admin.call('admin.approval.clearDenialCache')).toEqual({ cleared: true });

    const again = turn(defineGraph('d'));
    const [second] = await waitPending(1);
    await admin.call('admin.approval.resolve', { id: second?.id, approved: true });
    expect((await again).response).toMatch(/Tool graph_define returned/);
    await admin.call('session.reset', { session_key: 'default:rpc:ops-user' });
    // The cached approval went with the reset: the next call asks again.
    const third = turn(defineGraph('e'));
    const [asked] = await waitPending(1);
    expect(asked?.id).not.toBe(second?.id);
    await admin.call('admin.approval.resolveAll', { approved: true });
    await third;
  });

  it('denies with reason timeout when nobody answers', async () => {
    const { turn, waitPending, auditRows } = await start({
      enabled: true,
      defaultMode: 'require',
      timeoutMs: 1500,
    });
    const waiting = turn(defineGraph('x'), 'default:rpc:one');
    const [request] = await waitPending(1);
    expect((await waiting).response).toMatch(/not approved: the approval request was denied \(timeout\)/);
    expect(await auditRows()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          classification: 'denied',
          refs: expect.objectContaining({ reason: 'timeout', resolvedBy: 'system', requestId: request?.id }),
        }),
      ]),
    );
  });

  it('keeps a request pending when its turn ends; the same call retried joins it', async () => {
    const { daemon, admin, turn, waitPending } = await start();
    // A caller that gives up: its HTTP request is aborted, which cancels the turn.
    const gaveUp = new AbortController();
    const first = fetch(`${daemon.url}/rpc`, {
      method: 'POST',
      signal: gaveUp.signal,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'agent.execute',
        params: { agentId: 'ops', message: defineGraph('j'), sessionKey: 'default:rpc:retry' },
      }),
    }).catch((error: unknown) => error);
    const [request] = await waitPending(1);
    gaveUp.abort();
    await first;
    await eventually(async () => ((await waitPending(1))[0]?.waiting === 0 ? true : undefined));

    const retry = turn(defineGraph('j'), 'default:rpc:retry');
    const [joined] = await eventually(async () => {
      const list = await waitPending(1);
      return list[0]?.waiting === 1 ? list : undefined;
    });
    expect(joined?.id).toBe(request?.id);
    await admin.call('admin.approval.resolve', { id: request?.id, approved: true });
    expect((await retry).response).toMatch(/Tool graph_define returned/);
  });

  it('resolveAll decides one session or all, answering the ids; bad params and unknown ids are refused', async () => {
    const { admin, turn, waitPending } = await start();
    const one = turn(defineGraph('p'), 'default:rpc:one');
    const two = turn(defineGraph('q'), 'default:rpc:two');
    const listed = await waitPending(2);
    const ofOne = listed.find((request) => request.sessionKey === 'default:rpc:one');
    expect(
      await admin.call('admin.approval.resolveAll', { approved: true, sessionKey: 'default:rpc:one' }),
    ).toEqual({
      resolved: 1,
      requestIds: [ofOne?.id],
    });
    expect((await one).response).toMatch(/Tool graph_define returned/);
    const rest = await admin.call<{ resolved: number; requestIds: string[] }>('admin.approval.resolveAll', {
      approved: false,
      approvedBy: 'night-shift',
      reason: 'bulk',
    });
    expect(rest.resolved).toBe(1);
    expect((await two).response).toMatch(/denied \(bulk\)/);
    expect(await admin.call('admin.approval.resolveAll', { approved: true })).toEqual({
      resolved: 0,
      requestIds: [],
    });

    const missing = await admin.fail('admin.approval.resolve', { id: 'toString', approved: true });
    expect([missing.code, missing.message]).toEqual([-32004, 'Approval request not found: toString']);
    const bad = await admin.fail('admin.approval.resolve', { id: 'x', approved: 'yes' });
    expect([bad.code, bad.message]).toEqual([-32602, expect.stringContaining('approved')]);
    expect((await admin.fail('admin.approval.resolveAll', {})).message).toContain('approved');
    expect((await admin.fail('admin.approval.pending', { extra: 1 })).code).toBe(-32602);
    // Answering a decided request again changes nothing and says so.
    expect(await admin.call('admin.approval.resolve', { id: ofOne?.id, approved: false })).toMatchObject({
      alreadyResolved: true,
      status: 'approved',
    });
  });

  it('refuses rpc-scoped tokens on every admin.approval method with -32603', async () => {
    const { daemon, admin } = await start();
    const created = await admin.call<{ token: string }>('tokens.create', { scopes: ['rpc'] });
    const rpc = rpcClient(daemon.url, created.token);
    for (const [method, params] of [
      ['admin.approval.pending', {}],
      ['admin.approval.resolve', { id: 'a', approved: true }],
      ['admin.approval.resolveAll', { approved: true }],
      ['admin.approval.clearDenialCache', {}],
    ] as const) {
      const error = await rpc.fail(method, params);
      expect([method, error.code, error.message]).toEqual([
        method,
        -32603,
        "Insufficient scope: requires 'admin'",
      ]);
    }
  });

  it('applies the approvals section live: off lets calls through, on asks', async () => {
    const { admin, turn, waitPending } = await start({});
    expect((await turn(defineGraph())).response).toMatch(/Tool graph_define returned/);
    await admin.call('config.patch', {
      approvals: { enabled: true, rules: [{ tool: 'graph_*', mode: 'require' }] },
    });
    const waiting = turn(defineGraph('z'));
    await waitPending(1);
    await admin.call('config.patch', { approvals: { rules: [{ tool: 'graph_def*', mode: 'deny' }] } });
    expect((await turn(defineGraph('y'), 'default:rpc:other')).response).toMatch(
      /the approval rules deny it/,
    );
    await admin.call('admin.approval.resolveAll', { approved: false });
    expect((await waiting).response).toMatch(/not approved/);
  });

  it('a request pending at stop is denied with reason restart at the next start', async () => {
    const first = await start();
    const waiting = first.turn(defineGraph());
    const [request] = await first.waitPending(1);
    await first.daemon.stop();
    // The stop does not wait for the approval: the turn ends with the call refused.
    expect((await waiting).response).toMatch(/not approved.*\(shutdown\)/);

    const second = await start(undefined, first.dataDir);
    expect(await second.pending()).toEqual([]);
    expect(
      await second.admin.call('admin.approval.resolve', { id: request?.id, approved: true }),
    ).toMatchObject({
      alreadyResolved: true,
      approved: false,
      reason: 'restart',
      resolvedBy: 'system',
    });
    expect(await second.auditRows()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          classification: 'denied',
          refs: expect.objectContaining({ reason: 'restart', requestId: request?.id }),
        }),
      ]),
    );
  });

  it('a request pending when the daemon is killed (SIGKILL) is denied with reason restart', async () => {
    const dataDir = pool.tempDir();
    writeFileSync(join(dataDir, 'config.yaml'), stringify(config()));
    const proc = await pool.startProcess(dataDir, { AGENTD_ADMIN_TOKEN: ADMIN_TOKEN });
    const admin = rpcClient(proc.url);
    const turns = createHttpClient({ url: proc.url, token: ADMIN_TOKEN, requestTimeoutMs: 120_000 });
    const waiting = turns
      .call('agent.execute', { agentId: 'ops', message: defineGraph() })
      .catch(() => 'cut off');
    const [request] = await eventually(async () => {
      const { requests } = await admin.call<{ requests: PendingApproval[] }>('admin.approval.pending');
      return requests.length === 1 ? requests : undefined;
    });
    const exited = new Promise((resolve) => proc.child.once('exit', resolve));
    proc.child.kill('SIGKILL');
    await exited;
    expect(await waiting).toBe('cut off');

    const second = await start(undefined, dataDir);
    expect(await second.pending()).toEqual([]);
    expect(
      await second.admin.call('admin.approval.resolve', { id: request?.id, approved: true }),
    ).toMatchObject({
      alreadyResolved: true,
      reason: 'restart',
    });
  });

  it('agentd approvals / approve / deny drive the same methods from the CLI', async () => {
    const { daemon, turn, waitPending } = await start();
    const cli = (...args: string[]) =>
      run(process.execPath, [...cliNodeArgs, ...args, '--url', daemon.url], {
        env: { ...process.env, AGENTD_TOKEN: ADMIN_TOKEN },
      });
    expect((await cli('approvals')).stdout).toBe('no pending approvals\n');
    const approvedTurn = turn(defineGraph('a'), 'default:rpc:cli-1');
    const [first] = await waitPending(1);
    const listed = (await cli('approvals')).stdout;
    expect(listed).toContain(first?.id);
    expect(listed).toContain('graph_define  agent ops  session default:rpc:cli-1');
    expect((await cli('approve', first?.id ?? '')).stdout).toBe(
      `${first?.id} approved: graph_define in session default:rpc:cli-1\n`,
    );
    expect((await approvedTurn).response).toMatch(/Tool graph_define returned/);

    const deniedTurn = turn(defineGraph('b'), 'default:rpc:cli-2');
    const [second] = await waitPending(1);
    expect((await cli('deny', second?.id ?? '', '--reason', 'too risky')).stdout).toBe(
      `${second?.id} denied: graph_define in session default:rpc:cli-2 (too risky)\n`,
    );
    expect((await deniedTurn).response).toMatch(/denied \(too risky\)/);
    const missing = await cli('approve', 'nope').catch((error: { code: number; stderr: string }) => error);
    expect(missing).toMatchObject({ code: 1, stderr: 'error -32004: Approval request not found: nope\n' });
  });
});
