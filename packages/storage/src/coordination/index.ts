import type { Database } from '../database.js';
import { StorageError } from '../errors.js';
import { LocalCoordinator } from './local.js';
import type { CoordinationOptions, Coordinator } from './types.js';

/**
 * The coordinator for `db`: on libsql the in-process one (today's single-daemon behaviour),
 * on PostgreSQL the cluster one, loaded only then. Call `start()` before use.
 */
export async function openCoordination(
  db: Database,
  options: CoordinationOptions = {},
): Promise<Coordinator> {
  for (const [name, value] of [
    ['leaseMs', options.leaseMs],
    ['heartbeatMs', options.heartbeatMs],
    ['pollMs', options.pollMs],
  ] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 10 || value > 3_600_000)) {
      throw new StorageError('INVALID_OPTIONS', `coordination ${name} must be an integer from 10 to 3600000`);
    }
  }
  if (options.instanceId !== undefined && !/^[A-Za-z0-9._:-]{1,128}$/.test(options.instanceId)) {
    throw new StorageError('INVALID_OPTIONS', 'coordination instanceId must be 1-128 of A-Z a-z 0-9 . _ : -');
  }
  if (db.dialect === 'pg') {
    const [{ PgCoordinator }, { PgDatabase }] = await Promise.all([
      import('./pg.js'),
      import('../pg/pg-database.js'),
    ]);
    if (!(db instanceof PgDatabase)) {
      throw new StorageError('INVALID_OPTIONS', 'coordination needs a database opened by openDatabase');
    }
    return new PgCoordinator(db, options);
  }
  return new LocalCoordinator(db, options);
}

export {
  type KeyedLease,
  type KeyedLock,
  type KeyedLockOptions,
  keyedLock,
  localKeyedLock,
} from './keyed-lock.js';
export {
  affinityPgMigrations,
  type HostAffinity,
  type HostAffinityOptions,
  openHostAffinity,
  type Placement,
} from './affinity.js';
export { type BusRelay, relayOverBus } from './relay.js';
export { nowMs, ownedColumns } from './sql.js';
export type * from './types.js';
