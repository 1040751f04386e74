import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Coordinator,
  type Database,
  isStorageError,
  openCoordination,
  openDatabase,
} from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled } from '@agentd/storage/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { cronWakegateMigrationSet, cronWakegateMigrations, MIGRATION_PACKAGE } from './migrations.js';

// A fire in cluster mode is a compare-and-set on the due time: every instance that saw the
// same due time tries, one wins and writes the run row. These tests drive the schema and the
// primitive on both dialects; cluster-service.test.ts drives the service that uses them.
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const INTERVAL = 1000;
const START = 1_764_000_000_000;

async function addJob(db: Database): Promise<void> {
  await db.execute(
    `INSERT INTO cron_jobs (id, name, agent_id, message, schedule, schedule_kind, enabled, next_run_at_ms,
       created_at_ms, updated_at_ms) VALUES ('j1', 'every second', 'a', 'tick', '1s', 'interval', 1, ?, ?, ?)`,
    [START, START, START],
  );
}

// One instance's attempt at the job's current slot: read the due time, try the CAS, and
// record the run only when it won.
async function tryFire(db: Database, coordinator: Coordinator, slot: number): Promise<boolean> {
  const due = START + slot * INTERVAL;
  const fence = await coordinator.casDue({
    table: 'cron_jobs',
    dueColumn: 'next_run_at_ms',
    id: 'j1',
    due,
    next: due + INTERVAL,
    where: 'enabled = 1',
  });
  if (fence === undefined) return false;
  await db.execute(
    `INSERT INTO cron_runs (run_id, job_id, job_name, agent_id, ts, scheduled_at_ms, trigger, status, duration_ms)
     VALUES (?, 'j1', 'every second', 'a', ?, ?, 'schedule', 'ok', 0)`,
    [`${coordinator.instanceId}-${slot}`, due, due],
  );
  return true;
}

async function raceSlots(instances: Array<{ db: Database; coordinator: Coordinator }>, slots: number) {
  const winners: number[] = [];
  for (let slot = 0; slot < slots; slot += 1) {
    const won = await Promise.all(instances.map(({ db, coordinator }) => tryFire(db, coordinator, slot)));
    winners.push(won.filter(Boolean).length);
  }
  return winners;
}

describe('cron fire CAS on libsql', () => {
  it('lets one of several concurrent attempts win each slot (the primitive; one process needs no CAS)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentd-cron-cas-'));
    dirs.push(dir);
    const db = await openDatabase({ url: `file:${join(dir, 'agentd.db')}` });
    try {
      // The set's libsql list is the embedded schema.
      expect(cronWakegateMigrationSet.libsql).toBe(cronWakegateMigrations);
      await db.migrate(MIGRATION_PACKAGE, cronWakegateMigrationSet);
      await db.execute('ALTER TABLE cron_jobs ADD COLUMN fence INTEGER NOT NULL DEFAULT 0');
      await addJob(db);
      const coordinator = await openCoordination(db, { instanceId: 'solo' });
      const winners = await raceSlots(
        [1, 2, 3].map(() => ({ db, coordinator })),
        20,
      );
      expect(winners).toEqual(new Array(20).fill(1));
      const runs = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM cron_runs');
      expect(runs?.n).toBe(20);
    } finally {
      await db.close();
    }
  });
});

describe.skipIf(!pgSuitesEnabled())('cron fire CAS on PostgreSQL', () => {
  it('gives each slot exactly one winner among three instances and one run row per (job, scheduled time)', async () => {
    const url = await freshPgDatabaseUrl('agentd_cron');
    const instances = await Promise.all(
      ['a', 'b', 'c'].map(async (id) => {
        const db = await openDatabase({ url, poolMax: 3 });
        const coordinator = await openCoordination(db, { instanceId: id });
        return { db, coordinator };
      }),
    );
    try {
      await instances[0]!.db.migrate(MIGRATION_PACKAGE, cronWakegateMigrationSet);
      // The other instances find the schema applied.
      for (const { db } of instances.slice(1)) {
        expect((await db.migrate(MIGRATION_PACKAGE, cronWakegateMigrationSet)).applied).toEqual([]);
      }
      const db = instances[0]!.db;
      await addJob(db);
      const winners = await raceSlots(instances, 50);
      expect(winners).toEqual(new Array(50).fill(1));
      const slots = await db.query<{ scheduled_at_ms: number }>(
        'SELECT scheduled_at_ms FROM cron_runs ORDER BY scheduled_at_ms',
      );
      expect(slots.map((row) => row.scheduled_at_ms)).toEqual(
        Array.from({ length: 50 }, (_, slot) => START + slot * INTERVAL),
      );
      const job = await db.get<{ next_run_at_ms: number; fence: number }>(
        "SELECT next_run_at_ms, fence FROM cron_jobs WHERE id = 'j1'",
      );
      expect(job).toEqual({ next_run_at_ms: START + 50 * INTERVAL, fence: 50 });
      // A second run row for a slot is refused by the unique (job, scheduled time) index.
      const duplicate = await db
        .execute(
          `INSERT INTO cron_runs (run_id, job_id, job_name, agent_id, ts, scheduled_at_ms, trigger, status, duration_ms)
           VALUES ('dup', 'j1', 'every second', 'a', ?, ?, 'catch-up', 'ok', 0)`,
          [START, START],
        )
        .catch((error: unknown) => error);
      expect(isStorageError(duplicate) && duplicate.code).toBe('CONSTRAINT');
      // Epoch-ms values survive as numbers (BIGINT parsed, not text).
      expect(typeof slots[0]?.scheduled_at_ms).toBe('number');
    } finally {
      for (const { db, coordinator } of instances) {
        await coordinator.close();
        await db.close();
      }
    }
  });

  it('refuses the libsql list on PostgreSQL (the set gives it its own)', async () => {
    const db = await openDatabase({ url: await freshPgDatabaseUrl('agentd_cron') });
    try {
      const refused = await db
        .migrate(MIGRATION_PACKAGE, cronWakegateMigrations)
        .catch((error: unknown) => error);
      expect(isStorageError(refused) && refused.code).toBe('MIGRATION_INVALID');
    } finally {
      await db.close();
    }
  });
});
