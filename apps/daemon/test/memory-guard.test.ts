import { seriesValue } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, daemonPool, eventually, openRaw, rpcClient } from './helpers.js';

const pool = daemonPool('agentd-memory-guard-');
afterEach(() => pool.cleanup());

describe('gateway.memoryHighWaterMb', () => {
  it('refuses new turns with OVERLOADED above the mark, keeps other calls working, and counts it', async () => {
    // A mark of 1 MB: any daemon is above it, so the guard sheds from its first look.
    const daemon = await pool.start(pool.tempDir(), { config: { gateway: { memoryHighWaterMb: 1 } } });
    const admin = rpcClient(daemon.url);
    const refusal = await eventually(async () => {
      const error = await admin.fail('agent.execute', { message: 'hello' }).catch(() => undefined);
      return error?.code === -32000 ? error : undefined;
    }, 20_000);
    expect(refusal.data).toMatchObject({ code: 'OVERLOADED', retryAfterMs: 10_000 });
    expect(refusal.message).toContain('gateway.memoryHighWaterMb');
    expect(await admin.call('system.ping')).toMatchObject({ pong: true });
    const text = await (
      await fetch(`${daemon.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
    ).text();
    expect(seriesValue(text, 'agentd_memory_shedding')).toBe(1);
    expect(seriesValue(text, 'agentd_memory_pressure_total')).toBe(1);
  });

  it('halves the per-connection rate limit while shedding', async () => {
    const daemon = await pool.start(pool.tempDir(), {
      config: {
        gateway: {
          memoryHighWaterMb: 1,
          wsMessageRateLimit: { maxMessages: 10, windowMs: 60_000 },
          wsHeartbeatMs: 0,
        },
      },
    });
    const admin = rpcClient(daemon.url);
    await eventually(async () => {
      const error = await admin.fail('agent.execute', { message: 'hello' }).catch(() => undefined);
      return error?.code === -32000 ? true : undefined;
    }, 20_000);
    const socket = await openRaw(daemon.wsUrl);
    for (let id = 1; id <= 10; id++)
      socket.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'system.ping' }));
    const answers: Array<{ id: unknown; error?: { message: string } }> = [];
    for (let i = 0; i < 10; i++)
      answers.push((await socket.next()) as { id: unknown; error?: { message: string } });
    expect(answers.filter((a) => a.error === undefined).map((a) => a.id)).toEqual([1, 2, 3, 4, 5]);
    expect(answers.filter((a) => a.error?.message === 'Message rate limit exceeded')).toHaveLength(5);
    socket.close();
  });
});
