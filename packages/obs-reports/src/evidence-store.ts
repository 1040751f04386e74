import type { EventSink } from '@agentd/contracts';
import type { Database, WriteBatcher } from '@agentd/storage';
import {
  channelActivitySchema,
  deliveryTraceSchema,
  deriveChannelActivity,
  deriveHealthSignal,
  EVIDENCE_SCHEMAS,
  INVALID_EVIDENCE_CATEGORY,
} from '@agentd/evidence';
import { z } from 'zod';
import { ObsReportsError } from './errors.js';
import { enumToken, idToken, type ScrubbedValue, scrubPayload } from './internal/scrub.js';
import { noopLogger, type ObsLogger } from './logger.js';
import { MIGRATION_PACKAGE, obsReportsMigrations } from './migrations.js';

export type { EventSink } from '@agentd/contracts';

/** One stored diagnostic event or health-signal row (what `obs.diagnostics` returns). */
export interface DiagnosticEvent {
  id: number;
  ts: number;
  category: string;
  sessionKey?: string;
  agentId?: string;
  data: Record<string, ScrubbedValue>;
}

/** One durable audit row (what `obs.audit.query` returns). Never holds secret values. */
export interface AuditRow {
  id: number;
  ts: number;
  kind: string;
  classification: string;
  outcome: string;
  severity: string;
  agentId?: string;
  sessionKey?: string;
  refs: Record<string, ScrubbedValue>;
}

/** Channel activity, in the contract's shape. */
export interface ChannelActivity {
  channelId: string;
  channelType: string;
  lastActiveAt: number;
  messagesSent: number;
  messagesReceived: number;
}

/** One delivery trace. */
export interface DeliveryTrace {
  id: number;
  ts: number;
  channelId: string;
  outcome: 'delivered' | 'failed';
  latencyMs: number;
  errorKind?: string;
}

/** The tables `obs.reset.table` can empty (decisions.md). */
export const OBS_RESET_TABLES = ['metrics', 'billing', 'delivery', 'channels', 'diagnostics'] as const;
/** One resettable observability table. */
export type ObsResetTable = (typeof OBS_RESET_TABLES)[number];

/** Events whose durable copy goes to the audit table instead of the diagnostics table. */
export const AUDIT_EVENTS = new Set(['audit:event', 'capability:audited']);

/** Filters of `obs.audit.query` (decisions.md); every one optional. */
export const auditQuerySchema = z
  .object({
    sinceMs: z.number().int().nonnegative().optional(),
    untilMs: z.number().int().nonnegative().optional(),
    agentId: z.string().min(1).max(128).optional(),
    sessionKey: z.string().min(1).max(512).optional(),
    kind: z.string().min(1).max(64).optional(),
    classification: z.string().min(1).max(64).optional(),
    outcome: z.string().min(1).max(64).optional(),
    severity: z.string().min(1).max(64).optional(),
    /** Rows returned; default 200, values above 1000 are clamped to 1000. */
    limit: z.number().int().positive().optional(),
  })
  .strict();
/** Filters of an audit query. */
export type AuditQuery = z.infer<typeof auditQuerySchema>;

/** Filters of `obs.diagnostics`. */
export const diagnosticsQuerySchema = z
  .object({
    category: z.string().min(1).max(64).optional(),
    /** Events returned, newest first; default 100, clamped to 1000. */
    limit: z.number().int().positive().optional(),
    sinceMs: z.number().int().nonnegative().optional(),
  })
  .strict();
/** Filters of a diagnostics query. */
export type DiagnosticsQuery = z.infer<typeof diagnosticsQuerySchema>;

const optionsSchema = z.object({
  db: z.custom<Database>((value) => typeof value === 'object' && value !== null, 'a Database'),
  now: z.function().optional(),
  logger: z.custom<ObsLogger>().optional(),
  billingTable: z
    .string()
    .regex(/^[a-z_]+$/)
    .optional(),
});

/** Options of {@link createObsEvidence}. */
export interface ObsEvidenceOptions {
  /** The shared libsql handle. */
  db: Database;
  /** Clock. @default Date.now */
  now?: () => number;
  /** pino-compatible logger. @default a no-op logger */
  logger?: ObsLogger;
  /** The billing table `obs.reset` empties (written by @agentd/agent-runtime). @default 'agent_billing' */
  billingTable?: string;
}

