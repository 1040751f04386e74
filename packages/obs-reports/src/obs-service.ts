import { access } from 'node:fs/promises';
import { resolve as resolvePath, sep } from 'node:path';
import {
  type EvidenceRolls,
  listSessionIndexDays,
  listSessionIndexFiles,
  listTrajectoryFiles,
  readSessionIndex,
  readSessionIndexDay,
  readTrajectory,
  type SessionIndexFilter,
  type SessionIndexRecord,
  sessionIndexFileName,
  type TrajectoryRecord,
} from '@agentd/evidence';
import type { Database } from '@agentd/storage';
import { z } from 'zod';
import { ObsReportsError } from './errors.js';
import type { DiagnosticEvent, ObsEvidence } from './evidence-store.js';
import {
  buildFleetHealthReport,
  FLEET_CATEGORIES,
  type FleetCronWakeGate,
  type FleetHealthReport,
} from './fleet-report.js';
import {
  buildIncidentReport,
  buildSessionNotFoundReport,
  type CronWakeRow,
  type IncidentReport,
  type ReportReference,
  SESSION_CATEGORIES,
} from './incident-report.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Trajectory files read at once by `obs.fleet.health` (reads wait on the fs thread pool). */
const TRAJECTORY_READS_IN_FLIGHT = 16;

