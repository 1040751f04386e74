import { seriesValue } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, daemonPool, eventually, rpcClient } from './helpers.js';

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
});
