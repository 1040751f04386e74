import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '@agentd/test-support';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../database.js';
import { isStorageError } from '../errors.js';
import { freshPgDatabaseUrl, pgSuitesEnabled, testInstances } from '../testing.js';
import { type Coordinator, type KeyedLock, keyedLock, openCoordination } from './index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `count` tasks of one key on each lock at once; answers each task's [start, end]. */
async function contend(locks: KeyedLock[], key: string, count: number): Promise<Array<[number, number]>> {
  const intervals: Array<[number, number]> = [];
  await Promise.all(
    locks.flatMap((lock) =>
      Array.from({ length: count }, () =>
        lock.run(key, async () => {
          const start = performance.now();
          await sleep(2);
          intervals.push([start, performance.now()]);
        }),
      ),
    ),
  );
  return intervals.sort((a, b) => a[0] - b[0]);
}

function overlaps(intervals: Array<[number, number]>): number {
  return intervals.filter(
    (interval, index) => index > 0 && interval[0] < (intervals[index - 1] as [number, number])[1],
  ).length;
}

describe('keyedLock on libsql (in process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentd-keyed-lock-'));
  let db: Database;
  let coordinator: Coordinator;
  beforeAll(async () => {
    db = await openDatabase({ url: `file:${join(dir, 'agentd.db')}` });
    coordinator = await openCoordination(db, { instanceId: 'solo' });
    await coordinator.start();
  });
  afterAll(async () => {
    await coordinator.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs one task of a key at a time, with fence 0 and a continuous lease', async () => {
    const lock = keyedLock(coordinator, 'session');
    const intervals = await contend([lock], 's1', 20);
    expect(intervals).toHaveLength(20);
    expect(overlaps(intervals)).toBe(0);
    const lease = await lock.run('s1', (held) => held);
    expect(lease).toMatchObject({ key: 's1', fence: 0, continuous: true });
    await db.transaction((tx) => lock.guard(tx, 's1'));
  });
});

describe.skipIf(!pgSuitesEnabled())('keyedLock on PostgreSQL', () => {
  let url: string;
  const instances = testInstances();
  const instance = (id: string, leaseMs = 10_000) => instances.open(url, id, { coordination: { leaseMs } });
  beforeAll(async () => {
    url = await freshPgDatabaseUrl('agentd_keyed_lock');
  });
  afterEach(async () => {
    await instances.closeAll();
  });

  it('serialises 3 instances × 20 concurrent tasks of one key, and leaves other keys free', async () => {
    const instances = await Promise.all(['a', 'b', 'c'].map((id) => instance(id)));
    const locks = instances.map(({ coordinator }) => keyedLock(coordinator, 'session', { retryMs: 200 }));
    const [intervals, other] = await Promise.all([contend(locks, 'shared', 20), contend(locks, 'other', 2)]);
    expect(intervals).toHaveLength(60);
    expect(overlaps(intervals)).toBe(0);
    expect(other).toHaveLength(6);
    expect(overlaps(other)).toBe(0);
  });

  it('says whether another instance held the key in between', async () => {
    const [a, b] = await Promise.all([instance('a'), instance('b')]);
    const lockA = keyedLock(a.coordinator, 'session');
    const lockB = keyedLock(b.coordinator, 'session');
    const first = await lockA.run('k', (lease) => lease);
    const again = await lockA.run('k', (lease) => lease);
    expect(again.continuous).toBe(true);
    expect(again.fence).toBe(first.fence + 1);
    expect((await lockB.run('k', (lease) => lease)).continuous).toBe(false);
    expect((await lockA.run('k', (lease) => lease)).continuous).toBe(false);
  });

  it('tells a holder that lost its lease, and refuses its fenced writes', async () => {
    const [a, b] = await Promise.all([instance('a', 1000), instance('b', 1000)]);
    await a.db.execute('CREATE TABLE notes (id TEXT PRIMARY KEY)');
    const lockA = keyedLock(a.coordinator, 'session', { renewEveryMs: 50 });
    const lockB = keyedLock(b.coordinator, 'session', { retryMs: 50 });
    let outcome: unknown;
    const running = lockA.run('k', async (lease) => {
      await a.db.transaction(async (tx) => {
        await lockA.guard(tx, 'k');
        await tx.execute("INSERT INTO notes (id) VALUES ('before')");
      });
      // As if this instance stalled past its lease: the row expires and B takes the key.
      await a.db.execute("UPDATE cluster_singletons SET lease_until = 0 WHERE name = 'session:k'");
      await lockB.run('k', async () => undefined);
      await eventually(() => (lease.lost.aborted ? true : undefined));
      outcome = await a.db
        .transaction(async (tx) => {
          await lockA.guard(tx, 'k');
          await tx.execute("INSERT INTO notes (id) VALUES ('after')");
        })
        .then(
          () => 'written',
          (error: unknown) => error,
        );
    });
    await running;
    expect(isStorageError(outcome, 'LEASE_LOST')).toBe(true);
    expect((await a.db.query<{ id: string }>('SELECT id FROM notes')).map((row) => row.id)).toEqual([
      'before',
    ]);
  });
});
