import type { Database } from '../database.js';
import type { Queryable, SqlValue, Transaction } from '../types.js';
import { CoordinatorBase } from './base.js';
import type { BusMessage, ClusterBus, CoordinationOptions, InstanceInfo } from './types.js';

/**
 * The coordinator of an embedded (libsql) daemon: one process is the whole "cluster", so
 * membership is this instance, every singleton is held, advisory locks are the write
 * transaction SQLite already serialises, and the bus is in-process.
 */
export class LocalCoordinator extends CoordinatorBase<Database> {
  readonly mode = 'single' as const;
  readonly bus: ClusterBus;
  #advertiseUrl: string;
  readonly #version: string;
  /** The last fence given out per singleton: each new holder gets the next one. */
  readonly #singletons = new Map<string, number>();
  #startedAt = 0;

  constructor(db: Database, options: CoordinationOptions) {
    super(db, options);
    this.#advertiseUrl = options.advertiseUrl ?? '';
    this.#version = options.version ?? '';
    const watchers = this.watchers;
    const instanceId = this.instanceId;
    this.bus = {
      async publish(topic, payload) {
        const message: BusMessage = {
          topic,
          payload: JSON.parse(JSON.stringify(payload ?? null)),
          from: instanceId,
        };
        queueMicrotask(() => watchers.deliver(message));
      },
      subscribe: (topic, handler) => watchers.subscribe(topic, handler),
      // In one process every change publishes its notice, so no polling backstop is needed.
      watch: (topic, check) => watchers.watch(topic, check, undefined),
    };
  }

  async start(): Promise<void> {
    this.#startedAt = Date.now();
  }

  async instances(): Promise<InstanceInfo[]> {
    const now = Date.now();
    return [
      {
        instanceId: this.instanceId,
        advertiseUrl: this.#advertiseUrl,
        startedAt: this.#startedAt,
        heartbeatAt: now,
        leaseUntil: now + this.leaseMs,
        version: this.#version,
      },
    ];
  }

  async advertise(url: string): Promise<void> {
    this.#advertiseUrl = url;
  }

  advisoryXact<T>(_key: string, callback: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(callback);
  }

  async close(): Promise<void> {
    this.watchers.close();
  }

  protected underSweepLock(
    _table: string,
    sweep: (tx: Queryable) => Promise<SqlValue[]>,
  ): Promise<SqlValue[]> {
    return this.db.transaction((tx) => sweep(tx));
  }

  protected async claimSingleton(name: string, held: number | undefined): Promise<number> {
    if (held !== undefined) return held;
    const fence = (this.#singletons.get(name) ?? 0) + 1;
    this.#singletons.set(name, fence);
    return fence;
  }

  protected singletonTerm(): { sql: string; args: SqlValue[] } {
    return { sql: '1 = 1', args: [] };
  }

  protected async freeSingleton(): Promise<void> {
    // Nothing else could hold it: the next acquire simply takes the next fence.
  }
}
