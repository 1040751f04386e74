import type { Database } from '../database.js';
import { StorageError } from '../errors.js';
import { noopLogger, type StorageLogger } from '../logger.js';
import { migration } from '../migrations.js';
import { identifier, nowMs, ownedColumns } from './sql.js';
import type { Coordinator, OwnedRows } from './types.js';

/**
 * Where something host-bound lives, seen from this instance: `here`; on another live instance
 * (`elsewhere`, with the URL from its membership row); or `nowhere` (nobody recorded it, or the
 * instance that held it is gone, and a handle dies with its process).
 */
export type Placement =
  | { where: 'here' }
  | { where: 'elsewhere'; instanceId: string; advertiseUrl: string }
  | { where: 'nowhere' };

/** Options of {@link openHostAffinity}. */
export interface HostAffinityOptions {
  db: Database;
  coordinator: Coordinator;
  /** How long a home lease lasts without renewal. @default 10000 */
  leaseMs?: number | undefined;
  logger?: StorageLogger | undefined;
}

/**
 * Host-bound state in a cluster: handles (terminal drives, browser tabs, orchestrate runs) are
 * recorded with the instance that made them, and agents whose tools use this host get a home
 * instance through a lease row in `agent_homes` (owned rows of the coordination module, renewed
 * while this instance lives, swept when it dies). On libsql there is one instance, so every
 * answer is `here` and nothing is written.
 */
export interface HostAffinity {
  /** Records `handle` of `kind` as this instance's (a later record of the same key moves it). */
  record(kind: string, handle: string): Promise<void>;
  /** Forgets one of this instance's handles. */
  forget(kind: string, handle: string): Promise<void>;
  /** Forgets every handle of `kind` this instance holds (its browser stopped, say). */
  forgetAll(kind: string): Promise<void>;
  /** Where `handle` of `kind` lives. */
  locate(kind: string, handle: string): Promise<Placement>;
  /**
   * The home of `agentId`: `here` when this instance holds it, or took it now because nobody
   * held it (or its lease expired); otherwise the live instance that holds it.
   */
  home(agentId: string): Promise<Placement>;
  /**
   * A claim condition for rows naming an agent in `column` (NULL meaning `defaultAgentId`): true
   * unless that agent is homed on another live instance, so a homed agent's queued work is
   * claimed only on its home. `undefined` on libsql (nothing to filter).
   */
  notHomedElsewhere(column: string, defaultAgentId: string): { sql: string; args: string[] } | undefined;
  /** Whether this instance holds the home of `agentId` now, without a database call. */
  holdsHome(agentId: string): boolean;
  /** Gives up the homes held and forgets this instance's handles, then stops renewing. Idempotent. */
  close(): Promise<void>;
}

const HERE: Placement = { where: 'here' };
const NOWHERE: Placement = { where: 'nowhere' };
const NOW = nowMs('pg');
const MAX_KEY = 256;

/** The tables of host affinity on PostgreSQL (libsql keeps nothing: one instance is all). */
export const affinityPgMigrations = [
  migration(1, 'host-bound handles and agent homes', [
    `CREATE TABLE cluster_handles (
      kind TEXT NOT NULL,
      handle TEXT NOT NULL,
      instance_id TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      PRIMARY KEY (kind, handle)
    );
    CREATE INDEX cluster_handles_instance ON cluster_handles (instance_id);
    CREATE TABLE agent_homes (
      agent_id TEXT PRIMARY KEY,
      ${ownedColumns('pg')}
    );`,
  ]),
];

function checkKey(value: string, what: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_KEY) {
    throw new StorageError('INVALID_ARGUMENT', `${what} must be a string of 1-${MAX_KEY} characters`);
  }
  return value;
}

