import type { CoordinationOptions, Database } from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled, testInstances, withDatabase } from '@agentd/storage/testing';
import { eventually, thrownBy } from '@agentd/test-support';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalService, createApprovalService } from './approval-service.js';
import { isApprovalsError } from './errors.js';
import type { ApprovalVerdict } from './types.js';

const REQUIRE = { enabled: true, defaultMode: 'require' } as const;
// Far longer than any test: a wake-up seen here came from the notice, not from a poll.
const NO_POLL = 3_600_000;

const call = (sessionKey = 's1') => ({
  agentId: 'main',
  sessionKey,
  toolName: 'shell_run',
  input: { cmd: 'ls' },
});

describe('approvals on PostgreSQL without a coordinator', () => {
  it.skipIf(!pgSuitesEnabled())('is refused, naming the option', async () => {
    const caught = await withDatabase(await freshPgDatabaseUrl('agentd_approvals'), async (db) =>
      thrownBy<Error>(() => createApprovalService({ db, config: REQUIRE })),
    );
    expect(isApprovalsError(caught, 'INVALID_OPTIONS')).toBe(true);
    expect(String(caught.message)).toContain('coordinator');
  });
});

// Two (or three) instances, each with its own pool and coordinator, on one PostgreSQL database.
describe.skipIf(!pgSuitesEnabled())('approvals across instances on PostgreSQL', () => {
  let url: string;
  const instances = testInstances();
  beforeAll(async () => {
    url = await freshPgDatabaseUrl('agentd_approvals');
  });
  afterEach(async () => {
    await instances.closeAll();
    await withDatabase(url, (db) => db.execute('DELETE FROM approval_requests'));
  });

  async function instance(
    instanceId: string,
    options: CoordinationOptions = {},
  ): Promise<{ db: Database; service: ApprovalService; leave: () => Promise<void> }> {
    const { db, coordinator, track, leave } = await instances.open(url, instanceId, {
      coordination: options,
    });
    // Leaving: the service stops (its rows stay pending) and the instance leaves membership.
    const service = track(createApprovalService({ db, coordinator, config: REQUIRE }));
    await service.start();
    return { db, service, leave };
  }

  async function pendingIn(service: ApprovalService): Promise<string> {
    return eventually(() => service.pending()[0]?.id, 10_000);
  }

  it('releases the call waiting in A when B decides, by the notice; a second resolve answers alreadyResolved', async () => {
    const a = await instance('a', { pollMs: NO_POLL });
    const b = await instance('b', { pollMs: NO_POLL });
    const heardOnB: string[] = [];
    b.service.onEvent((event) =>
      heardOnB.push(
        event.type === 'requested' ? `requested ${event.request.id}` : `resolved ${event.resolution.id}`,
      ),
    );
    let verdict: ApprovalVerdict | undefined;
    void a.service.check(call()).then((value) => {
      verdict = value;
    });
    const id = await pendingIn(a.service);
    // B lists and announces A's request (it heard of it on the bus) and decides it.
    expect(await pendingIn(b.service)).toBe(id);
    expect(heardOnB).toEqual([`requested ${id}`]);
    const won = await b.service.resolve(id, true, { caller: 'tok-bob' });
    expect(won).toMatchObject({ id, status: 'approved' });
    expect(won.alreadyResolved).toBeUndefined();
    expect(heardOnB).toEqual([`requested ${id}`, `resolved ${id}`]);
    expect(await eventually(() => verdict, 10_000)).toEqual({ allow: true, via: 'approved', requestId: id });
    expect(a.service.pending()).toEqual([]);
    expect(await a.service.resolve(id, false)).toMatchObject({ status: 'approved', alreadyResolved: true });
    expect(await b.service.resolve(id, false)).toMatchObject({ status: 'approved', alreadyResolved: true });
    const row = await a.db.get<{ status: string; owner: string }>(
      'SELECT status, owner FROM approval_requests WHERE id = ?',
      [id],
    );
    expect(row).toEqual({ status: 'approved', owner: 'a' });
  });

  it('releases the waiting call by polling when NOTIFY is off', async () => {
    const a = await instance('a', { pollMs: 200, notify: false });
    const b = await instance('b', { pollMs: 200, notify: false });
    let verdict: ApprovalVerdict | undefined;
    void a.service.check(call()).then((value) => {
      verdict = value;
    });
    const id = await pendingIn(a.service);
    expect(await pendingIn(b.service)).toBe(id);
    await b.service.resolve(id, false, { reason: 'not now' });
    expect(await eventually(() => verdict, 10_000)).toEqual({
      allow: false,
      via: 'denied',
      reason: 'not now',
      requestId: id,
    });
  });

  it('lets exactly one of two concurrent decisions on two instances win', async () => {
    const a = await instance('a');
    const b = await instance('b');
    const waiting = a.service.check(call());
    const id = await pendingIn(a.service);
    await pendingIn(b.service);
    const [fromA, fromB] = await Promise.all([a.service.resolve(id, true), b.service.resolve(id, false)]);
    const winners = [fromA, fromB].filter((resolution) => resolution.alreadyResolved === undefined);
    expect(winners).toHaveLength(1);
    expect(fromA.status).toBe(fromB.status);
    expect((await waiting).allow).toBe(fromA.status === 'approved');
  });

  it('does not deny a live instance’s request when a third starts or restarts, only a gone one’s', async () => {
    const a = await instance('a');
    let verdict: ApprovalVerdict | undefined;
    void a.service.check(call()).then((value) => {
      verdict = value;
    });
    const id = await pendingIn(a.service);
    const c1 = await instance('c');
    await c1.leave();
    const c2 = await instance('c');
    const status = async () =>
      (await c2.db.get<{ status: string }>('SELECT status FROM approval_requests WHERE id = ?', [id]))
        ?.status;
    expect(await status()).toBe('pending');
    expect(verdict).toBeUndefined();
    await c2.leave();

    // A leaves membership (as a dead instance's lease runs out): the next start denies its request.
    await a.leave();
    const c3 = await instance('c');
    expect(await c3.db.get('SELECT status, reason FROM approval_requests WHERE id = ?', [id])).toEqual({
      status: 'denied',
      reason: 'restart',
    });
  });
});
