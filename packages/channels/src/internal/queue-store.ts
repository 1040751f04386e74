import type { OutboundOperation } from '../adapter.js';

/** A value bound to a statement parameter. */
export type ChannelsSqlValue = string | number | null;

/**
 * The database the queue needs: one statement at a time (each its own transaction). Declared
 * here so the package does not depend on a driver; `@agentd/storage`'s `Database` fits.
 */
export interface ChannelsDatabase {
  execute(
    statement: string,
    args?: ChannelsSqlValue[],
  ): Promise<{ rows: Record<string, unknown>[]; rowsAffected: number }>;
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

/** The queue's schema; run it with `db.migrate('@agentd/channels', channelsMigrations)`. */
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

/** The SQL the queue runs, kept together so the state machine reads in one place. */
export const sql = {
  insert: `INSERT INTO ${QUEUE_TABLE} (delivery_id, idempotency_key, channel_type, channel_id, operation,
      stage, attempts, next_attempt_at, created_at, updated_at, root_run_id)
    VALUES (?, ?, ?, ?, ?, 'queued', 0, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING`,
  byId: `SELECT * FROM ${QUEUE_TABLE} WHERE delivery_id = ?`,
  byKey: `SELECT * FROM ${QUEUE_TABLE} WHERE idempotency_key = ?`,
  // One representative entry per chat with due work; the lane then names its chat by that entry,
  // so the chat's identity is compared inside SQLite and never round-trips through JS strings.
  dueChats: `SELECT channel_type, channel_id, MIN(created_at) AS first, MIN(delivery_id) AS sample FROM ${QUEUE_TABLE}
    WHERE stage IN ('queued', 'failed') AND next_attempt_at <= ?
    GROUP BY channel_type, channel_id ORDER BY first LIMIT ?`,
  dueOfChat: `SELECT * FROM ${QUEUE_TABLE} WHERE (channel_type, channel_id) =
      (SELECT channel_type, channel_id FROM ${QUEUE_TABLE} WHERE delivery_id = ?)
    AND stage IN ('queued', 'failed') AND next_attempt_at <= ? ORDER BY created_at, delivery_id LIMIT ?`,
  nextDue: `SELECT MIN(next_attempt_at) AS at FROM ${QUEUE_TABLE} WHERE stage IN ('queued', 'failed')`,
  inDoubt: `SELECT * FROM ${QUEUE_TABLE} WHERE stage = 'sending' ORDER BY created_at`,
  // The claim is the commit point before the attempt: only one claimer wins a row.
  claim: `UPDATE ${QUEUE_TABLE} SET stage = 'sending', attempts = attempts + 1, updated_at = ?
    WHERE delivery_id = ? AND stage IN ('queued', 'failed')`,
  sent: `UPDATE ${QUEUE_TABLE} SET stage = 'sent', message_id = ?, last_error = NULL, updated_at = ?
    WHERE delivery_id = ?`,
  failed: `UPDATE ${QUEUE_TABLE} SET stage = 'failed', last_error = ?, next_attempt_at = ?, updated_at = ?
    WHERE delivery_id = ?`,
  deadLetter: `UPDATE ${QUEUE_TABLE} SET stage = 'deadLetter', last_error = ?, updated_at = ? WHERE delivery_id = ?`,
  requeue: `UPDATE ${QUEUE_TABLE} SET stage = 'queued', next_attempt_at = ?, updated_at = ?
    WHERE delivery_id = ? AND stage = 'sending'`,
  counts: `SELECT stage, COUNT(*) AS n FROM ${QUEUE_TABLE} GROUP BY stage`,
  countsOf: `SELECT stage, COUNT(*) AS n FROM ${QUEUE_TABLE} WHERE channel_type = ? GROUP BY stage`,
};
