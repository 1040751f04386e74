import { access } from 'node:fs/promises';
import { resolve as resolvePath, sep } from 'node:path';
import {
  listSessionIndexDays,
  listSessionIndexFiles,
  readSessionIndexDay,
  readTrajectory,
  type SessionIndexFilter,
  type SessionIndexRecord,
  sessionIndexFileName,
} from '@agentd/evidence';
import type { DiagnosticEvent } from '../evidence-store.js';
import {
  buildIncidentReport,
  buildSessionNotFoundReport,
  type CronWakeRow,
  type IncidentReport,
  type ReportReference,
  SESSION_CATEGORIES,
} from '../incident-report.js';
import type { ExplainParams } from '../obs-service.js';
import { type ObsServiceContext, tableExists } from './service-context.js';

/** The synthetic in-process root id prefix of rule 2. */
export const ROOT_SESSION_PREFIX = 'root-session-';

/** Newest day first; stops at the first match. Lines without `filter`'s value are skipped unparsed. */
async function scanIndex(
  context: ObsServiceContext,
  filter: SessionIndexFilter,
  match: (record: SessionIndexRecord) => boolean,
): Promise<SessionIndexRecord | undefined> {
  const { dataDir, rolls } = context;
  const listing = await listSessionIndexFiles(dataDir);
  const days = await listSessionIndexDays(dataDir, listing);
  for (const day of days.reverse()) {
    const read = await readSessionIndexDay(dataDir, day, { filter, listing, rolls });
    const hit = read?.records.find(match);
    if (hit) return hit;
  }
  return undefined;
}

/** The session a reference names: a session key as given, a trace id or a root run id looked up. */
async function resolveSession(
  context: ObsServiceContext,
  params: ExplainParams,
): Promise<{ sessionKey?: string; reference: ReportReference }> {
  const { db } = context;
  if (params.sessionKey)
    return { sessionKey: params.sessionKey, reference: { kind: 'sessionKey', value: params.sessionKey } };
  if (params.traceId) {
    const traceId = params.traceId;
    const hit = await scanIndex(
      context,
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
    context,
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
  // A sub-agent run tree (@agentd/autonomy): the root run's own session.
  if (await tableExists(db, 'autonomy_runs')) {
    const row = await db.get<{ session_key: string }>(
      'SELECT session_key FROM autonomy_runs WHERE run_id = ?',
      [rootRunId],
    );
    if (row) return { sessionKey: String(row.session_key), reference };
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
  context: ObsServiceContext,
  sessionKey: string,
  includeSynthetic: boolean,
): Promise<SessionIndexRecord[]> {
  const { db, dataDir, rolls } = context;
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
async function missingOffloads(dataDir: string, diagnostics: DiagnosticEvent[]): Promise<Set<string>> {
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

/** The gated cron fires that woke the model in the session, oldest first. */
async function cronWakesOf(context: ObsServiceContext, sessionKey: string): Promise<CronWakeRow[]> {
  const { db } = context;
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

/** `obs.explain` once the params named a session: its evidence gathered and reported. */
export async function explainSession(
  context: ObsServiceContext,
  params: ExplainParams,
): Promise<IncidentReport> {
  const { dataDir, rolls, evidence } = context;
  const { sessionKey, reference } = await resolveSession(context, params);
  if (!sessionKey) return buildSessionNotFoundReport(reference);
  const [index, trajectory, diagnostics, cronWakes] = await Promise.all([
    sessionIndexOf(context, sessionKey, params.includeSynthetic ?? false),
    readTrajectory(dataDir, sessionKey, { rolls }),
    evidence.diagnosticsIn({
      sinceMs: 0,
      untilMs: Number.MAX_SAFE_INTEGER,
      categories: SESSION_CATEGORIES,
      sessionKey,
    }),
    cronWakesOf(context, sessionKey),
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
      offloadsMissing: await missingOffloads(dataDir, diagnostics),
    },
    { depth: params.depth ?? 'summary' },
  );
}
