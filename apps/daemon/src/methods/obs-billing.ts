import type { AgentRuntime } from '@agentd/agent-runtime';
import { z } from 'zod';
import { toRpcError } from './agent-errors.js';
import { methodsOf } from './define.js';

const since = z.number().int().nonnegative().optional();

/** obs.billing.*: aggregates of the billing records every turn writes. */
export function obsBillingMethods(deps: { runtime: AgentRuntime }) {
  const { billing } = deps.runtime;
  const { adminMethod } = methodsOf('obs.billing', toRpcError);
  return [
    adminMethod('total', {
      description: 'Billing aggregate over all stored records since `sinceMs`.',
      params: z.object({ sinceMs: since }).strict(),
      handler: ({ sinceMs }) => billing.total(sinceMs),
    }),
    adminMethod('byAgent', {
      description: 'Billing aggregate of one agent.',
      params: z.object({ agentId: z.string().min(1).max(64), sinceMs: since }).strict(),
      handler: ({ agentId, sinceMs }) => billing.byAgent(agentId, sinceMs),
    }),
    adminMethod('bySession', {
      description: 'Billing aggregate of one session.',
      params: z.object({ sessionKey: z.string().min(1).max(512), sinceMs: since }).strict(),
      handler: ({ sessionKey, sinceMs }) => billing.bySession(sessionKey, sinceMs),
    }),
    adminMethod('byProvider', {
      description: 'Tokens and estimated cost per provider.',
      params: z.object({ sinceMs: since }).strict(),
      handler: ({ sinceMs }) => billing.byProvider(sinceMs),
    }),
    adminMethod('usage24h', {
      description: 'Tokens per hour over the last 24 hours, oldest first; `hour` is the UTC hour of day.',
      handler: () => billing.usage24h(),
    }),
  ];
}
