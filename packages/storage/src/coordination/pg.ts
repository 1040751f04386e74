import { backoffDelay } from '@agentd/async-control';
import type pg from 'pg';
import { StorageError } from '../errors.js';
import { noopLogger, type StorageLogger } from '../logger.js';
import type { PgDatabase } from '../pg/pg-database.js';
import type { Queryable, SqlValue, Transaction } from '../types.js';
import { CoordinatorBase } from './base.js';
import { coordinationPgMigrations, nowMs, singletonHeld } from './sql.js';
import type {
  BusMessage,
  ClusterBus,
  CoordinationOptions,
  InstanceInfo,
  OwnedRows,
  OwnedRowsSpec,
} from './types.js';

const CHANNEL = 'agentd';
// NOTIFY payloads must stay under 8000 bytes; anything larger travels as a cluster_events row.
const NOTIFY_LIMIT_BYTES = 7900;
// Large-event rows are read within moments of their notice; older ones are deleted by the sweep.
const EVENT_RETENTION_MS = 10 * 60_000;
const NOW = nowMs('pg');
/**
 * Test-only: `1` in a process's environment sends no NOTIFY from its coordinator (unless the
 * `notify` option says otherwise), so cluster tests and benchmarks of whole daemons can measure
 * the polling backstop alone. Never set it in production: wake-ups then wait for a poll.
 */
export const SUPPRESS_NOTIFY_ENV = 'AGENTD_TEST_CLUSTER_NO_NOTIFY';

interface InstanceRow {
  instance_id: string;
  advertise_url: string;
  started_at: number;
  heartbeat_at: number;
  lease_until: number;
  config_sections: string;
  version: string;
}

function lockKey(key: string): string {
  return `agentd:${key}`;
}

/**
 * The coordinator of a cluster on PostgreSQL. Lease times come from the database's `now()`
 * only. The listener is one connection taken from the pool for good; when it drops it is
 * replaced, LISTENs again, and every watcher re-checks its state.
 */
export class PgCoordinator extends CoordinatorBase<PgDatabase> {
  readonly mode = 'postgres' as const;
  readonly bus: ClusterBus;
  readonly #options: CoordinationOptions;
  readonly #heartbeatMs: number;
  readonly #pollMs: number;
  readonly #notify: boolean;
  readonly #logger: StorageLogger;
  readonly #swept = new Set<OwnedRows>();
  #advertiseUrl: string;
  #listener: pg.PoolClient | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reconnectTimer: NodeJS.Timeout | undefined;
  /** Listener losses since it last LISTENed: drives the reconnect backoff. */
  #reconnectFailures = 0;
  #closed = false;
  #started = false;

