import type { Database } from '@agentd/storage';
import type {
  AuditQuery,
  AuditRow,
  ChannelActivity,
  DeliveryTrace,
  DiagnosticEvent,
  DiagnosticsQuery,
  ObsResetTable,
} from '../evidence-store.js';
import type { ScrubbedValue } from './scrub.js';
import { tableExists } from './service-context.js';

const clamp = (value: number | undefined, fallback: number, max: number) => Math.min(value ?? fallback, max);

function parseJson(text: unknown): Record<string, ScrubbedValue> {
  if (typeof text !== 'string') return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, ScrubbedValue>)
      : {};
  } catch {
    return {};
  }
}

/** `fields` without the entries whose value is null: a null column is an absent optional field. */
function withoutNulls<T extends Record<string, unknown>>(
  fields: T,
): { [K in keyof T]?: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null)) as {
    [K in keyof T]?: Exclude<T[K], null>;
  };
}

interface DiagnosticRow {
  id: number;
  ts: number;
  category: string;
  session_key: string | null;
  agent_id: string | null;
  data: string;
}

function toDiagnostic(row: DiagnosticRow): DiagnosticEvent {
  return {
    id: row.id,
    ts: row.ts,
    category: row.category,
    ...withoutNulls({ sessionKey: row.session_key, agentId: row.agent_id }),
    data: parseJson(row.data),
  };
}

/** Diagnostic events newest first, with per-category counts over the same window. */
export async function queryDiagnostics(
  db: Database,
  query: DiagnosticsQuery = {},
): Promise<{ events: DiagnosticEvent[]; counts: Record<string, number> }> {
  const since = query.sinceMs ?? 0;
  const rows = await db.query<DiagnosticRow>(
    `SELECT id, ts, category, session_key, agent_id, data FROM obs_diagnostics
      WHERE ts >= ? AND (CAST(? AS TEXT) IS NULL OR category = ?) ORDER BY ts DESC, id DESC LIMIT ?`,
    [since, query.category ?? null, query.category ?? null, clamp(query.limit, 100, 1000)],
  );
  const counts = await db.query<{ category: string; n: number }>(
    'SELECT category, COUNT(*) AS n FROM obs_diagnostics WHERE ts >= ? GROUP BY category ORDER BY category',
    [since],
  );
  return {
    events: rows.map(toDiagnostic),
    counts: Object.fromEntries(counts.map((row) => [row.category, row.n])),
  };
}

/** Diagnostic rows of some categories in a window, oldest first. */
export async function queryDiagnosticsIn(
  db: Database,
  window: { sinceMs: number; untilMs: number; categories?: readonly string[]; sessionKey?: string },
): Promise<DiagnosticEvent[]> {
  const categories = window.categories ?? [];
  const rows = await db.query<DiagnosticRow>(
    `SELECT id, ts, category, session_key, agent_id, data FROM obs_diagnostics
      WHERE ts >= ? AND ts < ? AND (CAST(? AS TEXT) IS NULL OR session_key = ?)
      ${categories.length > 0 ? `AND category IN (${categories.map(() => '?').join(', ')})` : ''}
      ORDER BY ts, id`,
    [window.sinceMs, window.untilMs, window.sessionKey ?? null, window.sessionKey ?? null, ...categories],
  );
  return rows.map(toDiagnostic);
}

