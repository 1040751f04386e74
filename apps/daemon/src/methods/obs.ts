import {
  auditQuerySchema,
  diagnosticsQuerySchema,
  explainParamsSchema,
  fleetHealthParamsSchema,
  isObsReportsError,
  OBS_RESET_TABLES,
  type ObsEvidence,
  type ObsService,
  traceSearchParamsSchema,
} from '@agentd/obs-reports';
import { contextDagByAgent } from '@agentd/agent-runtime';
import { type MethodContext, RpcError } from '@agentd/rpc-core';
import type { Database } from '@agentd/storage';
import { z } from 'zod';
import { noopSecurityAudit, type SecurityAudit } from '@agentd/evidence';
import { auditAdminChange, methodsOf } from './define.js';

/** A report request the service refuses becomes -32602 naming the field; anything else is unchanged. */
function obsRpcError(error: unknown): unknown {
  if (!isObsReportsError(error, 'INVALID_PARAMS')) return error;
  return RpcError.invalidParams(
    error.message,
    (error.data?.issues ?? []).map((issue) => ({ path: issue.path, code: 'custom', message: issue.message })),
  );
}

/** The obs namespace except obs.billing.* (see obs-billing.ts). All admin except obs.diagnostics. */
export function obsMethods(deps: {
  service: ObsService;
  evidence: ObsEvidence;
  db: Database;
  contextEngine: unknown;
  now: () => number;
  /** Producer of the audit event an evidence reset is (it erases what operators investigate). @default emits nothing */
  audit?: SecurityAudit;
}) {
  const { service, evidence, db } = deps;
  const audit = deps.audit ?? noopSecurityAudit;
  const auditReset = (context: MethodContext, removed: Record<string, number>) =>
    auditAdminChange(audit, context, 'medium', { action: 'obs_reset', removed });
  const agentFilter = z.object({ agentId: z.string().min(1).max(64).optional() }).strict();
  const { rpcMethod, adminMethod } = methodsOf('obs', obsRpcError);
  return [
    adminMethod('explain', {
      description: 'IncidentReport of one session, by session key, trace id or root run id.',
      params: explainParamsSchema,
      handler: (params) => service.explain(params),
    }),
    adminMethod('fleet.health', {
      description: 'FleetHealthReport over the last `sinceHours` (default 24).',
      params: fleetHealthParamsSchema,
      handler: (params) => service.fleetHealth(params),
    }),
    adminMethod('trace.search', {
      description: 'Session-index rows of the last two days, newest first.',
      params: traceSearchParamsSchema,
      handler: (params) => service.traceSearch(params),
    }),
    adminMethod('audit.query', {
      description:
        'Rows of the durable security-decision audit, newest first; limit default 200, clamped to 1000.',
      params: auditQuerySchema,
      handler: async (params) => ({ rows: await evidence.audit(params) }),
    }),
    rpcMethod('diagnostics', {
      description: 'Scrubbed diagnostic events newest first, and counts per category.',
      params: diagnosticsQuerySchema,
      handler: (params) => evidence.diagnostics(params),
    }),
    adminMethod('getCacheStats', {
      description: 'Prompt-cache statistics from the billing records.',
      handler: () => service.cacheStats(),
    }),
    adminMethod('channels.all', {
      description: 'Activity of every channel (empty until a channel adapter records activity).',
      handler: async () => ({ channels: await evidence.channels() }),
    }),
    adminMethod('channels.get', {
      description: 'Activity of one channel, or null.',
      params: z.object({ channelId: z.string().min(1).max(256) }).strict(),
      handler: async ({ channelId }) => ({
        channel: (await evidence.channels()).find((channel) => channel.channelId === channelId) ?? null,
      }),
    }),
    adminMethod('channels.stale', {
      description: 'Channels idle for at least `thresholdMs` (default 300000).',
      params: z.object({ thresholdMs: z.number().int().nonnegative().optional() }).strict(),
      handler: async ({ thresholdMs }) => {
        const cutoff = deps.now() - (thresholdMs ?? 300_000);
        return { stale: (await evidence.channels()).filter((channel) => channel.lastActiveAt <= cutoff) };
      },
    }),
    adminMethod('delivery.recent', {
      description: 'Delivery traces newest first (empty until a channel adapter records deliveries).',
      params: z
        .object({
          sinceMs: z.number().int().nonnegative().optional(),
          limit: z.number().int().positive().optional(),
          channelId: z.string().min(1).max(256).optional(),
        })
        .strict(),
      handler: async (params) => ({ deliveries: await evidence.deliveries(params) }),
    }),
    adminMethod('delivery.stats', {
      description: 'Delivery totals.',
      handler: () => evidence.deliveryStats(),
    }),
    adminMethod('context.dag', {
      description: 'Session and compaction counts per agent from the session store.',
      params: agentFilter,
      handler: async ({ agentId }) => ({ agents: await contextDagByAgent(db, agentId) }),
    }),
    adminMethod('context.pipeline', {
      description: 'Context assembly configuration and token budgets.',
      params: agentFilter,
      handler: ({ agentId }) => ({
        ...(agentId ? { agentId } : {}),
        layers: ['system', 'tools', 'summary', 'history', 'freshTail'],
        contextEngine: deps.contextEngine,
      }),
    }),
    adminMethod('reset', {
      description: 'Empties the metrics, billing, delivery, channel and diagnostics tables (not the audit).',
      handler: async (_params, context) => {
        const removed: Record<string, number> = {};
        for (const table of OBS_RESET_TABLES) removed[table] = await evidence.reset(table);
        auditReset(context, removed);
        return { reset: true, removed };
      },
    }),
    adminMethod('reset.table', {
      description: 'Empties one observability table.',
      params: z.object({ table: z.enum(OBS_RESET_TABLES) }).strict(),
      handler: async ({ table }, context) => {
        const removed = await evidence.reset(table);
        auditReset(context, { [table]: removed });
        return { reset: true, table, removed };
      },
    }),
  ];
}
