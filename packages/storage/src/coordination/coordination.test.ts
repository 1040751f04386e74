import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, recordingLogger } from '@agentd/test-support';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../database.js';
import { freshPgDatabaseUrl, pgSuitesEnabled, testInstances, withDatabase } from '../testing.js';
import { type Coordinator, openCoordination, ownedColumns } from './index.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function createJobs(db: Database, count: number): Promise<void> {
  const idType = db.dialect === 'pg' ? 'BIGINT' : 'INTEGER';
  await db.execute(
    `CREATE TABLE jobs (id ${idType} PRIMARY KEY, status TEXT NOT NULL, result TEXT, ${ownedColumns(db.dialect)})`,
  );
  await db.batch(
    Array.from({ length: count }, (_, index) => ({
      sql: "INSERT INTO jobs (id, status) VALUES (?, 'queued')",
      args: [index + 1],
    })),
  );
}

// Each worker claims one queued job at a time and completes it under its fence, until none is left.
async function drain(coordinator: Coordinator, claimed: number[]): Promise<void> {
  const jobs = coordinator.ownedRows({ table: 'jobs' });
  for (;;) {
    const [claim] = await jobs.claim({ where: "status = 'queued'" });
    if (claim === undefined) return;
    claimed.push(Number(claim.id));
    const done = await jobs.complete(claim.id, claim.fence, {
      set: "status = 'done', result = ?",
      args: ['ok'],
    });
    expect(done).toBe(true);
  }
}

describe('coordination on libsql (in process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentd-coord-'));
  let db: Database;
  let coordinator: Coordinator;
  beforeAll(async () => {
    db = await openDatabase({ url: `file:${join(dir, 'agentd.db')}` });
    coordinator = await openCoordination(db, { instanceId: 'solo', leaseMs: 200 });
    await coordinator.start();
  });
  afterAll(async () => {
    await coordinator.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is single mode: itself as the only member, every singleton held', async () => {
    expect(coordinator.mode).toBe('single');
    expect((await coordinator.instances()).map((instance) => instance.instanceId)).toEqual(['solo']);
    expect(await coordinator.singleton('telegram:bot').acquire()).toBe(1);
  });

  it('claims each row once across concurrent loops and completes under the fence', async () => {
    await createJobs(db, 120);
    const claimed: number[] = [];
    await Promise.all([1, 2, 3].map(() => drain(coordinator, claimed)));
    expect(claimed).toHaveLength(120);
    expect(new Set(claimed).size).toBe(120);
    const stale = await coordinator.ownedRows({ table: 'jobs' }).complete(1, 0, { set: "status = 'stale'" });
    expect(stale).toBe(false);
  });

  it('delivers bus notices in process', async () => {
    const seen: unknown[] = [];
    const stop = coordinator.bus.subscribe('approval', (message) => seen.push(message.payload));
    await coordinator.bus.publish('approval', { id: 'a1' });
    await eventually(() => (seen.length === 1 ? true : undefined));
    expect(seen).toEqual([{ id: 'a1' }]);
    stop();
  });
});

