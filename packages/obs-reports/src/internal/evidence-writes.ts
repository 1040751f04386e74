import type { EventSink } from '@agentd/contracts';
import {
  channelActivitySchema,
  deliveryTraceSchema,
  deriveChannelActivity,
  deriveHealthSignal,
  EVIDENCE_SCHEMAS,
  INVALID_EVIDENCE_CATEGORY,
} from '@agentd/evidence';
import type { Database, WriteBatcher } from '@agentd/storage';
import type { ChannelActivity, DeliveryTrace } from '../evidence-store.js';
import type { ObsLogger } from '../logger.js';
import { enumToken, idToken, scrubPayload } from './scrub.js';

/** Events whose durable copy goes to the audit table instead of the diagnostics table. */
export const AUDIT_EVENTS = new Set(['audit:event', 'capability:audited']);

/** A session key the tables keep, or undefined for anything else. */
const sessionKeyOf = (value: unknown) =>
  typeof value === 'string' && value.length > 0 && value.length <= 512 ? value : undefined;

/** The write side of the evidence store: rows queued on one batcher, the sink that fills them. */
export interface EvidenceWrites {
  readonly sink: EventSink;
  /** Stores one row; false when the payload failed its category's schema (stored as `evidence:invalid`). */
  record(category: string, payload: Record<string, unknown>): boolean;
  recordChannelActivity(activity: ChannelActivity): void;
  recordDelivery(trace: Omit<DeliveryTrace, 'id'>): void;
  /** Waits until every queued row is committed. */
  flush(): Promise<void>;
  /** Flushes and stops accepting rows. Idempotent. */
  close(): Promise<void>;
}

/** The scrubbed, batched writes of {@link createObsEvidence}'s tables. */
export function createEvidenceWrites(context: {
  db: Database;
  now: () => number;
  logger: ObsLogger;
}): EvidenceWrites {
  const { db, now, logger } = context;
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
    // The later of two times: SQLite's scalar MAX is PostgreSQL's GREATEST.
    const later = db.dialect === 'pg' ? 'GREATEST' : 'MAX';
    write(
      `INSERT INTO obs_channels (channel_id, channel_type, last_active_at, messages_sent, messages_received)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (channel_id) DO UPDATE SET channel_type = excluded.channel_type,
         last_active_at = ${later}(obs_channels.last_active_at, excluded.last_active_at),
         messages_sent = obs_channels.messages_sent + excluded.messages_sent,
         messages_received = obs_channels.messages_received + excluded.messages_received`,
      [
        activity.channelId,
        enumToken(activity.channelType, 'unknown'),
        activity.lastActiveAt,
        activity.messagesSent,
        activity.messagesReceived,
      ],
    );
  };

  const recordDelivery = (trace: Omit<DeliveryTrace, 'id'>) => {
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

  return {
    sink,
    record,
    recordChannelActivity,
    recordDelivery,
    async flush() {
      await batcher?.flush();
    },
    async close() {
      if (closed) return;
      closed = true;
      await batcher?.close();
    },
  };
}