/**
 * The one writer of observability evidence, and the queries over it. Other packages never
 * call it directly: they emit events on the {@link EventSink} this exposes as `sink`.
 */
export interface ObsEvidence {
  /** Applies the migrations. Call once before writing. */
  start(): Promise<void>;
  /** The sink to hand every package: each event becomes a scrubbed durable row. */
  readonly sink: EventSink;
  /** Records one diagnostic event or health-signal row (`category` e.g. `voice_degraded`). */
  record(category: string, payload: Record<string, unknown>): void;
  /** Records one channel's activity (upsert: counters add, `lastActiveAt` keeps the latest). */
  recordChannelActivity(activity: ChannelActivity): void;
  /** Records one delivery trace. */
  recordDelivery(trace: Omit<DeliveryTrace, 'id'>): void;
  /** Waits until every queued row is committed. */
  flush(): Promise<void>;
  /** Diagnostic events newest first, with per-category counts over the same window. */
  diagnostics(
    query?: DiagnosticsQuery,
  ): Promise<{ events: DiagnosticEvent[]; counts: Record<string, number> }>;
  /** Diagnostic rows of some categories in a window, oldest first (the reports' reader). */
  diagnosticsIn(window: {
    sinceMs: number;
    untilMs: number;
    categories?: readonly string[];
    sessionKey?: string;
  }): Promise<DiagnosticEvent[]>;
  /** Audit rows newest first. */
  audit(query?: AuditQuery): Promise<AuditRow[]>;
  /** Every channel's latest activity, most recently active first. */
  channels(): Promise<ChannelActivity[]>;
  /** Delivery traces newest first. */
  deliveries(query: { sinceMs?: number; limit?: number; channelId?: string }): Promise<DeliveryTrace[]>;
  /** Delivery totals. */
  deliveryStats(): Promise<{ total: number; successes: number; failures: number; avgLatencyMs: number }>;
  /** Empties one table; returns the rows removed. */
  reset(table: ObsResetTable): Promise<number>;
  /** Flushes and stops accepting rows. Idempotent. */
  close(): Promise<void>;
}

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

const sessionKeyOf = (value: unknown) =>
  typeof value === 'string' && value.length > 0 && value.length <= 512 ? value : undefined;

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
    ...(row.session_key === null ? {} : { sessionKey: row.session_key }),
    ...(row.agent_id === null ? {} : { agentId: row.agent_id }),
    data: parseJson(row.data),
  };
}

