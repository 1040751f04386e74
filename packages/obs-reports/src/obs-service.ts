import type { AutonomyRunSummary } from '@agentd/contracts';
import type { EvidenceRolls, SessionIndexRecord } from '@agentd/evidence';
import type { Database } from '@agentd/storage';
import { z } from 'zod';
import type { ObsEvidence } from './evidence-store.js';
import type { FilesCoverage, FleetCronWakeGate, FleetHealthReport } from './fleet-report.js';
import type { IncidentReport } from './incident-report.js';
import { explainSession } from './internal/explain.js';
import { fleetHealthOf } from './internal/fleet-health.js';
import { invalidParams, type ObsServiceContext, tableExists } from './internal/service-context.js';
import { searchTraces } from './internal/trace-search.js';
import { ratio, usd } from './internal/values.js';

export { ROOT_SESSION_PREFIX } from './internal/explain.js';

/** Params of `obs.explain`. */
export const explainParamsSchema = z
  .object({
    sessionKey: z.string().min(1).max(512).optional(),
    traceId: z.string().min(1).max(256).optional(),
    rootRunId: z.string().min(1).max(600).optional(),
    depth: z.enum(['summary', 'full']).optional(),
    includeSynthetic: z.boolean().optional(),
  })
  .strict();
/** Params of `obs.explain`. */
export type ExplainParams = z.infer<typeof explainParamsSchema>;

/** Params of `obs.fleet.health`: `sinceHours` positive, at most a year. */
export const fleetHealthParamsSchema = z
  .object({ sinceHours: z.number().positive().max(8760).optional() })
  .strict();

/** Params of `obs.trace.search` (rule 1). */
export const traceSearchParamsSchema = z
  .object({
    messageId: z.string().min(1).max(600).optional(),
    traceId: z.string().min(1).max(256).optional(),
    chatId: z.string().min(1).max(512).optional(),
    /** ISO 8601; rows at or after it. */
    since: z.iso.datetime({ offset: true }).optional(),
    /** `field=value` terms joined by `,`; fields: agentId, channelType, origin, kind, provider, model, endReason. */
    where: z.string().min(1).max(512).optional(),
    limit: z.number().int().positive().optional(),
    includeSynthetic: z.boolean().optional(),
  })
  .strict();
/** Params of `obs.trace.search`. */
export type TraceSearchParams = z.infer<typeof traceSearchParamsSchema>;

/** Options of {@link createObsService}. */
export interface ObsServiceOptions {
  /** The shared libsql handle (reads `cron_runs`, `agent_sessions`, `agent_billing` when present). */
  db: Database;
  /** The data directory holding `obs/session-index` and `obs/trajectories`. */
  dataDir: string;
  /** The evidence store (diagnostics, audit). */
  evidence: ObsEvidence;
  /** Computes the fleet `cronWakeGate` block (e.g. `summarizeWakeGateFires` of @agentd/cron-wakegate). @default absent block */
  cronWakeGate?: (window: { sinceMs: number; untilMs: number }) => Promise<FleetCronWakeGate | undefined>;
  /** Computes the fleet `autonomy` figures (`summarizeAutonomy` of @agentd/autonomy). @default absent block */
  autonomy?: (window: { sinceMs: number; untilMs: number }) => Promise<AutonomyRunSummary | undefined>;
  /**
   * Roll counts of the evidence writer in this process (`AgentRuntime.evidenceRolls`): reads then
   * detect a roll under them without extra disk checks. @default checked on disk
   */
  evidenceRolls?: EvidenceRolls;
  /** Clock. @default Date.now */
  now?: () => number;
  /**
   * Cluster mode: this instance's id. Evidence files stay per instance, so every report then
   * says in `coverage.files` that its file-based parts cover this instance only (partial),
   * while its table-based parts cover the cluster. @default single instance (no marker)
   */
  clusterInstanceId?: string | undefined;
}

/** The reports and searches behind the obs namespace. */
export interface ObsService {
  explain(params: ExplainParams): Promise<IncidentReport>;
  fleetHealth(params: { sinceHours?: number }): Promise<FleetHealthReport>;
  traceSearch(params: TraceSearchParams): Promise<{ rows: SessionIndexRecord[] }>;
  /** Prompt-cache statistics over the billing table. */
  cacheStats(): Promise<{
    totalHits: number;
    totalMisses: number;
    hitRate: number;
    estimatedSavingsUsd: number;
    providers: Record<string, { hits: number; misses: number }>;
  }>;
}

/** Creates the obs report service. */
export function createObsService(options: ObsServiceOptions): ObsService {
  const context: ObsServiceContext = {
    db: options.db,
    dataDir: options.dataDir,
    evidence: options.evidence,
    rolls: options.evidenceRolls,
    now: options.now ?? Date.now,
    cronWakeGate: options.cronWakeGate,
    autonomy: options.autonomy,
  };
  const { db } = context;
  const files: FilesCoverage | undefined =
    options.clusterInstanceId === undefined
      ? undefined
      : { scope: 'this-instance', instanceId: options.clusterInstanceId, partial: true };

  return {
    async explain(params) {
      if (!params.sessionKey && !params.traceId && !params.rootRunId) {
        throw invalidParams('sessionKey', 'one of sessionKey, traceId, rootRunId is required');
      }
      const report = await explainSession(context, params);
      if (files !== undefined) {
        if (report.coverage !== undefined) report.coverage.files = files;
        else {
          report.suggestedNextSteps = [
            ...report.suggestedNextSteps,
            `evidence files cover instance ${files.instanceId} only; explain the session on the instance that ran it`,
          ];
        }
      }
      return report;
    },

    async fleetHealth(params) {
      const parsed = fleetHealthParamsSchema.safeParse(params);
      if (!parsed.success)
        throw invalidParams('sinceHours', parsed.error.issues[0]?.message ?? 'must be a positive number');
      const report = await fleetHealthOf(context, parsed.data.sinceHours ?? 24);
      if (files !== undefined && report.coverage !== undefined) report.coverage.files = files;
      return report;
    },

    traceSearch: (params) => searchTraces(context, params),

    async cacheStats() {
      const empty = { totalHits: 0, totalMisses: 0, hitRate: 0, estimatedSavingsUsd: 0, providers: {} };
      if (!(await tableExists(db, 'agent_billing'))) return empty;
      const rows = await db.query<{ provider: string; hits: number; calls: number; saved: number }>(
        `SELECT provider, SUM(CASE WHEN cache_read_tokens > 0 THEN 1 ELSE 0 END) AS hits, COUNT(*) AS calls,
                SUM(cache_saved_usd) AS saved FROM agent_billing GROUP BY provider ORDER BY provider`,
      );
      const totalHits = rows.reduce((sum, row) => sum + row.hits, 0);
      const calls = rows.reduce((sum, row) => sum + row.calls, 0);
      return {
        totalHits,
        totalMisses: calls - totalHits,
        hitRate: ratio(totalHits, calls),
        estimatedSavingsUsd: usd(rows.reduce((sum, row) => sum + row.saved, 0)),
        providers: Object.fromEntries(
          rows.map((row) => [row.provider, { hits: row.hits, misses: row.calls - row.hits }]),
        ),
      };
    },
  };
}
