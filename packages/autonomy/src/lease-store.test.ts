import { afterEach, describe, expect, it } from 'vitest';
import { autonomyFixture } from '../test/helpers.js';
import { isAutonomyError } from './errors.js';
import { hashLeaseSecret, LeaseStore } from './lease-store.js';
import { autonomyMigrationSet, MIGRATION_PACKAGE } from './migrations.js';

let fixture: ReturnType<typeof autonomyFixture>;
afterEach(() => fixture.cleanup());

async function store(now: () => number = Date.now) {
  fixture = autonomyFixture();
  const db = await fixture.open();
  await db.migrate(MIGRATION_PACKAGE, autonomyMigrationSet);
  let id = 0;
  return { db, leases: new LeaseStore(db, now, () => `lease-${++id}`) };
}

async function refusal(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(isAutonomyError(error, 'LEASE_INVALID')).toBe(true);
  return String((error as { data: { reason: string } }).data.reason);
}

describe('LeaseStore', () => {
  it('stores only the hash of the secret and validates the secret with its capabilities', async () => {
    const { db, leases } = await store();
    const { lease, secret } = await leases.mint({
      runId: 'r1',
      rootRunId: 'r1',
      agentId: 'a',
      capabilities: ['b', 'a'],
      ttlMs: 60_000,
    });
    expect(lease.capabilities).toEqual(['a', 'b']);
    const rows = await db.query('SELECT * FROM autonomy_leases');
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(rows[0]?.secret_hash).toBe(hashLeaseSecret(secret));
    expect((await leases.validate(secret, 'a')).leaseId).toBe(lease.leaseId);
    expect(await refusal(leases.validate(secret, 'c'))).toBe('capability');
    expect(await refusal(leases.validate('agl_forged'))).toBe('unknown');
  });

  it('refuses a child lease wider than its parent', async () => {
    const { leases } = await store();
    const parent = await leases.mint({
      runId: 'r1',
      rootRunId: 'r1',
      agentId: 'a',
      capabilities: ['a'],
      ttlMs: 60_000,
    });
    const error = await leases
      .mint({
        runId: 'r2',
        rootRunId: 'r1',
        agentId: 'a',
        capabilities: ['a', 'b'],
        ttlMs: 60_000,
        parentLeaseId: parent.lease.leaseId,
      })
      .catch((caught: unknown) => caught);
    expect(isAutonomyError(error, 'INVALID_OPTIONS')).toBe(true);
  });

  it('expires, renews, and revokes through the parent links; a revoked lease cannot be renewed', async () => {
    let clock = 1000;
    const { leases } = await store(() => clock);
    const root = await leases.mint({
      runId: 'r1',
      rootRunId: 'r1',
      agentId: 'a',
      capabilities: ['a', 'b'],
      ttlMs: 100,
    });
    const child = await leases.mint({
      runId: 'r2',
      rootRunId: 'r1',
      agentId: 'a',
      capabilities: ['a'],
      ttlMs: 100,
      parentLeaseId: root.lease.leaseId,
    });
    const grandchild = await leases.mint({
      runId: 'r3',
      rootRunId: 'r1',
      agentId: 'a',
      capabilities: ['a'],
      ttlMs: 100,
      parentLeaseId: child.lease.leaseId,
    });
    const other = await leases.mint({
      runId: 'r4',
      rootRunId: 'r4',
      agentId: 'a',
      capabilities: ['a'],
      ttlMs: 100,
    });
    clock = 1050;
    expect((await leases.renew(root.secret, 500)).expiresAt).toBe(1550);
    clock = 1200;
    expect(await refusal(leases.validate(child.secret))).toBe('expired');
    expect(await refusal(leases.renew(child.secret, 500))).toBe('expired');
    expect((await leases.validate(root.secret)).expiresAt).toBe(1550);

    const revoked = await leases.revoke({ leaseId: child.lease.leaseId });
    expect(revoked.map((lease) => lease.runId).sort()).toEqual(['r2', 'r3']);
    expect(await refusal(leases.validate(grandchild.secret))).toBe('revoked');
    expect((await leases.revoke({ rootRunId: 'r1' })).map((lease) => lease.runId)).toEqual(['r1']);
    expect(await refusal(leases.renew(root.secret, 500))).toBe('revoked');
    expect(await leases.revoke({ leaseId: 'nope' })).toEqual([]);
    clock = 1000;
    expect((await leases.validate(other.secret)).runId).toBe('r4');
  });
});