/** Opens host affinity on `db` (migrating its tables on PostgreSQL) and starts renewing homes. */
export async function openHostAffinity(options: HostAffinityOptions): Promise<HostAffinity> {
  const { db, coordinator } = options;
  if (coordinator.mode === 'single' || db.dialect !== 'pg') return singleInstanceAffinity();
  await db.migrate('@agentd/storage:affinity', { libsql: [], pg: affinityPgMigrations });
  return new PgHostAffinity(db, coordinator, options.leaseMs ?? 10_000, options.logger ?? noopLogger);
}

function singleInstanceAffinity(): HostAffinity {
  return {
    record: async () => undefined,
    forget: async () => undefined,
    forgetAll: async () => undefined,
    locate: async () => HERE,
    home: async () => HERE,
    notHomedElsewhere: () => undefined,
    holdsHome: () => true,
    close: async () => undefined,
  };
}

interface OwnerRow {
  owner: string | null;
  fence?: number | string | null;
  live: boolean | null;
  advertise_url: string | null;
}

class PgHostAffinity implements HostAffinity {
  readonly #db: Database;
  readonly #me: string;
  readonly #homes: OwnedRows;
  readonly #logger: StorageLogger;
  /** The homes this instance holds, with the fence of each lease. */
  readonly #held = new Map<string, number>();
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(db: Database, coordinator: Coordinator, leaseMs: number, logger: StorageLogger) {
    this.#db = db;
    this.#me = coordinator.instanceId;
    this.#logger = logger;
    // Owned rows: the coordinator's heartbeat sweeps the leases of dead homes.
    this.#homes = coordinator.ownedRows({ table: 'agent_homes', idColumn: 'agent_id', leaseMs });
    this.#timer = setInterval(() => void this.#renew(), Math.max(50, Math.floor(leaseMs / 3)));
    this.#timer.unref();
  }

  async record(kind: string, handle: string): Promise<void> {
    await this.#db.execute(
      `INSERT INTO cluster_handles (kind, handle, instance_id, created_at) VALUES (?, ?, ?, ${NOW})
       ON CONFLICT (kind, handle) DO UPDATE SET instance_id = excluded.instance_id, created_at = excluded.created_at`,
      [checkKey(kind, 'kind'), checkKey(handle, 'handle'), this.#me],
    );
  }

