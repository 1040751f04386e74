import { randomUUID } from 'node:crypto';
import type { Database } from '../database.js';
import type { Transaction } from '../types.js';
import { casDue, createOwnedRows } from './owned-rows.js';
import type {
  BusMessage,
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
 * The coordinator of an embedded (libsql) daemon: one process is the whole "cluster", so
 * membership is this instance, every singleton is held, advisory locks are the write
 * transaction SQLite already serialises, and the bus is in-process.
 */
export class LocalCoordinator implements Coordinator {
  readonly mode = 'single' as const;
  readonly instanceId: string;
  readonly bus: ClusterBus;
  readonly #db: Database;
  readonly #leaseMs: number;
  #advertiseUrl: string;
  readonly #version: string;
  readonly #singletons = new Map<string, number>();
  readonly #watchers = new Watchers();
  #startedAt = 0;

  constructor(db: Database, options: CoordinationOptions) {
    this.#db = db;
    this.instanceId = options.instanceId ?? randomUUID();
    this.#leaseMs = options.leaseMs ?? 10_000;
    this.#advertiseUrl = options.advertiseUrl ?? '';
    this.#version = options.version ?? '';
    const watchers = this.#watchers;
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
        leaseUntil: now + this.#leaseMs,
        version: this.#version,
      },
    ];
  }

  async advertise(url: string): Promise<void> {
    this.#advertiseUrl = url;
  }

  ownedRows(spec: OwnedRowsSpec): OwnedRows {
    return createOwnedRows(
      {
        db: this.#db,
        instanceId: this.instanceId,
        leaseMs: this.#leaseMs,
        underSweepLock: (_table, sweep) => this.#db.transaction((tx) => sweep(tx)),
      },
      spec,
    );
  }

  singleton(name: string): Singleton {
    const singletons = this.#singletons;
    let held: number | undefined;
    return {
      name,
      get fence() {
        return held;
      },
      async acquire() {
        if (held === undefined) {
          held = (singletons.get(name) ?? 0) + 1;
          singletons.set(name, held);
        }
        return held;
      },
      async release() {
        held = undefined;
      },
    };
  }

  casDue(spec: CasDueSpec): Promise<number | undefined> {
    return casDue(this.#db, spec);
  }

  advisoryXact<T>(_key: string, callback: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.#db.transaction(callback);
  }

  async close(): Promise<void> {
    this.#watchers.close();
  }
}
