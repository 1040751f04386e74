import { describe, expect, it } from 'vitest';
import { testDialects } from '@agentd/storage/testing';
import { startRuntime } from '../test/helpers.js';

// Every test runs on both dialects (PostgreSQL when the test server is set).
describe.each(testDialects())('billing on %s', (dialect) => {
  const start = (options: Parameters<typeof startRuntime>[0] = {}) => startRuntime(options, dialect);

  describe('createAgentRuntime', () => {
    it('writes billing with prices and cache tokens, and aggregates it', async () => {
      const t = await start({
        offline: {
          script: () => ({
            text: 'cached',
            usage: { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 600, cacheWriteTokens: 100 },
          }),
        },
        providers: {
          entries: {
            priced: {
              type: 'offline',
              models: ['m1'],
              prices: {
                inputPerMillion: 3,
                outputPerMillion: 15,
                cacheReadPerMillion: 0.3,
                cacheWritePerMillion: 3.75,
              },
            },
          },
        },
        agents: { entries: { p: { name: 'P', provider: 'priced' } } },
      });
      await t.runtime.runTurn({ agentId: 'p', message: 'one', sessionKey: 'b1' });
      await t.runtime.runTurn({ agentId: 'p', message: 'two', sessionKey: 'b2' });
      // (300*3 + 600*0.3 + 100*3.75 + 100*15) / 1e6 = 0.002955 per turn
      const total = await t.runtime.billing.total();
      expect(total.totalCost).toBeCloseTo(0.00591, 9);
      expect(total.totalTokens).toBe(2200);
      expect(total.callCount).toBe(2);
      expect(total.totalCacheSaved).toBeCloseTo((2 * 600 * 2.7) / 1e6, 9);
      expect((await t.runtime.billing.bySession('b1')).totalCost).toBeCloseTo(0.002955, 9);
      expect((await t.runtime.billing.byAgent('p')).callCount).toBe(2);
      expect((await t.runtime.billing.byAgent('default')).callCount).toBe(0);
      expect((await t.runtime.billing.total(Date.now() + 60_000)).callCount).toBe(0);
      expect(await t.runtime.billing.byProvider()).toEqual({
        providers: [{ provider: 'priced', inputTokens: 2000, outputTokens: 200, estimatedCostUsd: 0.00591 }],
      });
      const hours = await t.runtime.billing.usage24h();
      expect(hours).toHaveLength(24);
      expect(hours.at(-1)).toEqual({ hour: new Date().getUTCHours(), tokens: 2200 });
      expect(await t.runtime.cacheStats('p')).toMatchObject({
        agentId: 'p',
        hits: 2,
        misses: 0,
        hitRate: 1,
        cacheReadTokens: 1200,
      });
    });
  });
});
