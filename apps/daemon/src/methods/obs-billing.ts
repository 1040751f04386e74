import type { AgentRuntime } from '@agentd/agent-runtime';
import { defineMethod } from '@agentd/rpc-core';
import { z } from 'zod';
import { mapped } from './agent-errors.js';

const since = z.number().int().nonnegative().optional();

/** obs.billing.*: aggregates of the billing records every turn writes. */
export function obsBillingMethods(deps: { runtime: AgentRuntime }) {
  const { billing } = deps.runtime;
  return [
    defineMethod({
      name: 'obs.billing.total',
      scope: 'admin',
      description: 'Billing aggregate over all stored records since `sinceMs`.',
      params: z.object({ sinceMs: since }).strict(),
      handler: ({ sinceMs }) => mapped(() => billing.total(sinceMs)),
    }),
    defineMethod({
      name: 'obs.billing.byAgent',
      scope: 'admin',
      description: 'Billing aggregate of one agent.',
      params: z.object({ agentId: z.string().min(1).max(64), sinceMs: since }).strict(),
      handler: ({ agentId, sinceMs }) => mapped(() => billing.byAgent(agentId, sinceMs)),
    }),
    defineMethod({
      name: 'obs.billing.bySession',
      scope: 'admin',
      description: 'Billing aggregate of one session.',
      params: z.object({ sessionKey: z.string().min(1).max(512), sinceMs: since }).strict(),
      handler: ({ sessionKey, sinceMs }) => mapped(() => billing.bySession(sessionKey, sinceMs)),
    }),
    defineMethod({
      name: 'obs.billing.byProvider',
      scope: 'admin',
      description: 'Tokens and estimated cost per provider.',
      params: z.object({ sinceMs: since }).strict(),
      handler: ({ sinceMs }) => mapped(() => billing.byProvider(sinceMs)),
    }),
    defineMethod({
      name: 'obs.billing.usage24h',
      scope: 'admin',
      description: 'Tokens per hour over the last 24 hours, oldest first; `hour` is the UTC hour of day.',
      params: z.object({}).strict(),
      handler: () => mapped(() => billing.usage24h()),
    }),
  ];
}
