import type { ContextEngineSection } from '@agentd/agent-runtime';
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
import { noopSecurityAudit, type SecurityAudit } from '@agentd/evidence/audit';
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
/**
 * The layers of a turn's context, in the order the turn loop assembles them: the system
 * prompt with the skills list, recalled memories, the highest context-DAG summaries that fit
 * `summaryShare` of the window, the uncompacted history that fits, then this turn's messages.
 */
const CONTEXT_LAYERS = [
  { name: 'system', source: 'agent systemPrompt and offered tool schemas' },
  { name: 'skills', source: 'name and description of each usable skill (agents offered skill_read)' },
  { name: 'recall', source: 'recalled memories (agents with memory.autoRecall), in history room only' },
  {
    name: 'summaries',
    source: 'context DAG roots that fit contextEngine.compaction.summaryShare of the window',
  },
  { name: 'history', source: 'uncompacted messages, newest first, within the history budget' },
  { name: 'freshTail', source: 'this turn: the user message, assistant steps and tool results' },
];

export function obsMethods(deps: {
  service: ObsService;
  evidence: ObsEvidence;
  db: Database;
  /** The live `contextEngine` section (budget caps, compaction). */
  contextEngine: () => ContextEngineSection;
  /** An agent's context budget and compaction model, for `context.pipeline {agentId}`; undefined when unknown. */
  agentContext?: (agentId: string) => Record<string, unknown> | undefined;
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
      description:
        'The context DAG per agent: sessions, messages, summary nodes per depth, deepest level, compaction history.',
      params: agentFilter,
      handler: async ({ agentId }) => ({ agents: await contextDagByAgent(db, agentId) }),
    }),
    adminMethod('context.pipeline', {
      description:
        'How a turn assembles its context: the layers in order, the window caps, the summary share and the compaction policy.',
      params: agentFilter,
      handler: ({ agentId }) => {
        const engine = deps.contextEngine();
        const agent = agentId === undefined ? undefined : deps.agentContext?.(agentId);
        return {
          ...(agentId ? { agentId } : {}),
          layers: CONTEXT_LAYERS,
          budgets: {
            ...engine.budget,
            summaryShare: engine.compaction.summaryShare,
            ...(agent ? { agent } : {}),
          },
          compaction: engine.compaction,
          contextEngine: engine,
        };
      },
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
