import type { StorageLogger } from '../logger.js';
import type { Queryable, SqlRow, SqlValue, Transaction } from '../types.js';

/** Options for {@link openCoordination}. */
export interface CoordinationOptions {
  /** This instance's id, unique in the cluster. @default a random UUID */
  instanceId?: string | undefined;
  /** The URL peers reach this instance at (shown in membership). @default '' */
  advertiseUrl?: string | undefined;
  /** How long a membership, singleton or row lease lasts without renewal. @default 10000 */
  leaseMs?: number | undefined;
  /** How often membership is renewed and expired leases are swept. @default leaseMs / 5 */
  heartbeatMs?: number | undefined;
  /** How often a bus watcher re-checks state without a notice (the polling backstop). @default 2000 */
  pollMs?: number | undefined;
  /**
   * Hashes of the configuration sections every instance must agree on; a join whose hashes
   * differ from a live member's is refused, naming the sections. @default none
   */
  configSections?: Readonly<Record<string, string>> | undefined;
  /**
   * Joins even when the hashes differ from a live member's (a rolling config change); the
   * difference is logged instead. This instance's own hashes are still recorded. @default false
   */
  allowConfigSkew?: boolean | undefined;
  /** This build's version, recorded in membership. @default '' */
  version?: string | undefined;
  /**
   * False sends no NOTIFY, leaving wake-ups to polling (diagnostics and tests).
   * @default true, unless the test-only env var `AGENTD_TEST_CLUSTER_NO_NOTIFY` is `1`
   */
  notify?: boolean | undefined;
  logger?: StorageLogger | undefined;
}

/** One live member of the cluster. Times are epoch ms from the database's clock. */
export interface InstanceInfo {
  instanceId: string;
  advertiseUrl: string;
  startedAt: number;
  heartbeatAt: number;
  leaseUntil: number;
  version: string;
}

/** A table whose in-flight rows are owned: it has `owner TEXT`, `lease_until` (epoch ms) and `fence`. */
export interface OwnedRowsSpec {
  table: string;
  /** @default 'id' */
  idColumn?: string | undefined;
  /** @default the coordinator's leaseMs */
  leaseMs?: number | undefined;
}

/** What a claim took: the row as updated, its id and the fence every later write must carry. */
export interface Claimed<Row = SqlRow> {
  id: SqlValue;
  fence: number;
  row: Row;
}

/** A fenced write: `set` is the SQL after `SET` (with `?` placeholders) and its arguments. */
export interface FencedWrite {
  set?: string | undefined;
  args?: SqlValue[] | undefined;
}

/** The owned-row helpers of one table. */
export interface OwnedRows {
  /**
   * Claims up to `limit` rows matching `where` that nobody holds (or whose lease expired):
   * each gets this instance as owner, a new lease and `fence + 1`. On PostgreSQL the candidate
   * rows are locked `FOR UPDATE SKIP LOCKED`, so concurrent claimers never take the same row.
   */
  claim<Row = SqlRow>(options?: {
    where?: string | undefined;
    args?: SqlValue[] | undefined;
    orderBy?: string | undefined;
    limit?: number | undefined;
  }): Promise<Array<Claimed<Row>>>;
  /** Extends the lease while this instance still owns the row at `fence`; false when it lost it. */
  renew(id: SqlValue, fence: number): Promise<boolean>;
  /** A write that keeps ownership, applied only while this instance owns the row at `fence`. */
  write(id: SqlValue, fence: number, write: FencedWrite, tx?: Queryable): Promise<boolean>;
  /** The completing write: applied, and ownership released, only at `fence`; false when stale. */
  complete(id: SqlValue, fence: number, write?: FencedWrite, tx?: Queryable): Promise<boolean>;
  /** Releases the rows whose lease expired (one instance at a time); returns their ids. */
  sweep(): Promise<SqlValue[]>;
}

/** A compare-and-set on a due time: see {@link Coordinator.casDue}. */
export interface CasDueSpec {
  table: string;
  /** @default 'id' */
  idColumn?: string | undefined;
  /** The epoch-ms column holding the next due time. */
  dueColumn: string;
  id: SqlValue;
  /** The due time the caller saw; the write happens only while the row still holds it. */
  due: number;
  /** The due time after this fire. */
  next: number;
  /** An extra guard, e.g. `enabled = 1`. */
  where?: string | undefined;
  args?: SqlValue[] | undefined;
}

/** One named singleton: at most one live owner, with a fence that grows at each change of owner. */
export interface Singleton {
  readonly name: string;
  /** Takes or renews the singleton; the fence while held, undefined when another instance holds it. */
  acquire(): Promise<number | undefined>;
  /** Gives it up (only if still held at that fence). */
  release(): Promise<void>;
  /** The fence held since the last successful acquire, if any. */
  readonly fence: number | undefined;
  /**
   * A term for the WHERE of a write that may happen only while this instance still holds the
   * singleton at the fence it holds now (undefined while not held): on PostgreSQL the
   * singleton's row is locked `FOR SHARE` until the write's transaction ends, so no instance
   * takes it over halfway and a stalled holder's late write matches nothing; in single mode it
   * is always true. Bind `args` where the term stands.
   */
  heldTerm(): { sql: string; args: SqlValue[] } | undefined;
}

/** A notice on the bus. `payload` is JSON data; `from` the publishing instance. */
export interface BusMessage {
  topic: string;
  payload: unknown;
  from: string;
}

/**
 * Cross-instance notices. A notice is a latency hint only: state lives in rows, and a
 * {@link ClusterBus.watch} re-checks it on every notice and on a timer, so a lost notice delays
 * a wake-up but never loses it.
 */
export interface ClusterBus {
  /** Publishes a notice; inside `tx` it is delivered when the transaction commits. */
  publish(topic: string, payload: unknown, tx?: Transaction): Promise<void>;
  /** Calls `handler` for each notice on `topic`; returns the unsubscribe function. */
  subscribe(topic: string, handler: (message: BusMessage) => void): () => void;
  /**
   * Runs `check` on every notice on `topic`, after each reconnect of the listener, and every
   * `pollMs` (PostgreSQL only) as the backstop. Runs never overlap. Returns the stop function.
   */
  watch(topic: string, check: () => Promise<void> | void, options?: { pollMs?: number }): () => void;
}

/** The coordination port: membership, owned rows, singletons, advisory locks and the bus. */
export interface Coordinator {
  /** `single` for libsql (everything in process), `postgres` for a cluster. */
  readonly mode: 'single' | 'postgres';
  readonly instanceId: string;
  readonly bus: ClusterBus;
  /** Joins (refusing a live duplicate id or differing config), then heartbeats and sweeps. */
  start(): Promise<void>;
  /** Live members, this one included. */
  instances(): Promise<InstanceInfo[]>;
  /**
   * Sets the URL peers reach this instance at, once it is known (a daemon listening on port 0
   * learns its port after the coordinator started).
   */
  advertise(url: string): Promise<void>;
  ownedRows(spec: OwnedRowsSpec): OwnedRows;
  singleton(name: string): Singleton;
  /**
   * Moves a row's due time from `due` to `next` and bumps its `fence`, only if it still holds
   * `due`: of every instance that saw the same due time, exactly one gets the new fence back;
   * the others get `undefined`. No leader is needed.
   */
  casDue(spec: CasDueSpec): Promise<number | undefined>;
  /** Runs `callback` in a write transaction holding the advisory lock named `key`. */
  advisoryXact<T>(key: string, callback: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Leaves the cluster and stops timers and the listener. Idempotent. */
  close(): Promise<void>;
}
