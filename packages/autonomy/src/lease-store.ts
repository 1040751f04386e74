import { createHash, randomBytes } from 'node:crypto';
import { type Database, nowMs, type SqlRow } from '@agentd/storage';
import { AutonomyError } from './errors.js';

/** A capability lease as the store shows it: never the secret, never its hash. */
export interface LeaseView {
  leaseId: string;
  runId: string;
  rootRunId: string;
  parentLeaseId: string | undefined;
  agentId: string;
  /** Tool names the holder may call. */
  capabilities: string[];
  createdAt: number;
  expiresAt: number;
  revokedAt: number | undefined;
}

/** What {@link LeaseStore.mint} takes. */
export interface MintLease {
  runId: string;
  rootRunId: string;
  agentId: string;
  capabilities: readonly string[];
  ttlMs: number;
  /** The parent run's lease: the new lease's capabilities must be a subset of its. */
  parentLeaseId?: string | undefined;
}

/** Why a lease was refused (`data.reason` of `LEASE_INVALID`). */
export type LeaseRefusal = 'unknown' | 'revoked' | 'expired' | 'capability';

/** The SHA-256 of a lease secret, as stored. */
export function hashLeaseSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

function toView(row: SqlRow): LeaseView {
  return {
    leaseId: String(row.lease_id),
    runId: String(row.run_id),
    rootRunId: String(row.root_run_id),
    parentLeaseId: row.parent_lease_id === null ? undefined : String(row.parent_lease_id),
    agentId: String(row.agent_id),
    capabilities: JSON.parse(String(row.capabilities)) as string[],
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    revokedAt: row.revoked_at === null ? undefined : Number(row.revoked_at),
  };
}

function refuse(reason: LeaseRefusal, message: string, leaseId?: string): never {
  throw new AutonomyError('LEASE_INVALID', message, { data: { reason, ...(leaseId ? { leaseId } : {}) } });
}

/**
 * Capability leases over libsql. Each run holds one: a random secret (only its SHA-256 is
 * stored), a time to live, a capability set that is a subset of its parent lease's, and the
 * parent link through which a revocation reaches every descendant. `validate` and `renew` are
 * what a lease-authenticated surface (the capability socket's `tool.invoke`) calls with the
 * secret the holder presents.
 */
export class LeaseStore {
  readonly #db: Database;
  readonly #now: () => number;
  readonly #newId: () => string;

  constructor(db: Database, now: () => number, newId: () => string) {
    this.#db = db;
    this.#now = now;
    this.#newId = newId;
  }

  /**
   * The time leases are minted, renewed and expired by: on PostgreSQL the database's clock, so
   * every instance of a cluster agrees on when a lease expires; on libsql the service's clock.
   */
  async #clock(): Promise<number> {
    if (this.#db.dialect !== 'pg') return this.#now();
    const row = await this.#db.get<{ now: number }>(`SELECT ${nowMs('pg')} AS now`);
    return Number(row?.now);
  }

