import { randomUUID } from 'node:crypto';
import type { Database } from '../database.js';
import type { Queryable, SqlValue, Transaction } from '../types.js';
import { casDue, createOwnedRows } from './owned-rows.js';
import type {
  CasDueSpec,
  ClusterBus,
  CoordinationOptions,
  Coordinator,
  InstanceInfo,
  OwnedRows,
  OwnedRowsSpec,
  Singleton,
} from './types.js';
import { Watchers } from './watchers.js';

/**
 * What the in-process and the PostgreSQL coordinators share: the instance id and lease, the
 * bus subscribers, owned rows and `casDue` (the same SQL in both dialects), and the singleton
 * handle. Each brings membership, its bus, advisory locks, and how a singleton is claimed.
 */
export abstract class CoordinatorBase<D extends Database> implements Coordinator {
  abstract readonly mode: 'single' | 'postgres';
  abstract readonly bus: ClusterBus;
  readonly instanceId: string;
  protected readonly db: D;
  protected readonly leaseMs: number;
  protected readonly watchers = new Watchers();

  protected constructor(db: D, options: CoordinationOptions) {
    this.db = db;
    this.instanceId = options.instanceId ?? randomUUID();
    this.leaseMs = options.leaseMs ?? 10_000;
  }

  abstract start(): Promise<void>;
  abstract instances(): Promise<InstanceInfo[]>;
  abstract advertise(url: string): Promise<void>;
  abstract advisoryXact<T>(key: string, callback: (tx: Transaction) => Promise<T>): Promise<T>;
  abstract close(): Promise<void>;

  /** Runs `sweep` under the sweeper lock of `table`, or answers [] when another instance holds it. */
  protected abstract underSweepLock(
    table: string,
    sweep: (tx: Queryable) => Promise<SqlValue[]>,
  ): Promise<SqlValue[]>;
  /** Takes or renews singleton `name` (`held` is the fence this handle holds): its fence, or undefined. */
  protected abstract claimSingleton(name: string, held: number | undefined): Promise<number | undefined>;
  /** Gives up singleton `name` held at `fence`. */
  protected abstract freeSingleton(name: string, fence: number): Promise<void>;
  /** The WHERE term true while this instance holds singleton `name` at `fence`. */
  protected abstract singletonTerm(name: string, fence: number): { sql: string; args: SqlValue[] };

  ownedRows(spec: OwnedRowsSpec): OwnedRows {
    return createOwnedRows(
      {
        db: this.db,
        instanceId: this.instanceId,
        leaseMs: this.leaseMs,
        underSweepLock: (table, sweep) => this.underSweepLock(table, sweep),
      },
      spec,
    );
  }

  singleton(name: string): Singleton {
    const claim = (held: number | undefined) => this.claimSingleton(name, held);
    const free = (fence: number) => this.freeSingleton(name, fence);
    const term = (fence: number) => this.singletonTerm(name, fence);
    let held: number | undefined;
    return {
      name,
      get fence() {
        return held;
      },
      async acquire() {
        held = await claim(held);
        return held;
      },
      heldTerm() {
        return held === undefined ? undefined : term(held);
      },
      async release() {
        if (held === undefined) return;
        const fence = held;
        held = undefined;
        await free(fence);
      },
    };
  }

  casDue(spec: CasDueSpec): Promise<number | undefined> {
    return casDue(this.db, spec);
  }
}
