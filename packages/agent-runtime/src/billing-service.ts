import type { Prices } from './config.js';
import type { ModelUsage } from './provider.js';
import type { RuntimeContext } from './runtime-context.js';
import { type BillingAggregate, roundUsd } from './session-store.js';

/** The billing API of the runtime (`AgentRuntime.billing`). */
export interface BillingApi {
  total(sinceMs?: number): Promise<BillingAggregate>;
  byAgent(agentId: string, sinceMs?: number): Promise<BillingAggregate>;
  bySession(sessionKey: string, sinceMs?: number): Promise<BillingAggregate>;
  byProvider(sinceMs?: number): Promise<{
    providers: Array<{
      provider: string;
      inputTokens: number;
      outputTokens: number;
      estimatedCostUsd: number;
    }>;
  }>;
  usage24h(): Promise<Array<{ hour: number; tokens: number }>>;
}

/** Creates the billing API over the session store's billing rows. */
export function createBillingApi(ctx: RuntimeContext): BillingApi {
  const { store } = ctx;
  return {
    total: (sinceMs) => store.billingAggregate({ sinceMs }),
    byAgent: (agentId, sinceMs) => store.billingAggregate({ agentId, sinceMs }),
    bySession: (sessionKey, sinceMs) => store.billingAggregate({ sessionKey, sinceMs }),
    byProvider: async (sinceMs) => ({ providers: await store.billingByProvider(sinceMs) }),
    async usage24h() {
      const hourMs = 3_600_000;
      const currentBucket = Math.floor(ctx.now() / hourMs);
      const buckets = await store.billingHourly((currentBucket - 23) * hourMs);
      const out: Array<{ hour: number; tokens: number }> = [];
      for (let bucket = currentBucket - 23; bucket <= currentBucket; bucket++) {
        out.push({ hour: new Date(bucket * hourMs).getUTCHours(), tokens: buckets.get(bucket) ?? 0 });
      }
      return out;
    },
  };
}

/** What a model call cost at the model's prices, and what its cache reads saved. */
export function costOf(usage: ModelUsage, prices: Prices): { costUsd: number; cacheSavedUsd: number } {
  const readPrice = prices.cacheReadPerMillion ?? prices.inputPerMillion;
  const writePrice = prices.cacheWritePerMillion ?? prices.inputPerMillion;
  const uncached = Math.max(0, usage.inputTokens - usage.cacheReadTokens - usage.cacheWriteTokens);
  const cost =
    (uncached * prices.inputPerMillion +
      usage.cacheReadTokens * readPrice +
      usage.cacheWriteTokens * writePrice +
      usage.outputTokens * prices.outputPerMillion) /
    1_000_000;
  const saved = (usage.cacheReadTokens * Math.max(0, prices.inputPerMillion - readPrice)) / 1_000_000;
  return { costUsd: roundUsd(cost), cacheSavedUsd: roundUsd(saved) };
}

/** Adds one call's usage to a running total. */
export function addUsage(total: ModelUsage, add: ModelUsage): void {
  total.inputTokens += add.inputTokens;
  total.outputTokens += add.outputTokens;
  total.cacheReadTokens += add.cacheReadTokens;
  total.cacheWriteTokens += add.cacheWriteTokens;
}