  async forget(kind: string, handle: string): Promise<void> {
    await this.#db.execute('DELETE FROM cluster_handles WHERE kind = ? AND handle = ? AND instance_id = ?', [
      checkKey(kind, 'kind'),
      checkKey(handle, 'handle'),
      this.#me,
    ]);
  }

  async forgetAll(kind: string): Promise<void> {
    await this.#db.execute('DELETE FROM cluster_handles WHERE kind = ? AND instance_id = ?', [
      checkKey(kind, 'kind'),
      this.#me,
    ]);
  }

  async locate(kind: string, handle: string): Promise<Placement> {
    const row = await this.#db.get<OwnerRow>(
      `SELECT h.instance_id AS owner, i.advertise_url, i.lease_until >= ${NOW} AS live
         FROM cluster_handles h LEFT JOIN cluster_instances i ON i.instance_id = h.instance_id
        WHERE h.kind = ? AND h.handle = ?`,
      [checkKey(kind, 'kind'), checkKey(handle, 'handle')],
    );
    if (row === undefined || row.owner === null) return NOWHERE;
    if (row.owner === this.#me) return HERE;
    if (row.live === true) return elsewhere(row);
    // Its instance is gone, and the handle with it: the row is dropped.
    await this.#db.execute('DELETE FROM cluster_handles WHERE kind = ? AND handle = ? AND instance_id = ?', [
      kind,
      handle,
      row.owner,
    ]);
    return NOWHERE;
  }

  holdsHome(agentId: string): boolean {
    return this.#held.has(agentId);
  }

  notHomedElsewhere(column: string, defaultAgentId: string): { sql: string; args: string[] } {
    return {
      sql: `COALESCE(${identifier(column, 'agent column')}, ?) NOT IN (SELECT agent_id FROM agent_homes
              WHERE owner IS NOT NULL AND owner <> ? AND lease_until >= ${NOW})`,
      args: [checkKey(defaultAgentId, 'defaultAgentId'), this.#me],
    };
  }

  async home(agentId: string): Promise<Placement> {
    checkKey(agentId, 'agentId');
    if (this.#held.has(agentId)) return HERE;
    // A claim that lost to one not yet committed sees no owner: asked again, it sees the winner.
    for (let attempt = 1; ; attempt += 1) {
      const placement = await this.#takeHome(agentId);
      if (placement.where !== 'nowhere' || attempt === 3) return placement;
    }
  }

  async #takeHome(agentId: string): Promise<Placement> {
    const current = await this.#homeRow(agentId);
    if (current !== undefined && current.owner !== null && current.owner !== this.#me && current.held) {
      return elsewhere(current);
    }
    if (current === undefined) {
      await this.#db.execute(
        'INSERT INTO agent_homes (agent_id) VALUES (?) ON CONFLICT (agent_id) DO NOTHING',
        [agentId],
      );
    }
    const [claimed] = await this.#homes.claim({ where: 'agent_id = ?', args: [agentId] });
    if (claimed !== undefined) {
      if (this.#closed) {
        await this.#homes.complete(agentId, claimed.fence);
      } else {
        this.#held.set(agentId, claimed.fence);
        this.#logger.info({ agentId, instanceId: this.#me }, 'agent home taken');
        return HERE;
      }
    }
    // Another instance took it between the read and the claim.
    const after = await this.#homeRow(agentId);
    if (after?.owner === this.#me && after.held) {
      // Held under this instance id already (a restart within the lease): renewed from now on.
      if (!this.#closed) this.#held.set(agentId, Number(after.fence));
      return HERE;
    }
    return after?.owner ? elsewhere(after) : NOWHERE;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    const held = [...this.#held];
    this.#held.clear();
    try {
      for (const [agentId, fence] of held) await this.#homes.complete(agentId, fence);
      await this.#db.execute('DELETE FROM cluster_handles WHERE instance_id = ?', [this.#me]);
    } catch (error) {
      this.#logger.warn(
        { err: error, errorKind: 'dependency', hint: 'the leases expire on their own within the lease time' },
        'could not give up agent homes and handles at close',
      );
    }
  }

  async #homeRow(agentId: string): Promise<(OwnerRow & { held: boolean }) | undefined> {
    const row = await this.#db.get<OwnerRow & { held: boolean | null }>(
      `SELECT h.owner, h.fence, h.lease_until >= ${NOW} AS held, i.advertise_url, i.lease_until >= ${NOW} AS live
         FROM agent_homes h LEFT JOIN cluster_instances i ON i.instance_id = h.owner
        WHERE h.agent_id = ?`,
      [agentId],
    );
    return row === undefined ? undefined : { ...row, held: row.held === true };
  }

  async #renew(): Promise<void> {
    if (this.#closed || this.#held.size === 0) return;
    for (const [agentId, fence] of [...this.#held]) {
      try {
        if (!(await this.#homes.renew(agentId, fence))) {
          this.#held.delete(agentId);
          this.#logger.warn(
            {
              agentId,
              errorKind: 'dependency',
              hint: 'this instance missed its renewals; the agent is homed where its next call lands',
            },
            'agent home lost',
          );
        }
      } catch (error) {
        if (this.#closed) return;
        this.#logger.warn(
          {
            err: error,
            agentId,
            errorKind: 'dependency',
            hint: 'check that the PostgreSQL server is reachable',
          },
          'renewing an agent home failed',
        );
      }
    }
  }
}

function elsewhere(row: OwnerRow): Placement {
  return { where: 'elsewhere', instanceId: row.owner ?? '', advertiseUrl: row.advertise_url ?? '' };
}
