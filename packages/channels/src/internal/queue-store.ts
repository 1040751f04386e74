import { randomUUID } from 'node:crypto';
import type { OutboundOperation } from '../adapter.js';
import { inboundMigration } from './inbound-store.js';

/** A value bound to a statement parameter. */
export type ChannelsSqlValue = string | number | null;

/** A statement with its positional arguments. */
export interface ChannelsStatement {
  sql: string;
  args: ChannelsSqlValue[];
}

/** What one statement produced. */
export interface ChannelsSqlResult {
  rows: Record<string, unknown>[];
  rowsAffected: number;
}

/**
 * The database the queue needs: single statements, each its own transaction, and batches run
 * in one write transaction (the queue's group commit). Declared here so the package does not
 * depend on a driver; `@agentd/storage`'s `Database` fits.
 */
export interface ChannelsDatabase {
  execute(statement: string, args?: ChannelsSqlValue[]): Promise<ChannelsSqlResult>;
  /** Runs the statements in order in one write transaction: all commit, or none. */
  batch(statements: ChannelsStatement[]): Promise<ChannelsSqlResult[]>;
}

/** The stages of a delivery (decisions.md): the order a row moves through. */
export const DELIVERY_STAGES = ['queued', 'sending', 'sent', 'failed', 'deadLetter'] as const;
/** One stage of a delivery. */
export type DeliveryStage = (typeof DELIVERY_STAGES)[number];

/** One row of the delivery queue. */
export interface DeliveryEntry {
  deliveryId: string;
  idempotencyKey: string;
  channelType: string;
  operation: OutboundOperation;
  stage: DeliveryStage;
  attempts: number;
  nextAttemptAt: number;
  createdAt: number;
  updatedAt: number;
  /** The autonomy run that asked for it; such sends are never repeated on doubt. */
  rootRunId: string | undefined;
  messageId: string | undefined;
  lastError: string | undefined;
}

/** A migration in the shape `@agentd/storage`'s `db.migrate(package, migrations)` takes. */
export interface ChannelsMigration {
  version: number;
  name: string;
  up: string[];
}

export const QUEUE_TABLE = 'channel_deliveries';
/**
 * What a webchat client was sent (its history). SQLite uses a partial index only for a query
 * whose WHERE repeats the index's own terms, so the history query carries this exact text.
 */
export const WEBCHAT_SENT = `channel_type = 'webchat' AND stage = 'sent'`;

/** The queue's schema and the inbound journal's; run it with `db.migrate('@agentd/channels', channelsMigrations)`. */
export const channelsMigrations: readonly ChannelsMigration[] = Object.freeze([
  {
    version: 1,
    name: 'delivery queue',
    up: [
      `CREATE TABLE ${QUEUE_TABLE} (
        delivery_id TEXT PRIMARY KEY,
        idempotency_key TEXT NOT NULL UNIQUE,
        channel_type TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        operation TEXT NOT NULL,
        stage TEXT NOT NULL CHECK (stage IN ('queued', 'sending', 'sent', 'failed', 'deadLetter')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        root_run_id TEXT,
        message_id TEXT,
        last_error TEXT
      )`,
      `CREATE INDEX ${QUEUE_TABLE}_due ON ${QUEUE_TABLE} (stage, next_attempt_at)`,
      `CREATE INDEX ${QUEUE_TABLE}_type ON ${QUEUE_TABLE} (channel_type, stage)`,
      `CREATE INDEX ${QUEUE_TABLE}_chat ON ${QUEUE_TABLE} (channel_type, channel_id, stage, created_at)`,
    ],
  },
  {
    // The queue schedules from memory and reads stored rows only at start, so the indexes that
    // served its polling go. Every index a row is in is rewritten at each stage change (the chat
    // index alone touched a page per chat per commit), so one index by stage now serves the start
    // and the counts, and webchat's history has a partial index holding only its sent rows.
    version: 2,
    name: 'delivery queue: indexes for the in-memory scheduler',
    up: [
      `DROP INDEX ${QUEUE_TABLE}_due`,
      `DROP INDEX ${QUEUE_TABLE}_type`,
      `DROP INDEX ${QUEUE_TABLE}_chat`,
      `CREATE INDEX ${QUEUE_TABLE}_stage ON ${QUEUE_TABLE} (stage, channel_type)`,
      `CREATE INDEX ${QUEUE_TABLE}_webchat ON ${QUEUE_TABLE} (channel_id, updated_at) WHERE ${WEBCHAT_SENT}`,
    ],
  },
  inboundMigration,
]);

const str = (value: unknown): string | undefined =>
  value === null || value === undefined ? undefined : String(value);

/** A stored row as a {@link DeliveryEntry}. */
export function toEntry(row: Record<string, unknown>): DeliveryEntry {
  return {
    deliveryId: String(row.delivery_id),
    idempotencyKey: String(row.idempotency_key),
    channelType: String(row.channel_type),
    operation: JSON.parse(String(row.operation)) as OutboundOperation,
    stage: String(row.stage) as DeliveryStage,
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    rootRunId: str(row.root_run_id),
    messageId: str(row.message_id),
    lastError: str(row.last_error),
  };
}

/**
 * A delivery id: a UUID of version 7 (RFC 9562), its first 48 bits the time in milliseconds and
 * the rest random. Ids made one after another land next to each other in the primary-key and
 * idempotency-key indexes, so a commit writes a few adjacent pages instead of one page per row.
 */