/** `run` over `items` with at most `limit` in flight; results in the order of `items`. */
async function mapLimit<T, R>(items: T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await run(items[at] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
/** The synthetic in-process root id prefix of rule 2. */
export const ROOT_SESSION_PREFIX = 'root-session-';

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

const WHERE_FIELDS: Record<string, (record: SessionIndexRecord) => string> = {
  agentId: (record) => record.agentId,
  channelType: (record) => record.channelType,
  origin: (record) => record.origin,
  kind: (record) => record.kind,
  provider: (record) => record.provider,
  model: (record) => record.model,
  endReason: (record) => record.outcome.endReason,
};

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
  /**
   * Roll counts of the evidence writer in this process (`AgentRuntime.evidenceRolls`): reads then
   * detect a roll under them without extra disk checks. @default checked on disk
   */
  evidenceRolls?: EvidenceRolls;
  /** Clock. @default Date.now */
  now?: () => number;
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

function invalid(path: string, message: string): ObsReportsError {
  return new ObsReportsError('INVALID_PARAMS', `${path}: ${message}`, {
    data: { issues: [{ path: [path], message }] },
  });
}

async function tableExists(db: Database, name: string): Promise<boolean> {
  return (
    (await db.get("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", [name])) !== undefined
  );
}

/** Creates the obs report service. */
export function createObsService(options: ObsServiceOptions): ObsService {
  const { db, dataDir, evidence } = options;
  const rolls = options.evidenceRolls;
  const now = options.now ?? Date.now;

  /** Newest day first; stops at the first match. Lines without `filter`'s value are skipped unparsed. */
  async function scanIndex(
    filter: SessionIndexFilter,
    match: (record: SessionIndexRecord) => boolean,
  ): Promise<SessionIndexRecord | undefined> {
    const listing = await listSessionIndexFiles(dataDir);
    const days = await listSessionIndexDays(dataDir, listing);
    for (const day of days.reverse()) {
      const read = await readSessionIndexDay(dataDir, day, { filter, listing, rolls });
      const hit = read?.records.find(match);
      if (hit) return hit;
    }
    return undefined;
  }

  async function resolve(
    params: ExplainParams,
  ): Promise<{ sessionKey?: string; reference: ReportReference }> {
    if (params.sessionKey)
      return { sessionKey: params.sessionKey, reference: { kind: 'sessionKey', value: params.sessionKey } };
    if (params.traceId) {
      const traceId = params.traceId;
      const hit = await scanIndex(
        { field: 'traceId', value: traceId },
        (record) => record.traceId === traceId,
      );
      return {
        ...(hit ? { sessionKey: hit.sessionKey } : {}),
        reference: { kind: 'traceId', value: params.traceId },
      };
    }
    const rootRunId = params.rootRunId as string;
    const reference: ReportReference = { kind: 'rootRunId', value: rootRunId };
    if (rootRunId.startsWith(ROOT_SESSION_PREFIX))
      return { sessionKey: rootRunId.slice(ROOT_SESSION_PREFIX.length), reference };
    const hit = await scanIndex(
      { field: 'traceId', value: rootRunId },
      (record) => record.traceId === rootRunId,
    );
    if (hit) return { sessionKey: hit.sessionKey, reference };
    if (await tableExists(db, 'cron_runs')) {
      const row = await db.get<{ session_key: string | null }>(
        'SELECT session_key FROM cron_runs WHERE root_run_id = ? AND session_key IS NOT NULL LIMIT 1',
        [rootRunId],
      );
      if (row?.session_key) return { sessionKey: row.session_key, reference };
    }
    return { reference };
  }

  /**
   * The session's index records in write order. A session's index lines are never older than
   * the session itself, so when the session store (`agent_sessions`) knows when the session
   * was created, only the days from that day on are read; otherwise (no store, a deleted
   * session) every day is. The trajectory is no guide: rotation drops its oldest parts while
   * the index days of those turns remain.
   */
  async function sessionIndexOf(
    sessionKey: string,
    includeSynthetic: boolean,
  ): Promise<SessionIndexRecord[]> {
    const listing = await listSessionIndexFiles(dataDir);
    let days = await listSessionIndexDays(dataDir, listing);
    const created = (await tableExists(db, 'agent_sessions'))
      ? await db.get<{ created_at: number }>('SELECT created_at FROM agent_sessions WHERE session_key = ?', [
          sessionKey,
        ])
      : undefined;
    if (created) {
      const first = sessionIndexFileName(created.created_at);
      days = days.filter((day) => day >= first);
    }
    const out: SessionIndexRecord[] = [];
    const filter: SessionIndexFilter = { field: 'sessionKey', value: sessionKey };
    for (const day of days) {
      const read = await readSessionIndexDay(dataDir, day, { filter, listing, rolls });
      for (const record of read?.records ?? []) {
        if (record.sessionKey === sessionKey && (includeSynthetic || !record.synthetic)) out.push(record);
      }
    }
    return out;
  }

  /** Offload pointers of the session whose file is gone (swept by age) or points outside the data dir. */
  async function missingOffloads(diagnostics: DiagnosticEvent[]): Promise<Set<string>> {
    const root = resolvePath(dataDir);
    const paths = new Set<string>();
    for (const row of diagnostics) {
      const path = row.category === 'offload:written' ? row.data.diskPathRel : undefined;
      if (typeof path === 'string') paths.add(path);
    }
    const missing = new Set<string>();
    await Promise.all(
      [...paths].map(async (path) => {
        const absolute = resolvePath(root, path);
        if (!absolute.startsWith(`${root}${sep}`)) {
          missing.add(path);
          return;
        }
        await access(absolute).catch(() => missing.add(path));
      }),
    );
    return missing;
  }

  async function cronWakesOf(sessionKey: string): Promise<CronWakeRow[]> {
    if (!(await tableExists(db, 'cron_runs'))) return [];
    const rows = await db.query<{
      job_id: string;
      ts: number;
      gate_outcome: string;
      gate_duration_ms: number | null;
      tool_calls: number | null;
    }>(
      `SELECT job_id, ts, gate_outcome, gate_duration_ms, tool_calls FROM cron_runs
        WHERE session_key = ? AND gated = 1 AND gate_outcome IN ('wake', 'failed-open') ORDER BY ts, run_id`,
      [sessionKey],
    );
    return rows.map((row) => ({
      jobId: row.job_id,
      ts: row.ts,
      gateOutcome: row.gate_outcome === 'wake' ? 'wake' : 'failed-open',
      gateDurationMs: row.gate_duration_ms ?? 0,
      toolCalls: row.tool_calls ?? 0,
    }));
  }

  return {
    async explain(params) {
      if (!params.sessionKey && !params.traceId && !params.rootRunId) {
        throw invalid('sessionKey', 'one of sessionKey, traceId, rootRunId is required');
      }
      const { sessionKey, reference } = await resolve(params);
      if (!sessionKey) return buildSessionNotFoundReport(reference);
      const [index, trajectory, diagnostics, cronWakes] = await Promise.all([
        sessionIndexOf(sessionKey, params.includeSynthetic ?? false),
        readTrajectory(dataDir, sessionKey, { rolls }),
        evidence.diagnosticsIn({
          sinceMs: 0,
          untilMs: Number.MAX_SAFE_INTEGER,
          categories: SESSION_CATEGORIES,
          sessionKey,
        }),
        cronWakesOf(sessionKey),
      ]);
      if (index.length === 0 && !trajectory.found && diagnostics.length === 0) {
        return buildSessionNotFoundReport(reference);
      }
      return buildIncidentReport(
        {
          sessionKey,
          index,
          trajectory: { found: trajectory.found, file: trajectory.file, records: trajectory.records },
          diagnostics,
          cronWakes,
          offloadsMissing: await missingOffloads(diagnostics),
        },
        { depth: params.depth ?? 'summary' },
      );
    },

    async fleetHealth(params) {
      const parsed = fleetHealthParamsSchema.safeParse(params);
      if (!parsed.success)
        throw invalid('sinceHours', parsed.error.issues[0]?.message ?? 'must be a positive number');
      const windowHours = parsed.data.sinceHours ?? 24;
      const untilMs = now() + 1;
      const sinceMs = Math.max(0, Math.floor(untilMs - windowHours * HOUR_MS));
      const read = await readSessionIndex(dataDir, { sinceMs, untilMs }, { rolls });
      const index = read.records.filter((record) => !record.synthetic);
      // Per-tool counts come from the trajectories of the sessions that made tool calls.
      const withTools = [
        ...new Set(
          index
            .filter((record) => record.toolCalls.ok + record.toolCalls.failed > 0)
            .map((record) => record.sessionKey),
        ),
      ].sort();
      const toolCalls: Array<Extract<TrajectoryRecord, { type: 'tool_call' }>> = [];
      const listing = await listTrajectoryFiles(dataDir);
      const trajectories = await mapLimit(withTools, TRAJECTORY_READS_IN_FLIGHT, (sessionKey) =>
        readTrajectory(dataDir, sessionKey, { listing, rolls }),
      );
      for (const trajectory of trajectories) {
        for (const record of trajectory.records) {
          if (record.type === 'tool_call' && record.ts >= sinceMs && record.ts < untilMs)
            toolCalls.push(record);
        }
      }
      const diagnostics = await evidence.diagnosticsIn({ sinceMs, untilMs, categories: FLEET_CATEGORIES });
      const summaryStore = (await tableExists(db, 'agent_sessions'))
        ? await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM agent_sessions WHERE updated_at >= ?', [
            sinceMs,
          ])
        : undefined;
      return buildFleetHealthReport({
        windowHours,
        index,
        toolCalls,
        diagnostics,
        cronWakeGate: options.cronWakeGate ? await options.cronWakeGate({ sinceMs, untilMs }) : undefined,
        coverage: {
          sessionSummaryStore: { found: summaryStore !== undefined, rows: summaryStore?.n ?? 0 },
          sessionIndex: { daysRead: read.daysRead, daysMissing: read.daysMissing },
          billing: { present: await tableExists(db, 'agent_billing') },
        },
      });
    },

    async traceSearch(params) {
      const limit = Math.min(params.limit ?? 200, 1000);
      let traceId = params.traceId;
      const today = Math.floor(now() / DAY_MS) * DAY_MS;
      const read = await readSessionIndex(
        dataDir,
        { sinceMs: today - DAY_MS, untilMs: today + DAY_MS },
        { rolls },
      );
      if (params.messageId) {
        const hit = read.records.find((record) => record.messageId === params.messageId);
        if (!hit) return { rows: [] };
        if (traceId && traceId !== hit.traceId) return { rows: [] };
        traceId = hit.traceId;
      }
      const terms = (params.where ?? '')
        .split(',')
        .map((term) => term.trim())
        .filter((term) => term.length > 0)
        .map((term) => {
          const at = term.indexOf('=');
          const field = term.slice(0, at).trim();
          if (at <= 0 || !(field in WHERE_FIELDS)) {
            throw invalid(
              'where',
              `terms are field=value with field one of ${Object.keys(WHERE_FIELDS).join(', ')}`,
            );
          }
          return {
            get: WHERE_FIELDS[field] as (record: SessionIndexRecord) => string,
            value: term.slice(at + 1).trim(),
          };
        });
      const sinceMs = params.since ? Date.parse(params.since) : 0;
      const matches = (record: SessionIndexRecord) =>
        (params.includeSynthetic || !record.synthetic) &&
        (!traceId || record.traceId === traceId) &&
        (!params.chatId || record.chatId === params.chatId) &&
        record.ts >= sinceMs &&
        terms.every((term) => term.get(record) === term.value);
      // Newest day first, newest first within a day.
      const byDay = new Map<number, SessionIndexRecord[]>();
      for (const record of read.records) {
        const day = Math.floor(record.ts / DAY_MS);
        byDay.set(day, [...(byDay.get(day) ?? []), record]);
      }
      const rows: SessionIndexRecord[] = [];
      for (const day of [...byDay.keys()].sort((a, b) => b - a)) {
        for (const record of (byDay.get(day) ?? []).reverse()) {
          if (rows.length >= limit) break;
          if (matches(record)) rows.push(record);
        }
      }
      return { rows };
    },

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
        hitRate: calls === 0 ? 0 : Math.round((totalHits / calls) * 10_000) / 10_000,
        estimatedSavingsUsd:
          Math.round(rows.reduce((sum, row) => sum + row.saved, 0) * 1_000_000) / 1_000_000,
        providers: Object.fromEntries(
          rows.map((row) => [row.provider, { hits: row.hits, misses: row.calls - row.hits }]),
        ),
      };
    },
  };
}