describe.skipIf(!pgSuitesEnabled())('coordination on PostgreSQL', () => {
  let url: string;
  const instances = testInstances();
  const instance = (id: string, options: Parameters<typeof openCoordination>[1] = {}) =>
    instances.open(url, id, { coordination: { leaseMs: 10_000, ...options } });

  beforeAll(async () => {
    url = await freshPgDatabaseUrl();
  });
  afterEach(async () => {
    await instances.closeAll();
    await withDatabase(url, async (db) => {
      await db.execute('DROP TABLE IF EXISTS jobs');
      await db.execute('DELETE FROM cluster_instances');
      await db.execute('DELETE FROM cluster_singletons');
    });
  });

  it('gives 3 workers × 300 rows exactly 300 claims (SKIP LOCKED)', async () => {
    const a = await instance('a');
    const b = await instance('b');
    const c = await instance('c');
    await createJobs(a.db, 300);
    const claimed: number[] = [];
    await Promise.all([a, b, c].map(({ coordinator }) => drain(coordinator, claimed)));
    expect(claimed).toHaveLength(300);
    expect(new Set(claimed).size).toBe(300);
    const done = await a.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM jobs WHERE status = 'done' AND owner IS NULL",
    );
    expect(done?.n).toBe(300);
  });

  it('rejects a stale owner after its lease expired and another took over', async () => {
    const a = await instance('a', { leaseMs: 1000 });
    const b = await instance('b', { leaseMs: 1000 });
    await createJobs(a.db, 1);
    const [first] = await a.coordinator.ownedRows({ table: 'jobs' }).claim({ where: "status = 'queued'" });
    expect(first?.fence).toBe(1);
    expect(await b.coordinator.ownedRows({ table: 'jobs' }).claim({ where: "status = 'queued'" })).toEqual(
      [],
    );
    await sleep(1300);
    const [second] = await b.coordinator.ownedRows({ table: 'jobs' }).claim({ where: "status = 'queued'" });
    expect(second?.fence).toBe(2);
    const aJobs = a.coordinator.ownedRows({ table: 'jobs' });
    expect(await aJobs.renew(first!.id, first!.fence)).toBe(false);
    expect(await aJobs.complete(first!.id, first!.fence, { set: "status = 'zombie'" })).toBe(false);
    expect(
      await b.coordinator
        .ownedRows({ table: 'jobs' })
        .complete(second!.id, second!.fence, { set: "status = 'done'" }),
    ).toBe(true);
    expect((await a.db.get<{ status: string }>('SELECT status FROM jobs WHERE id = 1'))?.status).toBe('done');
  });

  it('sweeps expired leases so another instance takes the rows over', async () => {
    // Heartbeats far apart, so only the sweep called here releases the rows.
    const a = await instance('a', { leaseMs: 1000, heartbeatMs: 3_600_000 });
    const b = await instance('b', { leaseMs: 1000, heartbeatMs: 3_600_000 });
    await createJobs(a.db, 2);
    const aJobs = a.coordinator.ownedRows({ table: 'jobs' });
    const taken = await aJobs.claim({ where: "status = 'queued'", limit: 2 });
    expect(taken).toHaveLength(2);
    await sleep(1300);
    const swept = await b.coordinator.ownedRows({ table: 'jobs' }).sweep();
    expect(swept.map(Number).sort()).toEqual([1, 2]);
    // Released rows carry no owner, so the old owner's fenced writes fail from here on.
    expect(await aJobs.renew(taken[1]!.id, taken[1]!.fence)).toBe(false);
    const retaken = await b.coordinator
      .ownedRows({ table: 'jobs' })
      .claim({ where: "status = 'queued'", limit: 5 });
    expect(retaken.map((claim) => [Number(claim.id), claim.fence])).toEqual([
      [1, 2],
      [2, 2],
    ]);
  });

  it('sweeps on its own timer every heartbeat', async () => {
    const a = await instance('a', { leaseMs: 1000, heartbeatMs: 3_600_000 });
    const b = await instance('b', { leaseMs: 1000, heartbeatMs: 50 });
    await createJobs(a.db, 1);
    await a.coordinator.ownedRows({ table: 'jobs' }).claim();
    // b sweeps tables it registered: registering is asking for its owned-rows helpers.
    b.coordinator.ownedRows({ table: 'jobs' });
    await eventually(async () => {
      const row = await a.db.get<{ owner: string | null }>('SELECT owner FROM jobs WHERE id = 1');
      return row?.owner === null ? true : undefined;
    }, 5000);
  });

  it('keeps one live owner per singleton, and a new fence after takeover', async () => {
    const a = await instance('a', { leaseMs: 1000 });
    const b = await instance('b', { leaseMs: 1000 });
    const aBot = a.coordinator.singleton('telegram:bot1');
    const bBot = b.coordinator.singleton('telegram:bot1');
    expect(await aBot.acquire()).toBe(1);
    expect(await aBot.acquire()).toBe(1);
    expect(await bBot.acquire()).toBeUndefined();
    await sleep(1300);
    expect(await bBot.acquire()).toBe(2);
    expect(await aBot.acquire()).toBeUndefined();
    await bBot.release();
    expect(await aBot.acquire()).toBe(3);
  });

  it("answers another instance's acquire while the holder's guarded write is still open, without waiting for it", async () => {
    const a = await instance('a');
    const b = await instance('b');
    await createJobs(a.db, 1);
    const aLane = a.coordinator.singleton('lane:busy');
    expect(await aLane.acquire()).toBe(1);
    const term = aLane.heldTerm()!;
    // A's write keeps the singleton row FOR SHARE until its transaction ends, which is only
    // after B's acquire answered (an acquire that waited for the row lock would never answer).
    await a.db.transaction(async (tx) => {
      await tx.execute(`UPDATE jobs SET result = 'a' WHERE id = 1 AND ${term.sql}`, term.args);
      expect(await b.coordinator.singleton('lane:busy').acquire()).toBeUndefined();
    });
    expect(await aLane.acquire()).toBe(1);
  }, 10_000);

  it("refuses a stalled holder's write guarded by heldTerm once another instance took the singleton", async () => {
    const a = await instance('a', { leaseMs: 1000 });
    const b = await instance('b', { leaseMs: 1000 });
    await createJobs(a.db, 1);
    const guarded = async (holder: Coordinator, singleton: ReturnType<Coordinator['singleton']>) => {
      const term = singleton.heldTerm();
      if (term === undefined) return 0;
      const db = holder === a.coordinator ? a.db : b.db;
      const result = await db.execute(`UPDATE jobs SET result = ? WHERE id = 1 AND ${term.sql}`, [
        holder.instanceId,
        ...term.args,
      ]);
      return result.rowsAffected;
    };
    const aLane = a.coordinator.singleton('lane:1');
    const bLane = b.coordinator.singleton('lane:1');
    expect(aLane.heldTerm()).toBeUndefined();
    expect(await aLane.acquire()).toBe(1);
    expect(await guarded(a.coordinator, aLane)).toBe(1);
    // A stalls past its lease; B takes the singleton over: A's late write matches nothing.
    await sleep(1300);
    expect(await bLane.acquire()).toBe(2);
    expect(await guarded(a.coordinator, aLane)).toBe(0);
    expect(await guarded(b.coordinator, bLane)).toBe(1);
    const row = await a.db.get<{ result: string }>('SELECT result FROM jobs WHERE id = 1');
    expect(row?.result).toBe('b');
  });

  it('lists live members, refuses a duplicate id and a differing config, and forgets one that left', async () => {
    const a = await instance('a', {
      advertiseUrl: 'http://10.0.0.1:7777',
      configSections: { agents: 'h1', cron: 'h2' },
    });
    await instance('b', { configSections: { agents: 'h1', cron: 'h2' } });
    expect((await a.coordinator.instances()).map((member) => member.instanceId)).toEqual(['a', 'b']);
    expect((await a.coordinator.instances())[0]?.advertiseUrl).toBe('http://10.0.0.1:7777');
    await expect(instance('a', { configSections: { agents: 'h1', cron: 'h2' } })).rejects.toThrow(
      /already uses/,
    );
    await expect(instance('c', { configSections: { agents: 'h1', cron: 'other' } })).rejects.toThrow(
      /in: cron/,
    );
    await a.coordinator.close();
    const db = instances.track(await openDatabase({ url }));
    const members = await db.query<{ instance_id: string }>('SELECT instance_id FROM cluster_instances');
    expect(members.map((row) => row.instance_id)).toEqual(['b']);
  });

  it('joins with allowConfigSkew despite differing hashes, and records a URL advertised later', async () => {
    const a = await instance('a', { configSections: { cron: 'h1' } });
    const b = await instance('b', { configSections: { cron: 'h2' }, allowConfigSkew: true });
    await b.coordinator.advertise('http://127.0.0.1:4567');
    const members = await a.coordinator.instances();
    expect(members.map((member) => [member.instanceId, member.advertiseUrl])).toEqual([
      ['a', ''],
      ['b', 'http://127.0.0.1:4567'],
    ]);
    // b recorded its own hashes: a third instance without the flag is refused against b.
    await expect(instance('c', { configSections: { cron: 'h1' } })).rejects.toThrow(/instance b in: cron/);
  });

  it('wakes a watcher on another instance by NOTIFY, long before its poll', async () => {
    const a = await instance('a');
    const b = await instance('b');
    const seen: unknown[] = [];
    b.coordinator.bus.subscribe('approval', (message) => seen.push([message.from, message.payload]));
    let checks = 0;
    b.coordinator.bus.watch(
      'approval',
      () => {
        checks += 1;
      },
      { pollMs: 3_600_000 },
    );
    await a.coordinator.bus.publish('approval', { id: 'req-1' });
    await eventually(() => (checks >= 1 ? true : undefined), 5000);
    expect(seen).toEqual([['a', { id: 'req-1' }]]);
    // Over the NOTIFY limit: the payload travels through a cluster_events row.
    const big = { text: 'x'.repeat(20_000) };
    await a.db.transaction((tx) => a.coordinator.bus.publish('approval', big, tx));
    await eventually(() => (seen.length === 2 ? true : undefined), 5000);
    expect(seen[1]).toEqual(['a', big]);
  });

  it('still finds changed state by polling when NOTIFY is suppressed', async () => {
    const a = await instance('a', { notify: false });
    const b = await instance('b');
    await a.db.execute('CREATE TABLE IF NOT EXISTS decisions (id TEXT PRIMARY KEY, status TEXT NOT NULL)');
    await a.db.execute("INSERT INTO decisions VALUES ('r1', 'pending')");
    let status = 'pending';
    const notices: unknown[] = [];
    b.coordinator.bus.subscribe('approval', (message) => notices.push(message));
    b.coordinator.bus.watch(
      'approval',
      async () => {
        status = (await b.db.get<{ status: string }>("SELECT status FROM decisions WHERE id = 'r1'"))!.status;
      },
      { pollMs: 100 },
    );
    await a.db.execute("UPDATE decisions SET status = 'approved' WHERE id = 'r1'");
    await a.coordinator.bus.publish('approval', { id: 'r1' });
    await eventually(() => (status === 'approved' ? true : undefined), 5000);
    expect(notices).toEqual([]);
    await a.db.execute('DROP TABLE decisions');
  });

  it('LISTENs again after its connection is killed and re-checks every watcher', async () => {
    const a = await instance('a');
    const logger = recordingLogger();
    const b = await instance('b', { logger });
    let checks = 0;
    b.coordinator.bus.watch(
      'kick',
      () => {
        checks += 1;
      },
      { pollMs: 3_600_000 },
    );
    await a.db.execute(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN agentd' AND pid <> pg_backend_pid()",
    );
    await eventually(() => (checks >= 1 ? true : undefined), 10_000);
    // The first reconnect waits the shared backoff's first delay: 50-100 ms with jitter.
    const lost = logger.entries.find((entry) => entry.message?.includes('listener lost'));
    expect(lost?.fields.retryInMs).toBeGreaterThanOrEqual(50);
    expect(lost?.fields.retryInMs).toBeLessThanOrEqual(100);
    const before = checks;
    await eventually(async () => {
      await a.coordinator.bus.publish('kick', {});
      await sleep(50);
      return checks > before ? true : undefined;
    }, 10_000);
  });
});