/** Audit rows newest first. */
export async function queryAudit(db: Database, query: AuditQuery = {}): Promise<AuditRow[]> {
  // The audit columns that keep their name in AuditRow, and the three that change on the way out.
  const rows = await db.query<
    Pick<AuditRow, 'id' | 'ts' | 'kind' | 'classification' | 'outcome' | 'severity'> & {
      agent_id: string | null;
      session_key: string | null;
      refs: string;
    }
  >(
    `SELECT id, ts, kind, classification, outcome, severity, agent_id, session_key, refs FROM obs_audit
      WHERE ts >= ? AND ts < ?
        AND (CAST(? AS TEXT) IS NULL OR agent_id = ?) AND (CAST(? AS TEXT) IS NULL OR session_key = ?)
        AND (CAST(? AS TEXT) IS NULL OR kind = ?) AND (CAST(? AS TEXT) IS NULL OR classification = ?)
        AND (CAST(? AS TEXT) IS NULL OR outcome = ?) AND (CAST(? AS TEXT) IS NULL OR severity = ?)
      ORDER BY ts DESC, id DESC LIMIT ?`,
    [
      query.sinceMs ?? 0,
      query.untilMs ?? Number.MAX_SAFE_INTEGER,
      ...[
        query.agentId,
        query.sessionKey,
        query.kind,
        query.classification,
        query.outcome,
        query.severity,
      ].flatMap((value) => [value ?? null, value ?? null]),
      clamp(query.limit, 200, 1000),
    ],
  );
  return rows.map((row) => ({
    id: row.id,
    ts: row.ts,
    kind: row.kind,
    classification: row.classification,
    outcome: row.outcome,
    severity: row.severity,
    ...withoutNulls({ agentId: row.agent_id, sessionKey: row.session_key }),
    refs: parseJson(row.refs),
  }));
}

/** Every channel's latest activity, most recently active first. */
export async function queryChannels(db: Database): Promise<ChannelActivity[]> {
  const rows = await db.query<{
    channel_id: string;
    channel_type: string;
    last_active_at: number;
    messages_sent: number;
    messages_received: number;
  }>('SELECT * FROM obs_channels ORDER BY last_active_at DESC, channel_id');
  return rows.map((row) => ({
    channelId: row.channel_id,
    channelType: row.channel_type,
    lastActiveAt: row.last_active_at,
    messagesSent: row.messages_sent,
    messagesReceived: row.messages_received,
  }));
}

/** Delivery traces newest first. */
export async function queryDeliveries(
  db: Database,
  query: { sinceMs?: number; limit?: number; channelId?: string },
): Promise<DeliveryTrace[]> {
  const rows = await db.query<{
    id: number;
    ts: number;
    channel_id: string;
    outcome: 'delivered' | 'failed';
    latency_ms: number;
    error_kind: string | null;
  }>(
    `SELECT id, ts, channel_id, outcome, latency_ms, error_kind FROM obs_delivery
      WHERE ts >= ? AND (CAST(? AS TEXT) IS NULL OR channel_id = ?) ORDER BY ts DESC, id DESC LIMIT ?`,
    [query.sinceMs ?? 0, query.channelId ?? null, query.channelId ?? null, clamp(query.limit, 100, 1000)],
  );
  return rows.map((row) => ({
    id: row.id,
    ts: row.ts,
    channelId: row.channel_id,
    outcome: row.outcome,
    latencyMs: row.latency_ms,
    ...withoutNulls({ errorKind: row.error_kind }),
  }));
}

/** Delivery totals. */
export async function queryDeliveryStats(
  db: Database,
): Promise<{ total: number; successes: number; failures: number; avgLatencyMs: number }> {
  const row = await db.get<{ total: number; ok: number | null; latency: number | null }>(
    `SELECT COUNT(*) AS total, SUM(CASE WHEN outcome = 'delivered' THEN 1 ELSE 0 END) AS ok,
            AVG(latency_ms) AS latency FROM obs_delivery`,
  );
  const total = row?.total ?? 0;
  const successes = row?.ok ?? 0;
  return { total, successes, failures: total - successes, avgLatencyMs: Math.round(row?.latency ?? 0) };
}

/** Empties one table; returns the rows removed (0 when the table does not exist). */
export async function resetTable(db: Database, table: ObsResetTable, billingTable: string): Promise<number> {
  const target = {
    // Metrics are the health-signal and counter rows; diagnostics are every event row.
    metrics: "obs_diagnostics WHERE category NOT LIKE '%:%'",
    diagnostics: 'obs_diagnostics',
    billing: billingTable,
    delivery: 'obs_delivery',
    channels: 'obs_channels',
  }[table];
  if (!(await tableExists(db, target.split(' ')[0] ?? ''))) return 0;
  const result = await db.execute(`DELETE FROM ${target}`);
  return result.rowsAffected;
}
