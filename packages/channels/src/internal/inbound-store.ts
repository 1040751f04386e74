import type { InboundMessage } from '../adapter.js';
import type { ChannelsDatabase, ChannelsDialect, ChannelsMigration } from './queue-store.js';

export const INBOUND_TABLE = 'channel_inbound';

/**
 * The inbound journal: every admitted message that becomes a turn is written here before the
 * platform is told it arrived (Telegram's next `getUpdates` offset, a webhook's 200, a Socket
 * Mode ack), and marked `done` once its turn has ended and its answer is queued. A message
 * still `pending` at start was cut off by a stop or a crash and runs again, once: a second cut
 * leaves it `abandoned`. Written once for both dialects (epoch-ms columns BIGINT on PostgreSQL).
 */
export function inboundMigration(dialect: ChannelsDialect): ChannelsMigration {
  const ms = dialect === 'pg' ? 'BIGINT' : 'INTEGER';
  return {
    version: 3,
    name: 'inbound journal',
    up: [
      `CREATE TABLE ${INBOUND_TABLE} (
      inbound_key TEXT PRIMARY KEY,
      channel_type TEXT NOT NULL,
      agent_id TEXT NOT NULL,
      message TEXT NOT NULL,
      stage TEXT NOT NULL CHECK (stage IN ('pending', 'done', 'abandoned')),
      attempts INTEGER NOT NULL,
      created_at ${ms} NOT NULL,
      updated_at ${ms} NOT NULL
    )`,
      `CREATE INDEX ${INBOUND_TABLE}_stage ON ${INBOUND_TABLE} (stage, created_at)`,
    ],
  };
}

/**
 * PostgreSQL only: the journal's rows are owned while their turn runs (the coordination
 * module's owned-row columns), so a starting instance takes over only the messages nobody
 * holds or whose owner's lease ran out, never a live peer's in-flight ones.
 */
export const inboundOwnersMigration: ChannelsMigration = {
  version: 2,
  name: 'inbound journal: owned rows',
  up: [
    `ALTER TABLE ${INBOUND_TABLE} ADD COLUMN owner TEXT, ADD COLUMN lease_until BIGINT, ADD COLUMN fence BIGINT NOT NULL DEFAULT 0`,
  ],
};

/** One journalled inbound message. */
export interface InboundRecord {
  key: string;
  agentId: string;
  message: InboundMessage;
  /** Turns begun for it, this one included. */
  attempts: number;
}

/** A journal row as the record it holds. */
export const toInboundRecord = (row: Record<string, unknown>): InboundRecord => ({
  key: String(row.inbound_key),
  agentId: String(row.agent_id),
  message: JSON.parse(String(row.message)) as InboundMessage,
  attempts: Number(row.attempts),
});

/** The key of an inbound message: the platform's own message, in its chat. */
export const inboundKey = (message: InboundMessage): string =>
  `${message.channelType}:${message.channelId}:${message.messageId}`;

/** The journal's reads and writes. */
export interface InboundStore {
  /**
   * Writes the message `pending` (its first turn begun here); `false` when it was journalled
   * before. With `runHere` false (cluster mode: the agent's home is another instance) it is
   * written held by nobody and not begun, for an instance that may run it to claim, and the
   * answer is `false`: no turn starts here.
   */
  record(message: InboundMessage, agentId: string, runHere?: boolean): Promise<boolean>;
  done(key: string): Promise<void>;
  /**
   * The messages left `pending` by an earlier process, oldest first, each counted as begun once
   * more; those already begun twice are marked `abandoned` and answered in `abandoned`.
   */
  resume(): Promise<{ resumed: InboundRecord[]; abandoned: InboundRecord[] }>;
  /**
   * Cluster mode: how often the held messages' leases are renewed and messages left by a dead
   * instance are taken over (`resume` again); undefined in a single process, where only a
   * start resumes.
   */
  readonly renewMs?: number | undefined;
  /** Renews the leases of the messages whose turns run here; answers those lost to another instance. */
  renew?(): Promise<string[]>;
  /** Gives up the messages still held (their turns were cut off), so another instance takes them at once. */
  release?(): Promise<void>;
}

/** Creates the journal over `db` (the migration must have run). */
export function createInboundStore(db: ChannelsDatabase, now: () => number): InboundStore {
  return {
    async record(message, agentId) {
      const at = now();
      const { rowsAffected } = await db.execute(
        `INSERT INTO ${INBOUND_TABLE} (inbound_key, channel_type, agent_id, message, stage, attempts, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'pending', 1, ?, ?) ON CONFLICT (inbound_key) DO NOTHING`,
        [inboundKey(message), message.channelType, agentId, JSON.stringify(message), at, at],
      );
      return rowsAffected > 0;
    },
    async done(key) {
      await db.execute(`UPDATE ${INBOUND_TABLE} SET stage = 'done', updated_at = ? WHERE inbound_key = ?`, [
        now(),
        key,
      ]);
    },
    async resume() {
      const { rows } = await db.execute(
        `SELECT inbound_key, agent_id, message, attempts FROM ${INBOUND_TABLE}
          WHERE stage = 'pending' ORDER BY created_at, inbound_key`,
      );
      const resumed: InboundRecord[] = [];
      const abandoned: InboundRecord[] = [];
      for (const record of rows.map(toInboundRecord)) {
        const again = record.attempts < 2;
        await db.execute(
          again
            ? `UPDATE ${INBOUND_TABLE} SET attempts = attempts + 1, updated_at = ? WHERE inbound_key = ?`
            : `UPDATE ${INBOUND_TABLE} SET stage = 'abandoned', updated_at = ? WHERE inbound_key = ?`,
          [now(), record.key],
        );
        if (again) resumed.push({ ...record, attempts: record.attempts + 1 });
        else abandoned.push(record);
      }
      return { resumed, abandoned };
    },
  };
}