  /** Mints a lease; answers its view and the secret (shown once, never stored). */
  async mint(input: MintLease): Promise<{ lease: LeaseView; secret: string }> {
    if (input.parentLeaseId !== undefined) {
      const parent = await this.get(input.parentLeaseId);
      if (!parent) refuse('unknown', `Parent lease not found: ${input.parentLeaseId}`, input.parentLeaseId);
      const wider = input.capabilities.filter((capability) => !parent.capabilities.includes(capability));
      if (wider.length > 0) {
        throw new AutonomyError(
          'INVALID_OPTIONS',
          `capabilities: not held by the parent lease: ${wider.slice(0, 5).join(', ')}`,
          { data: { issues: [{ path: ['capabilities'], message: 'wider than the parent lease' }] } },
        );
      }
    }
    const secret = `agl_${randomBytes(32).toString('base64url')}`;
    const createdAt = await this.#clock();
    const lease: LeaseView = {
      leaseId: this.#newId(),
      runId: input.runId,
      rootRunId: input.rootRunId,
      parentLeaseId: input.parentLeaseId,
      agentId: input.agentId,
      capabilities: [...new Set(input.capabilities)].sort(),
      createdAt,
      expiresAt: createdAt + input.ttlMs,
      revokedAt: undefined,
    };
    await this.#db.execute(
      `INSERT INTO autonomy_leases (lease_id, secret_hash, run_id, root_run_id, parent_lease_id, agent_id,
        capabilities, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        lease.leaseId,
        hashLeaseSecret(secret),
        lease.runId,
        lease.rootRunId,
        lease.parentLeaseId ?? null,
        lease.agentId,
        JSON.stringify(lease.capabilities),
        lease.createdAt,
        lease.expiresAt,
      ],
    );
    return { lease, secret };
  }

  async get(leaseId: string): Promise<LeaseView | undefined> {
    const row = await this.#db.get('SELECT * FROM autonomy_leases WHERE lease_id = ?', [leaseId]);
    return row ? toView(row) : undefined;
  }

  /** Whether a lease (by id) may be used now: exists, not revoked, not expired. */
  async usable(
    leaseId: string,
  ): Promise<{ ok: true; lease: LeaseView } | { ok: false; reason: LeaseRefusal }> {
    const lease = await this.get(leaseId);
    if (!lease) return { ok: false, reason: 'unknown' };
    if (lease.revokedAt !== undefined) return { ok: false, reason: 'revoked' };
    if (lease.expiresAt <= (await this.#clock())) return { ok: false, reason: 'expired' };
    return { ok: true, lease };
  }

  /**
   * Authenticates a presented secret and, when `capability` is given, checks the lease holds it.
   * @throws {AutonomyError} `LEASE_INVALID` with `data.reason` `unknown`, `revoked`, `expired` or `capability`.
   */
  async validate(secret: string, capability?: string): Promise<LeaseView> {
    const row = await this.#db.get('SELECT * FROM autonomy_leases WHERE secret_hash = ?', [
      hashLeaseSecret(secret),
    ]);
    if (!row) refuse('unknown', 'Lease not recognised');
    const lease = toView(row);
    if (lease.revokedAt !== undefined) refuse('revoked', `Lease revoked: ${lease.leaseId}`, lease.leaseId);
    if (lease.expiresAt <= (await this.#clock()))
      refuse('expired', `Lease expired: ${lease.leaseId}`, lease.leaseId);
    if (capability !== undefined && !lease.capabilities.includes(capability)) {
      refuse('capability', `Capability not held by lease ${lease.leaseId}: ${capability}`, lease.leaseId);
    }
    return lease;
  }

  /** Extends a valid lease by `ttlMs` from now; a revoked or expired lease is refused. */
  async renew(secret: string, ttlMs: number): Promise<LeaseView> {
    const lease = await this.validate(secret);
    const expiresAt = (await this.#clock()) + ttlMs;
    const result = await this.#db.execute(
      'UPDATE autonomy_leases SET expires_at = ? WHERE lease_id = ? AND revoked_at IS NULL',
      [expiresAt, lease.leaseId],
    );
    // Revoked between the check and the write: the revocation wins.
    if (result.rowsAffected === 0) refuse('revoked', `Lease revoked: ${lease.leaseId}`, lease.leaseId);
    return { ...lease, expiresAt };
  }

  /**
   * Revokes a lease and every lease below it (through the parent links), or every lease of a
   * run tree. Answers the leases revoked now (already revoked ones are not counted).
   */
  async revoke(target: { leaseId: string } | { rootRunId: string }): Promise<LeaseView[]> {
    const now = await this.#clock();
    const ids =
      'rootRunId' in target
        ? (
            await this.#db.query('SELECT lease_id FROM autonomy_leases WHERE root_run_id = ?', [
              target.rootRunId,
            ])
          ).map((row) => String(row.lease_id))
        : await this.#descendants(target.leaseId);
    const revoked: LeaseView[] = [];
    for (const leaseId of ids) {
      const row = await this.#db.get(
        'UPDATE autonomy_leases SET revoked_at = ? WHERE lease_id = ? AND revoked_at IS NULL RETURNING *',
        [now, leaseId],
      );
      if (row) revoked.push(toView(row));
    }
    return revoked;
  }

  /** The lease and all leases below it, breadth first. */
  async #descendants(leaseId: string): Promise<string[]> {
    if (!(await this.get(leaseId))) return [];
    const found = [leaseId];
    for (let index = 0; index < found.length; index++) {
      const children = await this.#db.query(
        'SELECT lease_id FROM autonomy_leases WHERE parent_lease_id = ?',
        [found[index] ?? ''],
      );
      for (const child of children) found.push(String(child.lease_id));
    }
    return found;
  }
}