/** Creates the observability evidence writer and reader on the shared database. */
export function createObsEvidence(options: ObsEvidenceOptions): ObsEvidence {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ObsReportsError('INVALID_OPTIONS', 'invalid obs evidence options', {
      data: {
        issues: parsed.error.issues.map((issue) => ({
          path: issue.path.map(String),
          message: issue.message,
        })),
      },
    });
  }
  const { db } = options;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? noopLogger;
  const billingTable = options.billingTable ?? 'agent_billing';
  let batcher: WriteBatcher | undefined;
  let closed = false;

  const write = (sql: string, args: Array<string | number | null>) => {
    if (closed) return;
    batcher ??= db.createWriteBatcher({ maxDelayMs: 20 });
    batcher.write(sql, args).catch((error: unknown) => {
      logger.warn(
        { err: error, hint: 'check free space and permissions of the data directory', errorKind: 'resource' },
        'observability evidence write failed',
      );
    });
  };

  // A malformed payload is logged at most once a minute per category (a broken producer repeats).
  const lastInvalidWarn = new Map<string, number>();
  const warnInvalid = (what: string, path: string) => {
    const at = now();
    if ((lastInvalidWarn.get(what) ?? Number.NEGATIVE_INFINITY) > at - 60_000) return;
    lastInvalidWarn.set(what, at);
    logger.warn(
      {
        category: what,
        field: path,
        hint: `the producer of ${what} sent a payload that does not match its schema; fix the producer`,
        errorKind: 'validation',
      },
      'malformed evidence not stored',
    );
  };

  const store = (category: string, payload: Record<string, unknown>) => {
    const ts =
      typeof payload.timestamp === 'number' && Number.isFinite(payload.timestamp) ? payload.timestamp : now();
    write('INSERT INTO obs_diagnostics (ts, category, session_key, agent_id, data) VALUES (?, ?, ?, ?, ?)', [
      Math.round(ts),
      enumToken(category, 'other'),
      sessionKeyOf(payload.sessionKey) ?? null,
      idToken(payload.agentId) ?? null,
      JSON.stringify(scrubPayload(payload)),
    ]);
  };

  /**
   * Stores one row; a category with a schema is checked first, and a payload that fails it is
   * replaced by an `evidence:invalid` row naming the category and the field (no values), so
   * reports never read a malformed row and the broken producer stays visible.
   */
  const record = (category: string, payload: Record<string, unknown>): boolean => {
    const schema = EVIDENCE_SCHEMAS[category];
    const checked = schema?.safeParse(payload);
    if (checked && !checked.success) {
      const issue = checked.error.issues[0];
      const path = issue?.path.map(String).join('.') || '<root>';
      store(INVALID_EVIDENCE_CATEGORY, {
        category,
        field: path,
        code: issue?.code ?? 'invalid',
        ...(typeof payload.timestamp === 'number' ? { timestamp: payload.timestamp } : {}),
      });
      warnInvalid(category, path);
      return false;
    }
    store(category, payload);
    return true;
  };

  const recordAudit = (event: string, payload: Record<string, unknown>) => {
    const { kind, classification, outcome, severity, agentId, sessionKey, ...rest } = payload;
    write(
      `INSERT INTO obs_audit (ts, kind, classification, outcome, severity, agent_id, session_key, refs)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        typeof payload.timestamp === 'number' ? Math.round(payload.timestamp) : now(),
        enumToken(kind, event === 'capability:audited' ? 'capability' : 'other'),
        enumToken(classification, 'unclassified'),
        enumToken(outcome, 'unknown'),
        enumToken(severity, 'info'),
        idToken(agentId) ?? null,
        sessionKeyOf(sessionKey) ?? null,
        JSON.stringify(scrubPayload({ ...rest, timestamp: undefined })),
      ],
    );
  };

  const recordChannelActivity = (activity: ChannelActivity) => {
    if (!channelActivitySchema.safeParse(activity).success) {
      warnInvalid('channel activity', 'activity');
      return;
    }
    write(
      `INSERT INTO obs_channels (channel_id, channel_type, last_active_at, messages_sent, messages_received)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (channel_id) DO UPDATE SET channel_type = excluded.channel_type,
         last_active_at = MAX(last_active_at, excluded.last_active_at),
         messages_sent = messages_sent + excluded.messages_sent,
         messages_received = messages_received + excluded.messages_received`,
      [
        activity.channelId,
        enumToken(activity.channelType, 'unknown'),
        activity.lastActiveAt,
        activity.messagesSent,
        activity.messagesReceived,
      ],
    );
  };

  const sink: EventSink = {
    emit(event, payload) {
      try {
        if (AUDIT_EVENTS.has(event)) recordAudit(event, payload);
        else if (record(event, payload)) {
          const signal = deriveHealthSignal(event, payload);
          if (signal) record(signal.category, signal.payload);
          const activity = deriveChannelActivity(event, payload, now());
          if (activity) recordChannelActivity(activity);
        }
      } catch (error) {
        // A producer's emit must never fail because the evidence could not be written.
        logger.warn(
          { err: error, event, hint: 'an event payload could not be stored', errorKind: 'internal' },
          'event dropped',
        );
      }
    },
  };

  const flush = async () => {
    await batcher?.flush();
  };

  return {
    async start() {
      await db.migrate(MIGRATION_PACKAGE, obsReportsMigrations);
    },
    sink,
    record(category, payload) {
      record(category, payload);
    },
    recordChannelActivity,
    recordDelivery(trace) {
      if (!deliveryTraceSchema.safeParse(trace).success) {
        warnInvalid('delivery trace', 'trace');
        return;
      }
      write(
        'INSERT INTO obs_delivery (ts, channel_id, outcome, latency_ms, error_kind) VALUES (?, ?, ?, ?, ?)',
        [
          trace.ts,
          trace.channelId,
          trace.outcome,
          Math.round(trace.latencyMs),
          trace.errorKind === undefined ? null : enumToken(trace.errorKind, 'other'),
        ],
      );
    },
    flush,
    async diagnostics(query = {}) {
      await flush();
      const since = query.sinceMs ?? 0;
      const rows = await db.query<DiagnosticRow>(
        `SELECT id, ts, category, session_key, agent_id, data FROM obs_diagnostics
          WHERE ts >= ? AND (? IS NULL OR category = ?) ORDER BY ts DESC, id DESC LIMIT ?`,
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
    },
    async diagnosticsIn(window) {
      await flush();
      const categories = window.categories ?? [];
      const rows = await db.query<DiagnosticRow>(
        `SELECT id, ts, category, session_key, agent_id, data FROM obs_diagnostics
          WHERE ts >= ? AND ts < ? AND (? IS NULL OR session_key = ?)
          ${categories.length > 0 ? `AND category IN (${categories.map(() => '?').join(', ')})` : ''}
          ORDER BY ts, id`,
        [window.sinceMs, window.untilMs, window.sessionKey ?? null, window.sessionKey ?? null, ...categories],
      );
      return rows.map(toDiagnostic);
    },
    async audit(query = {}) {
      await flush();
      const rows = await db.query<{
        id: number;
        ts: number;
        kind: string;
        classification: string;
        outcome: string;
        severity: string;
        agent_id: string | null;
        session_key: string | null;
        refs: string;
      }>(
        `SELECT id, ts, kind, classification, outcome, severity, agent_id, session_key, refs FROM obs_audit
          WHERE ts >= ? AND ts < ?
            AND (? IS NULL OR agent_id = ?) AND (? IS NULL OR session_key = ?)
            AND (? IS NULL OR kind = ?) AND (? IS NULL OR classification = ?)
            AND (? IS NULL OR outcome = ?) AND (? IS NULL OR severity = ?)
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
        ...(row.agent_id === null ? {} : { agentId: row.agent_id }),
        ...(row.session_key === null ? {} : { sessionKey: row.session_key }),
        refs: parseJson(row.refs),
      }));
    },
    async channels() {
      await flush();
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
    },
    async deliveries(query) {
      await flush();
      const rows = await db.query<{
        id: number;
        ts: number;
        channel_id: string;
        outcome: 'delivered' | 'failed';
        latency_ms: number;
        error_kind: string | null;
      }>(
        `SELECT id, ts, channel_id, outcome, latency_ms, error_kind FROM obs_delivery
          WHERE ts >= ? AND (? IS NULL OR channel_id = ?) ORDER BY ts DESC, id DESC LIMIT ?`,
        [query.sinceMs ?? 0, query.channelId ?? null, query.channelId ?? null, clamp(query.limit, 100, 1000)],
      );
      return rows.map((row) => ({
        id: row.id,
        ts: row.ts,
        channelId: row.channel_id,
        outcome: row.outcome,
        latencyMs: row.latency_ms,
        ...(row.error_kind === null ? {} : { errorKind: row.error_kind }),
      }));
    },
    async deliveryStats() {
      await flush();
      const row = await db.get<{ total: number; ok: number | null; latency: number | null }>(
        `SELECT COUNT(*) AS total, SUM(CASE WHEN outcome = 'delivered' THEN 1 ELSE 0 END) AS ok,
                AVG(latency_ms) AS latency FROM obs_delivery`,
      );
      const total = row?.total ?? 0;
      const successes = row?.ok ?? 0;
      return { total, successes, failures: total - successes, avgLatencyMs: Math.round(row?.latency ?? 0) };
    },
    async reset(table) {
      await flush();
      const target = {
        // Metrics are the health-signal and counter rows; diagnostics are every event row.
        metrics: "obs_diagnostics WHERE category NOT LIKE '%:%'",
        diagnostics: 'obs_diagnostics',
        billing: billingTable,
        delivery: 'obs_delivery',
        channels: 'obs_channels',
      }[table];
      const exists = await db.get<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?",
        [target.split(' ')[0] ?? ''],
      );
      if (!exists) return 0;
      const result = await db.execute(`DELETE FROM ${target}`);
      return result.rowsAffected;
    },
    async close() {
      if (closed) return;
      closed = true;
      await batcher?.close();
    },
  };
}
