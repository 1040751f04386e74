import type { Logger } from '@agentd/contracts';
import { ChannelsError } from '../errors.js';
import type { LaneItem } from './lanes.js';
import type { DeliveryEntry } from './queue-store.js';

/** A delivery held in memory from its write until its final record is committed. */
export interface HeldEntry extends LaneItem {
  entry: DeliveryEntry;
  /** Its row is stored: `false` when its idempotency key was taken or the write failed. */
  written: Promise<boolean>;
  /** Its stored row is `sending` for the attempt about to be made. */
  claimed: boolean;
}

/**
 * The entries in memory and the callers waiting on them. A caller is answered from memory
 * once the entry's last record is committed, so waiting costs no read.
 */
export interface Held {
  add(item: HeldEntry): void;
  has(deliveryId: string): boolean;
  /** Forgets an entry that will not be attempted (not stored, or no longer waiting). */
  drop(deliveryId: string): void;
  /**
   * Sets the entry's last state (`sent` or `deadLetter`); once `record` commits, the entry
   * leaves memory and its waiters hear it. A record that fails leaves the row in `sending`,
   * which the next start reconciles; the waiters then answer what is stored at their time-out.
   */
  finish(item: HeldEntry, entry: DeliveryEntry, record: Promise<boolean>): void;
  /** A write the lanes do not wait for: logged when it fails, waited for by {@link idle}. */
  track(record: Promise<unknown>, what: string, deliveryId: string): void;
  /** Resolves when the entry is `sent` or `deadLetter`, or after `timeoutMs` with what is stored. */
  settled(deliveryId: string, timeoutMs: number): Promise<DeliveryEntry>;
  /** Resolves when every record handed over so far is committed or has failed. */
  idle(): Promise<void>;
  /**
   * The entry may have been settled elsewhere (another instance of a cluster owns its lane):
   * its waiters read it and hear it when it is `sent` or `deadLetter`.
   */
  recheck(deliveryId: string): void;
}

/** Creates the registry; `get` reads a stored entry for callers of entries not in memory. */
export function createHeld(options: {
  get(deliveryId: string): Promise<DeliveryEntry | undefined>;
  logger: Logger;
}): Held {
  const { get, logger } = options;
  const items = new Map<string, HeldEntry>();
  const waiters = new Map<string, Array<(entry: DeliveryEntry) => void>>();
  const records = new Set<Promise<unknown>>();

  const unwait = (deliveryId: string, waiter: (entry: DeliveryEntry) => void): void => {
    const rest = (waiters.get(deliveryId) ?? []).filter((item) => item !== waiter);
    if (rest.length > 0) waiters.set(deliveryId, rest);
    else waiters.delete(deliveryId);
  };
  const notRecorded = (err: unknown, what: string, deliveryId: string): void =>
    logger.error(
      {
        err,
        deliveryId,
        errorKind: 'resource',
        hint: 'the database may be unavailable; the entry is reconciled at the next start',
      },
      `delivery ${what} not recorded`,
    );
  const track = (record: Promise<unknown>, what: string, deliveryId: string): void => {
    const done = record
      .catch((err: unknown) => notRecorded(err, what, deliveryId))
      .finally(() => records.delete(done));
    records.add(done);
  };

  return {
    add: (item) => items.set(item.entry.deliveryId, item),
    has: (deliveryId) => items.has(deliveryId),
    drop: (deliveryId) => items.delete(deliveryId),
    finish(item, entry, record) {
      item.entry = entry;
      // One reaction to the record (not a chain of then/finally/catch): this runs for every
      // delivery, and each extra promise is work on the queue's hottest path.
      const done: Promise<void> = record.then(
        (wrote) => {
          records.delete(done);
          items.delete(entry.deliveryId);
          if (!wrote) {
            logger.warn(
              {
                deliveryId: entry.deliveryId,
                errorKind: 'internal',
                hint: 'the stored row was not in sending',
              },
              `delivery ${entry.stage} not recorded`,
            );
            return;
          }
          const list = waiters.get(entry.deliveryId);
          if (list === undefined) return;
          waiters.delete(entry.deliveryId);
          for (const resolve of list) resolve(entry);
        },
        (err: unknown) => {
          records.delete(done);
          items.delete(entry.deliveryId);
          notRecorded(err, entry.stage, entry.deliveryId);
        },
      );
      records.add(done);
    },
    track,
    settled(deliveryId, timeoutMs) {
      return new Promise((resolve, reject) => {
        const done = (entry: DeliveryEntry) => {
          clearTimeout(limit);
          resolve(entry);
        };
        const list = waiters.get(deliveryId) ?? [];
        list.push(done);
        waiters.set(deliveryId, list);
        const limit = setTimeout(() => {
          unwait(deliveryId, done);
          get(deliveryId).then((entry) => {
            if (entry) resolve(entry);
            else reject(new ChannelsError('NOT_FOUND', `delivery not found: ${deliveryId}`));
          }, reject);
        }, timeoutMs);
        // An entry in memory is answered when its record commits; any other may be settled already.
        if (items.has(deliveryId)) return;
        get(deliveryId).then((entry) => {
          if (entry?.stage !== 'sent' && entry?.stage !== 'deadLetter') return;
          unwait(deliveryId, done);
          done(entry);
        }, reject);
      });
    },
    async idle() {
      while (records.size > 0) await Promise.all(records);
    },
    recheck(deliveryId) {
      if (!waiters.has(deliveryId)) return;
      get(deliveryId).then(
        (entry) => {
          if (entry?.stage !== 'sent' && entry?.stage !== 'deadLetter') return;
          const list = waiters.get(deliveryId) ?? [];
          waiters.delete(deliveryId);
          for (const resolve of list) resolve(entry);
        },
        // The waiters read the entry again at their time-out.
        () => undefined,
      );
    },
  };
}
