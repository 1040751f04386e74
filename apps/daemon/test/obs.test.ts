import { afterEach, describe, expect, it } from 'vitest';
import { daemonPool, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-obs-');
afterEach(() => pool.cleanup());

type Json = Record<string, unknown>;

describe('obs namespace', () => {
  it('explains a session identically by session key, trace id and synthetic root id', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    await rpc.call('session.send', { key: 'obs-a', message: '/tool missing_tool {}' });
    const bySession = await rpc.call<Json & { traceId: string; timing: { turnCount: number } }>(
      'obs.explain',
      {
        sessionKey: 'obs-a',
      },
    );
    expect(bySession.timing.turnCount).toBe(1);
    expect(bySession.sessionKey).toBe('obs-a');
    const byTrace = await rpc.call('obs.explain', { traceId: bySession.traceId });
    const byRun = await rpc.call('obs.explain', { rootRunId: 'root-session-obs-a' });
    expect(JSON.stringify(byTrace)).toBe(JSON.stringify(bySession));
    expect(JSON.stringify(byRun)).toBe(JSON.stringify(bySession));

    const rows = await rpc.call<{ rows: Array<{ traceId: string }> }>('obs.trace.search', {
      traceId: bySession.traceId,
    });
    expect(rows.rows.map((row) => row.traceId)).toEqual([bySession.traceId]);
  });

  it('answers the session_not_found marker naming the reference', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    const report = await rpc.call<{ likelyRootCause: { code: string; detail: string } }>('obs.explain', {
      traceId: 'no-such-trace',
    });
    expect(report.likelyRootCause.code).toBe('session_not_found');
    expect(report.likelyRootCause.detail).toContain('no-such-trace');
    expect((await rpc.fail('obs.explain', {})).code).toBe(-32602);
  });

  it('validates sinceHours and reports the fleet', async () => {
    const daemon = await pool.start(pool.tempDir());
    const rpc = rpcClient(daemon.url);
    await rpc.call('session.send', { key: 'obs-b', message: 'hello' });
    const fleet = await rpc.call<{ windowHours: number; sessions: { total: number } }>(
      'obs.fleet.health',
      {},
    );
    expect(fleet.windowHours).toBe(24);
    expect(fleet.sessions.total).toBe(1);
    const error = await rpc.fail('obs.fleet.health', { sinceHours: 0 });
    expect(error.code).toBe(-32602);
  });

  it('stores the events of every package as diagnostics and resets them by table', async () => {
    // Learning would add its `learning:observed` row for the turn.
    const daemon = await pool.start(pool.tempDir(), { config: { learning: { enabled: false } } });
    const rpc = rpcClient(daemon.url);
    await rpc.call('session.send', { key: 'obs-c', message: 'hello' });
    const diagnostics = await rpc.call<{ counts: Record<string, number> }>('obs.diagnostics', {});
    // The turn's event and the config posture row written at start (no provider to ask: all zero).
    expect(diagnostics.counts).toEqual({ 'agent:turn_completed': 1, config_posture: 1 });
    expect(await rpc.call('obs.reset.table', { table: 'diagnostics' })).toMatchObject({ removed: 2 });
    expect((await rpc.call<{ events: unknown[] }>('obs.diagnostics', {})).events).toEqual([]);
    expect((await rpc.fail('obs.reset.table', { table: 'audit' })).code).toBe(-32602);
    // Erasing evidence is itself a security decision: one audit row, naming what was removed.
    const audit = await rpc.call<{ rows: Array<Record<string, unknown>> }>('obs.audit.query', {
      limit: 5000,
    });
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0]).toMatchObject({
      kind: 'config',
      classification: 'allowed',
      outcome: 'success',
      severity: 'medium',
      refs: { action: 'obs_reset', method: 'obs.reset.table', removed: { diagnostics: 2 } },
    });
    // The turn came in over RPC: one message received on webchat, one answer sent.
    expect(await rpc.call('obs.channels.all')).toEqual({
      channels: [
        {
          channelId: 'webchat',
          channelType: 'webchat',
          lastActiveAt: expect.any(Number),
          messagesSent: 1,
          messagesReceived: 1,
        },
      ],
    });
    expect(await rpc.call('obs.channels.get', { channelId: 'webchat' })).toMatchObject({
      channel: { channelId: 'webchat', messagesReceived: 1 },
    });
    expect(await rpc.call('obs.channels.stale', { thresholdMs: 3_600_000 })).toEqual({ stale: [] });
    expect(await rpc.call('obs.delivery.stats')).toEqual({
      total: 0,
      successes: 0,
      failures: 0,
      avgLatencyMs: 0,
    });
  });
});
