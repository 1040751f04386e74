import { toFieldIssues } from '@agentd/errors';
import type { EventSink } from '@agentd/contracts';
import type { Database } from '@agentd/storage';
import { z } from 'zod';
import { ObsReportsError } from './errors.js';
import {
  queryAudit,
  queryChannels,
  queryDeliveries,
  queryDeliveryStats,
  queryDiagnostics,
  queryDiagnosticsIn,
  resetTable,
} from './internal/evidence-queries.js';
import { createEvidenceWrites } from './internal/evidence-writes.js';
import type { ScrubbedValue } from './internal/scrub.js';
import { noopLogger, type ObsLogger } from './logger.js';
import { MIGRATION_PACKAGE, obsReportsMigrationSet } from './migrations.js';

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

export { AUDIT_EVENTS } from './internal/evidence-writes.js';

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

/** Creates the observability evidence writer and reader on the shared database. */
export function createObsEvidence(options: ObsEvidenceOptions): ObsEvidence {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ObsReportsError('INVALID_OPTIONS', 'invalid obs evidence options', {
      data: { issues: toFieldIssues(parsed.error.issues) },
    });
  }
  const { db } = options;
  const billingTable = options.billingTable ?? 'agent_billing';
  const writes = createEvidenceWrites({
    db,
    now: options.now ?? Date.now,
    logger: options.logger ?? noopLogger,
  });
  const { flush } = writes;
  // Every read waits for the queued rows first, so a caller reads what it just recorded.
  const read =
    <A extends unknown[], R>(query: (db: Database, ...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      await flush();
      return query(db, ...args);
    };

  return {
    async start() {
      await db.migrate(MIGRATION_PACKAGE, obsReportsMigrationSet);
    },
    sink: writes.sink,
    record(category, payload) {
      writes.record(category, payload);
    },
    recordChannelActivity: writes.recordChannelActivity,
    recordDelivery: writes.recordDelivery,
    flush,
    diagnostics: read(queryDiagnostics),
    diagnosticsIn: read(queryDiagnosticsIn),
    audit: read(queryAudit),
    channels: read(queryChannels),
    deliveries: read(queryDeliveries),
    deliveryStats: read(queryDeliveryStats),
    reset: read((database, table: ObsResetTable) => resetTable(database, table, billingTable)),
    close: writes.close,
  };
}