  constructor(db: PgDatabase, options: CoordinationOptions) {
    super(db, options);
    this.#options = options;
    this.#advertiseUrl = options.advertiseUrl ?? '';
    this.#heartbeatMs = options.heartbeatMs ?? Math.max(100, Math.floor(this.leaseMs / 5));
    this.#pollMs = options.pollMs ?? 2000;
    this.#notify = options.notify ?? process.env[SUPPRESS_NOTIFY_ENV] !== '1';
    this.#logger = options.logger ?? noopLogger;
    this.watchers.onError = (error, topic) =>
      this.#logger.warn(
        { err: error, topic, errorKind: 'internal', hint: 'a bus subscriber threw; see the error' },
        'cluster bus handler failed',
      );
    this.bus = {
      publish: (topic, payload, tx) => this.#publish(topic, payload, tx),
      subscribe: (topic, handler) => this.watchers.subscribe(topic, handler),
      watch: (topic, check, watchOptions) =>
        this.watchers.watch(topic, check, watchOptions?.pollMs ?? this.#pollMs),
    };
  }

  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    await this.db.migrate('@agentd/storage:coordination', { libsql: [], pg: coordinationPgMigrations });
    await this.#join();
    await this.#listen();
    this.#timer = setInterval(() => void this.#tick(), this.#heartbeatMs);
    this.#timer.unref();
    this.db.onClose(() => this.close());
  }

  async instances(): Promise<InstanceInfo[]> {
    const rows = await this.db.query<InstanceRow>(
      `SELECT * FROM cluster_instances WHERE lease_until >= ${NOW} ORDER BY started_at, instance_id`,
    );
    return rows.map((row) => ({
      instanceId: row.instance_id,
      advertiseUrl: row.advertise_url,
      startedAt: Number(row.started_at),
      heartbeatAt: Number(row.heartbeat_at),
      leaseUntil: Number(row.lease_until),
      version: row.version,
    }));
  }

  async advertise(url: string): Promise<void> {
    this.#advertiseUrl = url;
    if (!this.#started || this.#closed) return;
    await this.db.execute('UPDATE cluster_instances SET advertise_url = ? WHERE instance_id = ?', [
      url,
      this.instanceId,
    ]);
  }

  override ownedRows(spec: OwnedRowsSpec): OwnedRows {
    const rows = super.ownedRows(spec);
    // Every table asked for is swept on the heartbeat.
    this.#swept.add(rows);
    return rows;
  }

  advisoryXact<T>(key: string, callback: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await tx.execute('SELECT pg_advisory_xact_lock(hashtext(?))', [lockKey(key)]);
      return callback(tx);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    if (this.#reconnectTimer !== undefined) clearTimeout(this.#reconnectTimer);
    this.watchers.close();
    const listener = this.#listener;
    this.#listener = undefined;
    if (listener !== undefined) {
      listener.removeAllListeners('notification');
      listener.removeAllListeners('error');
      listener.release(true);
    }
    if (this.#started && !this.db.closed) {
      await this.db
        .execute('DELETE FROM cluster_instances WHERE instance_id = ?', [this.instanceId])
        .catch(() => undefined);
    }
  }

  protected underSweepLock(
    table: string,
    sweep: (tx: Queryable) => Promise<SqlValue[]>,
  ): Promise<SqlValue[]> {
    return this.#trySweepLock(`sweeper:${table}`, sweep);
  }

  protected async claimSingleton(name: string): Promise<number | undefined> {
    // A plain read first: while another live instance holds it, the answer is no without the
    // upsert, whose ON CONFLICT locks the row even when its WHERE refuses, and so waits for every
    // open transaction of the holder that keeps the row `FOR SHARE` (its `heldTerm` writes),
    // holding a pooled connection all along.
    const held = await this.db.get<{ live: boolean }>(
      `SELECT lease_until >= ${NOW} AS live FROM cluster_singletons WHERE name = ? AND owner <> ?`,
      [name, this.instanceId],
    );
    if (held?.live === true) return undefined;
    const row = await this.db.get<{ fence: number }>(
      `INSERT INTO cluster_singletons (name, owner, fence, lease_until) VALUES (?, ?, 1, ${NOW} + ?)
       ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until,
         fence = CASE WHEN cluster_singletons.owner = excluded.owner AND cluster_singletons.lease_until >= ${NOW}
                      THEN cluster_singletons.fence ELSE cluster_singletons.fence + 1 END
       WHERE cluster_singletons.owner = excluded.owner OR cluster_singletons.lease_until < ${NOW}
       RETURNING fence`,
      [name, this.instanceId, this.leaseMs],
    );
    return row === undefined ? undefined : Number(row.fence);
  }

  protected singletonTerm(name: string, fence: number): { sql: string; args: SqlValue[] } {
    return singletonHeld(name, this.instanceId, fence);
  }

  protected async freeSingleton(name: string, fence: number): Promise<void> {
    await this.db.execute(
      'UPDATE cluster_singletons SET lease_until = 0 WHERE name = ? AND owner = ? AND fence = ?',
      [name, this.instanceId, fence],
    );
  }

  async #join(): Promise<void> {
    const sections = this.#options.configSections ?? {};
    await this.advisoryXact('membership', async (tx) => {
      const live = await tx.query<InstanceRow>(`SELECT * FROM cluster_instances WHERE lease_until >= ${NOW}`);
      if (live.some((row) => row.instance_id === this.instanceId)) {
        throw new StorageError(
          'INVALID_OPTIONS',
          `Another live instance already uses the instance id ${JSON.stringify(this.instanceId)}`,
          { data: { instanceId: this.instanceId } },
        );
      }
      for (const peer of live) {
        const theirs = JSON.parse(peer.config_sections) as Record<string, string>;
        const differing = [...new Set([...Object.keys(theirs), ...Object.keys(sections)])]
          .filter((section) => theirs[section] !== sections[section])
          .sort();
        if (differing.length > 0 && this.#options.allowConfigSkew === true) {
          this.#logger.warn(
            {
              peer: peer.instance_id,
              sections: differing,
              errorKind: 'config',
              hint: 'cluster.allowConfigSkew is set; give every instance the same config.yaml once the change is rolled out',
            },
            'joining although the configuration differs from a live instance',
          );
        } else if (differing.length > 0) {
          throw new StorageError(
            'INVALID_OPTIONS',
            `The configuration differs from live instance ${peer.instance_id} in: ${differing.join(', ')}`,
            { data: { instanceId: peer.instance_id, sections: differing } },
          );
        }
      }
      await tx.execute(
        `INSERT INTO cluster_instances (instance_id, advertise_url, started_at, heartbeat_at, lease_until, config_sections, version)
         VALUES (?, ?, ${NOW}, ${NOW}, ${NOW} + ?, ?, ?)
         ON CONFLICT (instance_id) DO UPDATE SET advertise_url = excluded.advertise_url, started_at = excluded.started_at,
           heartbeat_at = excluded.heartbeat_at, lease_until = excluded.lease_until,
           config_sections = excluded.config_sections, version = excluded.version`,
        [
          this.instanceId,
          this.#advertiseUrl,
          this.leaseMs,
          JSON.stringify(sections),
          this.#options.version ?? '',
        ],
      );
    });
  }

  async #tick(): Promise<void> {
    if (this.#closed) return;
    try {
      const beat = await this.db.execute(
        `UPDATE cluster_instances SET heartbeat_at = ${NOW}, lease_until = ${NOW} + ? WHERE instance_id = ?`,
        [this.leaseMs, this.instanceId],
      );
      if (beat.rowsAffected === 0) {
        // Swept as dead while paused: rows it owned may have moved on, and their fences say so.
        this.#logger.warn(
          {
            instanceId: this.instanceId,
            errorKind: 'dependency',
            hint: 'the instance missed its heartbeats',
          },
          'membership lease had expired; joining again',
        );
        await this.#join();
      }
      await this.#trySweepLock('sweeper:cluster', async (tx) => {
        await tx.execute(`DELETE FROM cluster_instances WHERE lease_until < ${NOW} - ?`, [this.leaseMs * 6]);
        await tx.execute(`DELETE FROM cluster_events WHERE created_at < ${NOW} - ?`, [EVENT_RETENTION_MS]);
        return [];
      });
      for (const rows of this.#swept) await rows.sweep();
    } catch (error) {
      if (this.#closed) return;
      this.#logger.warn(
        { err: error, errorKind: 'dependency', hint: 'check that the PostgreSQL server is reachable' },
        'cluster heartbeat or sweep failed',
      );
    }
  }

  async #trySweepLock(key: string, sweep: (tx: Queryable) => Promise<SqlValue[]>): Promise<SqlValue[]> {
    return this.db.transaction(async (tx) => {
      const lock = await tx.get<{ acquired: boolean }>(
        'SELECT pg_try_advisory_xact_lock(hashtext(?)) AS acquired',
        [lockKey(key)],
      );
      return lock?.acquired === true ? sweep(tx) : [];
    });
  }

  async #publish(topic: string, payload: unknown, tx?: Transaction): Promise<void> {
    const runner: Queryable = tx ?? this.db;
    let text = JSON.stringify({ t: topic, p: payload ?? null, f: this.instanceId });
    if (Buffer.byteLength(text) > NOTIFY_LIMIT_BYTES) {
      const row = await runner.get<{ id: number }>(
        `INSERT INTO cluster_events (topic, payload, created_at) VALUES (?, ?, ${NOW}) RETURNING id`,
        [topic, JSON.stringify(payload ?? null)],
      );
      text = JSON.stringify({ t: topic, r: row!.id, f: this.instanceId });
    }
    if (!this.#notify) return;
    await runner.execute('SELECT pg_notify(?, ?)', [CHANNEL, text]);
  }

  async #onNotification(text: string | undefined): Promise<void> {
    if (text === undefined) return;
    let parsed: { t?: unknown; p?: unknown; r?: unknown; f?: unknown };
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      return;
    }
    if (typeof parsed.t !== 'string') return;
    let payload = parsed.p;
    if (typeof parsed.r === 'number') {
      const row = await this.db.get<{ payload: string }>('SELECT payload FROM cluster_events WHERE id = ?', [
        parsed.r,
      ]);
      if (row === undefined) return;
      payload = JSON.parse(row.payload);
    }
    const message: BusMessage = {
      topic: parsed.t,
      payload,
      from: typeof parsed.f === 'string' ? parsed.f : '',
    };
    this.watchers.deliver(message);
  }

  async #listen(): Promise<void> {
    const client = await this.db.pool.connect();
    if (this.#closed) {
      client.release(true);
      return;
    }
    client.on('notification', (notice) => {
      if (notice.channel !== CHANNEL) return;
      this.#onNotification(notice.payload).catch((error: unknown) =>
        this.#logger.warn(
          { err: error, errorKind: 'dependency', hint: 'check that the PostgreSQL server is reachable' },
          'reading a cluster event failed',
        ),
      );
    });
    client.on('error', (error) => this.#lost(client, error));
    try {
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      this.#lost(client, error);
      return;
    }
    this.#listener = client;
    this.#reconnectFailures = 0;
  }

  #lost(client: pg.PoolClient, error: unknown): void {
    if (this.#listener !== undefined && this.#listener !== client) return;
    this.#listener = undefined;
    client.removeAllListeners('notification');
    try {
      client.release(true);
    } catch {
      // already released
    }
    if (this.#closed) return;
    this.#reconnectFailures += 1;
    const delay = backoffDelay(this.#reconnectFailures, { initialMs: 100, maxMs: 5000 });
    this.#logger.warn(
      {
        err: this.db.redact(error instanceof Error ? error.message : String(error)),
        retryInMs: delay,
        errorKind: 'dependency',
        hint: 'check that the PostgreSQL server is reachable',
      },
      'cluster bus listener lost its connection; reconnecting',
    );
    this.#reconnectTimer = setTimeout(() => {
      this.#listen()
        .then(() => {
          // Notices sent while disconnected are gone: every watcher re-reads its state.
          if (this.#listener !== undefined) this.watchers.recheckAll();
        })
        .catch((retryError: unknown) => this.#lost(client, retryError));
    }, delay);
    this.#reconnectTimer.unref();
  }
}
