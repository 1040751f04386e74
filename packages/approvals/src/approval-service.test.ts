import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Coordinator, Database, Dialect } from '@agentd/storage';
import { openTestInstance, testDialects } from '@agentd/storage/testing';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalService, type ApprovalTimers, createApprovalService } from './approval-service.js';
import type { ApprovalsConfigInput } from './config.js';
import { isApprovalsError } from './errors.js';
import type { ApprovalAuditEvent, ApprovalEvent, ApprovalVerdict } from './types.js';

/** A clock and timers the test moves by hand. */
function manualTime(start = 1_000_000) {
  let now = start;
  let seq = 0;
  const due = new Map<number, { at: number; callback: () => void }>();
  const timers: ApprovalTimers = {
    setTimeout(callback, ms) {
      seq += 1;
      due.set(seq, { at: now + ms, callback });
      return seq;
    },
    clearTimeout(handle) {
      due.delete(handle as number);
    },
  };
  return {
    now: () => now,
    timers,
    advance(ms: number) {
      now += ms;
      for (const [id, timer] of [...due].sort((a, b) => a[1].at - b[1].at)) {
        if (timer.at <= now) {
          due.delete(id);
          timer.callback();
        }
      }
    },
  };
}

const dirs: string[] = [];
const dbs: Database[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// The suite runs on each dialect; on PostgreSQL a database per directory, each handle with its
// own cluster coordinator (closed with the handle), as one instance of a cluster.
let dialect: Dialect = 'libsql';
const coordinators = new WeakMap<Database, Coordinator>();

async function openDb(dir?: string): Promise<{ db: Database; dir: string }> {
  const dataDir = dir ?? mkdtempSync(join(tmpdir(), 'approvals-'));
  if (!dir) dirs.push(dataDir);
  const { db, coordinator } = await openTestInstance(dialect, dataDir);
  dbs.push(db);
  if (coordinator !== undefined) coordinators.set(db, coordinator);
  return { db, dir: dataDir };
}

const REQUIRE: ApprovalsConfigInput = { enabled: true, defaultMode: 'require' };

async function setup(config: ApprovalsConfigInput = REQUIRE, db?: Database) {
  const time = manualTime();
  const database = db ?? (await openDb()).db;
  const audits: ApprovalAuditEvent[] = [];
  const events: ApprovalEvent[] = [];
  let next = 0;
  const service = createApprovalService({
    db: database,
    coordinator: coordinators.get(database),
    config,
    audit: { emit: (event) => audits.push(event) },
    now: time.now,
    timers: time.timers,
    ids: () => `apr-${++next}`,
  });
  await service.start();
  service.onEvent((event) => events.push(event));
  return { service, time, audits, events, db: database };
}

const call = (
  toolName = 'shell_run',
  input: unknown = { cmd: 'ls' },
  sessionKey = 's1',
  signal?: AbortSignal,
) => ({
  sessionKey,
  agentId: 'main',
  toolName,
  input,
  ...(signal ? { signal } : {}),
});

/** Lets the service's awaited writes settle. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

async function untilPending(service: ApprovalService, count: number) {
  for (let i = 0; i < 100 && service.pending().length < count; i++) await settle();
  expect(service.pending()).toHaveLength(count);
}

describe.each(testDialects())('approval service on %s', (name) => {
  beforeAll(() => {
    dialect = name;
  });

  it('lets everything through while off, and by rule auto; refuses by rule deny', async () => {
    const off = await setup({});
    expect(await off.service.check(call())).toEqual({ allow: true, via: 'off' });
    const ruled = await setup({
      enabled: true,
      rules: [
        { tool: 'graph_*', mode: 'auto' },
        { tool: 'shell_*', mode: 'deny' },
      ],
    });
    expect(await ruled.service.check(call('graph_list'))).toEqual({ allow: true, via: 'auto' });
    expect(await ruled.service.check(call('shell_run'))).toEqual({
      allow: false,
      via: 'rule',
      reason: 'rule',
    });
    expect(ruled.audits).toEqual([
      expect.objectContaining({
        kind: 'approval',
        classification: 'denied',
        reason: 'rule',
        toolName: 'shell_run',
      }),
    ]);
    expect(ruled.service.pending()).toEqual([]);
  });

  it('waits on a required call until it is approved, persisting and announcing the request', async () => {
    const { service, time, audits, events, db } = await setup();
    let verdict: ApprovalVerdict | undefined;
    const waiting = service
      .check(call('shell_run', { cmd: 'ls', apiKey: 'sk-secret-0123456789abcdef' }))
      .then((v) => {
        verdict = v;
        return v;
      });
    await untilPending(service, 1);
    time.advance(1500);
    const [pending] = service.pending();
    expect(pending).toMatchObject({
      id: 'apr-1',
      sessionKey: 's1',
      agentId: 'main',
      toolName: 'shell_run',
      ageMs: 1500,
      waiting: 1,
    });
    expect(pending?.argsDigest.preview).not.toContain('sk-secret');
    expect(verdict).toBeUndefined();
    const row = await db.get<{ status: string; args_digest: string }>(
      'SELECT * FROM approval_requests WHERE id = ?',
      ['apr-1'],
    );
    expect(row?.status).toBe('pending');
    expect(row?.args_digest).not.toContain('sk-secret');

    const resolution = await service.resolve('apr-1', true, { reason: 'looks fine', resolvedBy: 'alice' });
    expect(resolution).toMatchObject({
      id: 'apr-1',
      approved: true,
      status: 'approved',
      reason: 'looks fine',
      resolvedBy: 'alice',
    });
    expect(await waiting).toEqual({ allow: true, via: 'approved', requestId: 'apr-1' });
    expect(service.pending()).toEqual([]);
    expect(
      (await db.get<{ status: string }>('SELECT status FROM approval_requests WHERE id = ?', ['apr-1']))
        ?.status,
    ).toBe('approved');
    expect(events.map((event) => event.type)).toEqual(['requested', 'resolved']);
    expect(audits.map((event) => [event.classification, event.action])).toEqual([
      ['escalated', 'request'],
      ['allowed', 'resolve'],
    ]);
  });

  it('caches an approval for approvalCacheMs and a denial for denialCacheMs, per session and tool', async () => {
    const { service, time } = await setup({ ...REQUIRE, approvalCacheMs: 30_000, denialCacheMs: 60_000 });
    const first = service.check(call('a'));
    await untilPending(service, 1);
    await service.resolve('apr-1', true);
    await first;
    expect(await service.check(call('a', { other: 1 }))).toEqual({ allow: true, via: 'approval_cache' });
    // Another session is asked anew.
    void service.check(call('a', {}, 's2'));
    await untilPending(service, 1);
    await service.resolve('apr-2', false, { reason: 'no' });
    expect(await service.check(call('a', {}, 's2'))).toEqual({
      allow: false,
      via: 'denial_cache',
      reason: 'no',
    });
    time.advance(30_001);
    void service.check(call('a'));
    await untilPending(service, 1);
    expect(service.pending()[0]?.sessionKey).toBe('s1');
    expect(await service.check(call('a', {}, 's2'))).toMatchObject({ via: 'denial_cache' });
    time.advance(30_000);
    void service.check(call('a', {}, 's2'));
    await untilPending(service, 2);
  });

  it('clearDenialCache and clearSession forget cached decisions', async () => {
    const { service, audits } = await setup();
    void service.check(call('a'));
    await untilPending(service, 1);
    await service.resolve('apr-1', false);
    expect(await service.check(call('a'))).toMatchObject({ via: 'denial_cache' });
    expect(service.clearDenialCache()).toBe(1);
    expect(audits.at(-1)).toMatchObject({ action: 'clear_denial_cache', cleared: 1 });
    void service.check(call('a'));
    await untilPending(service, 1);
    await service.resolve('apr-2', true);
    expect(await service.check(call('a'))).toMatchObject({ via: 'approval_cache' });
    expect(service.clearSession('other')).toBe(0);
    expect(service.clearSession('s1')).toBe(1);
    void service.check(call('a'));
    await untilPending(service, 1);
  });

  it('denies with reason timeout when nobody resolves in timeoutMs', async () => {
    const { service, time, db, events } = await setup({ ...REQUIRE, timeoutMs: 5_000 });
    const waiting = service.check(call());
    await untilPending(service, 1);
    time.advance(4_999);
    expect(service.pending()).toHaveLength(1);
    time.advance(1);
    expect(await waiting).toEqual({ allow: false, via: 'denied', reason: 'timeout', requestId: 'apr-1' });
    await settle();
    const row = await db.get<{ status: string; reason: string; resolved_by: string }>(
      'SELECT status, reason, resolved_by FROM approval_requests',
    );
    expect(row).toEqual({ status: 'denied', reason: 'timeout', resolved_by: 'system' });
    expect(events.at(-1)).toMatchObject({
      type: 'resolved',
      resolution: { reason: 'timeout', approved: false },
    });
    expect(await service.resolve('apr-1', true)).toMatchObject({
      alreadyResolved: true,
      status: 'denied',
      reason: 'timeout',
    });
  });

  it('joins identical requests while one is pending; different arguments make a new one', async () => {
    const { service, events } = await setup();
    const a = service.check(call('t', { x: 1, y: 2 }));
    const b = service.check(call('t', { y: 2, x: 1 }));
    const c = service.check(call('t', { x: 3 }));
    await untilPending(service, 2);
    expect(service.pending().map((p) => p.waiting)).toEqual([2, 1]);
    expect(events.filter((event) => event.type === 'requested')).toHaveLength(2);
    await service.resolve('apr-1', true);
    expect(await a).toMatchObject({ allow: true, requestId: 'apr-1' });
    expect(await b).toMatchObject({ allow: true, requestId: 'apr-1' });
    await service.resolve('apr-2', false);
    expect(await c).toMatchObject({ allow: false, requestId: 'apr-2' });
  });

  it('ends the wait when the turn ends; the request stays pending and a retry joins it', async () => {
    const { service } = await setup();
    const one = new AbortController();
    const two = new AbortController();
    const a = service.check(call('t', {}, 's1', one.signal));
    const b = service.check(call('t', {}, 's1', two.signal));
    await untilPending(service, 1);
    one.abort();
    expect(await a).toMatchObject({ allow: false, reason: 'cancelled', requestId: 'apr-1' });
    expect(service.pending()[0]?.waiting).toBe(1);
    two.abort();
    expect(await b).toMatchObject({ allow: false, reason: 'cancelled' });
    expect(service.pending()).toMatchObject([{ id: 'apr-1', waiting: 0 }]);
    const retry = service.check(call('t', {}, 's1'));
    await settle();
    expect(service.pending()).toMatchObject([{ id: 'apr-1', waiting: 1 }]);
    await service.resolve('apr-1', true);
    expect(await retry).toEqual({ allow: true, via: 'approved', requestId: 'apr-1' });
    // A call whose turn had already ended asks nothing new.
    const ended = new AbortController();
    ended.abort();
    expect(await service.check(call('u', {}, 's1', ended.signal))).toMatchObject({ reason: 'cancelled' });
    expect(service.pending()).toEqual([]);
  });

  it('resolveAll decides every pending request, or one session only', async () => {
    const { service } = await setup();
    const calls = [
      service.check(call('a', {}, 's1')),
      service.check(call('b', {}, 's1')),
      service.check(call('a', {}, 's2')),
    ];
    await untilPending(service, 3);
    expect(await service.resolveAll(false, { sessionKey: 's1', reason: 'bulk' })).toEqual({
      resolved: 2,
      requestIds: ['apr-1', 'apr-2'],
    });
    expect(service.pending().map((p) => p.sessionKey)).toEqual(['s2']);
    expect(await service.resolveAll(true)).toEqual({ resolved: 1, requestIds: ['apr-3'] });
    expect((await Promise.all(calls)).map((verdict) => verdict.allow)).toEqual([false, false, true]);
    expect(await service.resolveAll(true)).toEqual({ resolved: 0, requestIds: [] });
  });

  it('answers a second, racing resolve with the decision that won, and audits the caller', async () => {
    const { service, audits } = await setup();
    void service.check(call());
    await untilPending(service, 1);
    const [won, lost] = await Promise.all([
      service.resolve('apr-1', true, { caller: 'tok-alice' }),
      service.resolve('apr-1', false, { caller: 'tok-bob' }),
    ]);
    expect(won).toMatchObject({ status: 'approved' });
    expect(won.alreadyResolved).toBeUndefined();
    expect(lost).toMatchObject({ status: 'approved', alreadyResolved: true });
    expect(audits.filter((event) => event.action === 'resolve')).toEqual([
      expect.objectContaining({ classification: 'allowed', caller: 'tok-alice' }),
    ]);
  });

  it('deletes decided requests older than 30 days at start, keeping pending and recent ones', async () => {
    const { db, dir } = await openDb();
    const day = 86_400_000;
    const first = await setup(REQUIRE, db);
    void first.service.check(call('old'));
    await untilPending(first.service, 1);
    await first.service.resolve('apr-1', false);
    await first.service.close();
    await db.execute('UPDATE approval_requests SET resolved_at_ms = ?', [Date.now() - 31 * day]);
    await db.close();
    const reopened = (await openDb(dir)).db;
    const second = createApprovalService({
      db: reopened,
      coordinator: coordinators.get(reopened),
      config: REQUIRE,
    });
    await second.start();
    expect(await reopened.query('SELECT id FROM approval_requests')).toEqual([]);
    await second.close();
  });

  it('answers REQUEST_NOT_FOUND for an unknown id', async () => {
    const { service } = await setup();
    const error = await service.resolve('toString', true).catch((caught: unknown) => caught);
    expect(isApprovalsError(error, 'REQUEST_NOT_FOUND')).toBe(true);
  });

  it('keeps a request pending across close, and denies it with reason restart at the next start', async () => {
    const { db, dir } = await openDb();
    const first = await setup(REQUIRE, db);
    const waiting = first.service.check(call());
    await untilPending(first.service, 1);
    await first.service.close();
    expect(await waiting).toMatchObject({ allow: false, reason: 'shutdown' });
    expect(await first.service.check(call())).toMatchObject({ allow: false, reason: 'shutdown' });
    expect((await db.get<{ status: string }>('SELECT status FROM approval_requests'))?.status).toBe(
      'pending',
    );
    await db.close();

    const reopened = (await openDb(dir)).db;
    const audits: ApprovalAuditEvent[] = [];
    const second = createApprovalService({
      db: reopened,
      coordinator: coordinators.get(reopened),
      config: REQUIRE,
      audit: { emit: (e) => audits.push(e) },
    });
    await second.start();
    expect(second.pending()).toEqual([]);
    expect(await second.resolve('apr-1', true)).toMatchObject({
      alreadyResolved: true,
      approved: false,
      reason: 'restart',
      resolvedBy: 'system',
    });
    expect(audits).toEqual([
      expect.objectContaining({ classification: 'denied', reason: 'restart', requestId: 'apr-1' }),
    ]);
    await second.close();
  });

  it('applies a new section live: rules and caches from the next call', async () => {
    const { service } = await setup();
    service.applyConfig({ enabled: true, defaultMode: 'auto', rules: [{ tool: 'x', mode: 'deny' }] });
    expect(await service.check(call('y'))).toEqual({ allow: true, via: 'auto' });
    expect(await service.check(call('x'))).toMatchObject({ allow: false, via: 'rule' });
    expect(() => service.applyConfig({ timeoutMs: -1 })).toThrow(/approvals.timeoutMs/);
    expect(service.config.defaultMode).toBe('auto');
  });
});
