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
  /**
   * An SQL condition on `channel_inbound` (its `agent_id` column) limiting what this instance
   * claims: the messages of agents it may run (not homed on another live instance).
   */
  claimWhere?: { sql: string; args: readonly string[] } | undefined;
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
    async record(message: InboundMessage, agentId: string, runHere = true) {
      const at = now();
      const key = inboundKey(message);
      // Run here: written already owned (fence 1), so no takeover can slip in between the insert
      // and a claim. Run elsewhere: held by nobody and not yet begun (attempts 0), so the agent's
      // home claims it on its next round and its claim counts the first turn.
      const { rowsAffected } = await db.execute(
        `INSERT INTO ${INBOUND_TABLE} (inbound_key, channel_type, agent_id, message, stage, attempts,
           created_at, updated_at, owner, lease_until, fence)
         VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?, ${DB_NOW_MS} + ?, ?) ON CONFLICT (inbound_key) DO NOTHING`,
        [
          key,
          message.channelType,
          agentId,
          JSON.stringify(message),
          runHere ? 1 : 0,
          at,
          at,
          runHere ? options.instanceId : null,
          runHere ? options.leaseMs : 0,
          runHere ? 1 : 0,
        ],
      );
      if (rowsAffected === 0 || !runHere) return false;
      held.set(key, 1);
      return true;
    },
    async done(key) {
      const fence = held.get(key);
      if (fence === undefined) return;
      held.delete(key);
      // Stale (another instance took the message over) writes nothing: the new owner records it.
      await rows.complete(key, fence, { set: "stage = 'done', updated_at = ?", args: [now()] });
    },
    async resume() {
      const placed = options.claimWhere;
      const claimed = await rows.claim({
        where: placed === undefined ? "stage = 'pending'" : `stage = 'pending' AND (${placed.sql})`,
        args: placed === undefined ? [] : [...placed.args],
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