export function deliveryIdAt(ms: number): string {
  const time = Math.max(0, Math.min(ms, 0xffff_ffff_ffff)).toString(16).padStart(12, '0');
  // randomUUID's version-4 layout keeps its variant bits; only the version nibble changes.
  return `${time.slice(0, 8)}-${time.slice(8)}-7${randomUUID().slice(15)}`;
}

const COLUMNS = `delivery_id, idempotency_key, channel_type, channel_id, operation, stage, attempts,
  next_attempt_at, created_at, updated_at, root_run_id`;
/** Bound values per inserted row, in {@link COLUMNS} order. */
const INSERT_ARITY = 11;
/** Rows per multi-row statement, far below SQLite's 32,766 bound parameters. */
export const ROWS_PER_STATEMENT = 500;

/**
 * One INSERT for a group of new entries. A key already stored is skipped (the caller answers the
 * first entry), and RETURNING names the rows that were written, so one statement tells both.
 * With `fresh`, every entry's key is its own new delivery id, which no stored row can hold: the
 * statement is a plain INSERT (no conflict clause, nothing returned; SQLite does measurably less
 * per row), and it either writes every row or fails.
 */
export function insertEntries(entries: readonly DeliveryEntry[], fresh = false): ChannelsStatement {
  const args: ChannelsSqlValue[] = [];
  for (const entry of entries)
    args.push(
      entry.deliveryId,
      entry.idempotencyKey,
      entry.channelType,
      entry.operation.channelId,
      JSON.stringify(entry.operation),
      entry.stage,
      entry.attempts,
      entry.nextAttemptAt,
      entry.createdAt,
      entry.updatedAt,
      entry.rootRunId ?? null,
    );
  const row = `(${Array.from({ length: INSERT_ARITY }, () => '?').join(', ')})`;
  return {
    sql: `INSERT INTO ${QUEUE_TABLE} (${COLUMNS}) VALUES ${entries.map(() => row).join(', ')}${
      fresh ? '' : '\n      ON CONFLICT (idempotency_key) DO NOTHING RETURNING delivery_id'
    }`,
    args,
  };
}

/**
 * One UPDATE recording a group of acknowledged attempts, each with the time it was acknowledged;
 * RETURNING names the rows it changed.
 */
export function markSent(
  acks: readonly { deliveryId: string; messageId: string; at: number }[],
): ChannelsStatement {
  const args: ChannelsSqlValue[] = [];
  for (const ack of acks) args.push(ack.deliveryId, ack.messageId, ack.at);
  return {
    sql: `UPDATE ${QUEUE_TABLE} SET stage = 'sent', message_id = acked.column2, last_error = NULL,
        updated_at = acked.column3
      FROM (VALUES ${acks.map(() => '(?, ?, ?)').join(', ')}) AS acked
      WHERE delivery_id = acked.column1 AND stage = 'sending' RETURNING delivery_id`,
    args,
  };
}

/** The SQL the queue runs, kept together so the state machine reads in one place. */
export const sql = {
  byId: `SELECT * FROM ${QUEUE_TABLE} WHERE delivery_id = ?`,
  byKey: `SELECT * FROM ${QUEUE_TABLE} WHERE idempotency_key = ?`,
  // Insertion order (rowid) breaks ties between entries created in the same millisecond.
  pending: `SELECT * FROM ${QUEUE_TABLE} WHERE stage IN ('queued', 'failed') ORDER BY created_at, rowid`,
  inDoubt: `SELECT * FROM ${QUEUE_TABLE} WHERE stage = 'sending' ORDER BY created_at, rowid`,
  // The claim is the commit point before the attempt: only one claimer wins a row.
  claim: `UPDATE ${QUEUE_TABLE} SET stage = 'sending', attempts = attempts + 1, updated_at = ?
    WHERE delivery_id = ? AND stage IN ('queued', 'failed') RETURNING delivery_id`,
  sent: `UPDATE ${QUEUE_TABLE} SET stage = 'sent', message_id = ?, last_error = NULL, updated_at = ?
    WHERE delivery_id = ?`,
  failed: `UPDATE ${QUEUE_TABLE} SET stage = 'failed', last_error = ?, next_attempt_at = ?, updated_at = ?
    WHERE delivery_id = ? AND stage = 'sending' RETURNING delivery_id`,
  deadLetter: `UPDATE ${QUEUE_TABLE} SET stage = 'deadLetter', last_error = ?, updated_at = ?
    WHERE delivery_id = ? RETURNING delivery_id`,
  requeue: `UPDATE ${QUEUE_TABLE} SET stage = 'queued', next_attempt_at = ?, updated_at = ?
    WHERE delivery_id = ? AND stage = 'sending'`,
  counts: `SELECT stage, COUNT(*) AS n FROM ${QUEUE_TABLE} GROUP BY stage`,
  // Naming every stage lets the (stage, channel_type) index seek each stage's rows of the type.
  countsOf: `SELECT stage, COUNT(*) AS n FROM ${QUEUE_TABLE}
    WHERE stage IN (${DELIVERY_STAGES.map((stage) => `'${stage}'`).join(', ')}) AND channel_type = ? GROUP BY stage`,
};
