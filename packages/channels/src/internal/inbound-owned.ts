import type { OwnedRows } from '@agentd/storage';
import type { InboundMessage } from '../adapter.js';
import {
  INBOUND_TABLE,
  type InboundRecord,
  type InboundStore,
  inboundKey,
  toInboundRecord,
} from './inbound-store.js';
import type { ChannelsDatabase } from './queue-store.js';

/** The PostgreSQL clock in epoch ms: leases are measured against the database, never a host. */
const DB_NOW_MS = '(extract(epoch from now()) * 1000)::bigint';
/** How many messages one takeover round claims at most. */
const CLAIM_BATCH = 32;

/** What the cluster journal needs: the owned-row helpers of `channel_inbound` and their lease. */
export interface OwnedInboundOptions {
  db: ChannelsDatabase;
  /** `coordinator.ownedRows({ table: 'channel_inbound', idColumn: 'inbound_key', leaseMs })`. */
  rows: Pick<OwnedRows, 'claim' | 'renew' | 'write' | 'complete'>;
  instanceId: string;
  leaseMs: number;
  /** How often leases are renewed and orphans taken over: under a third of `leaseMs`. */
  renewMs: number;
  now(): number;
}

/**
 * The inbound journal of a cluster (PostgreSQL): a message is written owned by the instance
 * that admitted it, under a lease that instance renews while the turn runs, and every later
 * write carries the fence it holds (the coordination module's owned rows, as graph runs and
 * webhook jobs use them). `resume` claims only pending messages nobody holds (released at a
 * stop) or whose owner's lease ran out (the owner died), so a starting instance never runs a
 * live peer's message again, and a dead peer's message runs again once, on one instance.
 */
export function createOwnedInboundStore(options: OwnedInboundOptions): InboundStore {
  const { db, rows, now } = options;
  /** The messages whose turns run here, with the fence each is held at. */
  const held = new Map<string, number>();
  return {
    renewMs: options.renewMs,
    async record(message: InboundMessage, agentId: string) {
      const at = now();
      const key = inboundKey(message);
      // Written already owned (fence 1): no takeover can slip in between the insert and a claim.
      const { rowsAffected } = await db.execute(
        `INSERT INTO ${INBOUND_TABLE} (inbound_key, channel_type, agent_id, message, stage, attempts,
           created_at, updated_at, owner, lease_until, fence)
         VALUES (?, ?, ?, ?, 'pending', 1, ?, ?, ?, ${DB_NOW_MS} + ?, 1) ON CONFLICT (inbound_key) DO NOTHING`,
        [
          key,
          message.channelType,
          agentId,
          JSON.stringify(message),
          at,
          at,
          options.instanceId,
          options.leaseMs,
        ],
      );
      if (rowsAffected > 0) held.set(key, 1);
      return rowsAffected > 0;
    },
    async done(key) {
      const fence = held.get(key);
      if (fence === undefined) return;
      held.delete(key);
      // Stale (another instance took the message over) writes nothing: the new owner records it.
      await rows.complete(key, fence, { set: "stage = 'done', updated_at = ?", args: [now()] });
    },
    async resume() {
      const claimed = await rows.claim({
        where: "stage = 'pending'",
        orderBy: 'created_at, inbound_key',
        limit: CLAIM_BATCH,
      });
      const resumed: InboundRecord[] = [];
      const abandoned: InboundRecord[] = [];
      for (const { fence, row } of claimed) {
        const record = toInboundRecord(row);
        if (record.attempts >= 2) {
          if (
            await rows.complete(record.key, fence, {
              set: "stage = 'abandoned', updated_at = ?",
              args: [now()],
            })
          )
            abandoned.push(record);
          continue;
        }
        const again = { set: 'attempts = attempts + 1, updated_at = ?', args: [now()] };
        if (!(await rows.write(record.key, fence, again))) continue;
        held.set(record.key, fence);
        resumed.push({ ...record, attempts: record.attempts + 1 });
      }
      return { resumed, abandoned };
    },
    async renew() {
      const lost: string[] = [];
      for (const [key, fence] of [...held]) {
        if (await rows.renew(key, fence)) continue;
        held.delete(key);
        lost.push(key);
      }
      return lost;
    },
    async release() {
      for (const [key, fence] of [...held]) {
        held.delete(key);
        await rows.complete(key, fence);
      }
    },
  };
}
