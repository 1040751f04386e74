import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Coordinator, type Database, openDatabase } from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled, testInstances, withDatabase } from '@agentd/storage/testing';
import { eventually } from '@agentd/test-support';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ok, scriptedRunner } from '../test/helpers.js';
import {
  type CronService,
  createCronService,
  createHeartbeatService,
  type HeartbeatService,
} from './index.js';

// The scheduler in cluster mode: several services, each with its own pool and coordinator (its
// own instance id), on one PostgreSQL database, as several daemons would be. The same body runs
// on libsql with the one instance an embedded data directory allows.
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const dialects = [
  {
    name: 'libsql',
    instances: 1,
    url: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'agentd-cron-cluster-'));
      dirs.push(dir);
      return `file:${join(dir, 'agentd.db')}`;
    },
  },
  ...(pgSuitesEnabled() ? [{ name: 'pg', instances: 3, url: () => freshPgDatabaseUrl('agentd_cron') }] : []),
];

interface Instance {
  db: Database;
  coordinator: Coordinator;
  cron: CronService;
  turns: string[];
}
const instances = testInstances();
afterEach(() => instances.closeAll());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Wraps `db` and `coordinator` so that while `paused` every call waits: a stopped process, seen from PostgreSQL. */
function pausable<T extends object>(
  target: T,
  gated: ReadonlySet<string>,
  gate: { wait(): Promise<void> },
): T {
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object) as unknown;
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(object);
      return gated.has(String(property))
        ? async (...args: unknown[]) => {
            await gate.wait();
            return bound(...args);
          }
        : bound;
    },
  });
}

function pauseGate() {
  let resume: (() => void) | undefined;
  let paused: Promise<void> | undefined;
  return {
    pause() {
      paused = new Promise((resolve) => {
        resume = resolve;
      });
    },
    resume() {
      resume?.();
      paused = undefined;
    },
    wait: () => paused ?? Promise.resolve(),
  };
}

async function instance(
  url: string,
  id: string,
  gate?: ReturnType<typeof pauseGate>,
  runLeaseMs = 3000,
  firesHere?: (agentId: string) => boolean,
): Promise<Instance> {
  const { db, coordinator, track } = await instances.open(url, id, {
    coordination: { pollMs: 200, heartbeatMs: 200 },
  });
  const turns: string[] = [];
  const runner = scriptedRunner();
  runner.respond(async (request) => {
    turns.push(`${request.agentId ?? ''}|${request.sessionKey ?? ''}`);
    return ok('done');
  });
  const cron = createCronService({
    db: gate ? pausable(db, new Set(['execute', 'query', 'get', 'batch', 'transaction']), gate) : db,
    coordinator: gate ? pausable(coordinator, new Set(['casDue']), gate) : coordinator,
    runLeaseMs,
    firesHere,
    runner,
    workspaceDir: () => tmpdir(),
    defaultTimeZone: 'UTC',
    runRetentionDays: 0,
  });
  track(cron);
  await cron.start();
  return { db, coordinator, cron, turns };
}

/**
 * Every run row, checked: one per (job, scheduled time), and each job's slots without a gap but
 * the ones the catch-up policy skips (a fire later than the next slot moves past it). Returns
 * how many rows stand for a run that started (not skipped as an overlap).
 */
/**
 * Checks every job's slots (none twice, none missing) and answers how many run rows are turns:
 * `fired`, every row but skips; `completed`, those the closing services did not interrupt (a
 * slot won just before `close()` is recorded interrupted, its turn perhaps never begun).
 */
async function checkSlots(db: Database, jobs: number): Promise<{ fired: number; completed: number }> {
  const rows = await db.query<{
    job_id: string;
    scheduled_at_ms: number;
    ts: number;
    status: string;
    error: string | null;
  }>(
    "SELECT job_id, scheduled_at_ms, ts, status, error FROM cron_runs WHERE trigger IN ('schedule', 'catch-up') ORDER BY job_id, scheduled_at_ms",
  );
  const byJob = new Map<string, typeof rows>();
  for (const row of rows) byJob.set(row.job_id, [...(byJob.get(row.job_id) ?? []), row]);
  expect(byJob.size).toBe(jobs);
  for (const slots of byJob.values()) {
    expect(slots.length).toBeGreaterThanOrEqual(2);
    for (let index = 1; index < slots.length; index += 1) {
      const previous = slots[index - 1]!;
      const gap = Number(slots[index]!.scheduled_at_ms) - Number(previous.scheduled_at_ms);
      expect(gap).toBeGreaterThanOrEqual(1000);
      if (gap > 1000)
        expect(Number(previous.ts)).toBeGreaterThanOrEqual(Number(previous.scheduled_at_ms) + 1000);
    }
  }
  expect(rows.filter((row) => row.status === 'running')).toEqual([]);
  const fired = rows.filter((row) => row.status !== 'skipped');
  const interrupted = fired.filter((row) => row.error?.startsWith('interrupted: the daemon shut down'));
  return { fired: fired.length, completed: fired.length - interrupted.length };
}

/** No instance ran a slot it had not won, and every slot that ran to its end was one turn. */
function expectTurnsOfSlots(turns: number, slots: { fired: number; completed: number }): void {
  expect(turns).toBeLessThanOrEqual(slots.fired);
  expect(turns).toBeGreaterThanOrEqual(slots.completed);
}

describe.each(dialects)('cron fires on $name ($instances instances)', ({ instances: count, url }) => {
  it('fires 50 jobs every second exactly once per (job, scheduled time), no slot missing', async () => {
    const target = await url();
    const instances: Instance[] = [];
    for (const id of ['a', 'b', 'c'].slice(0, count)) instances.push(await instance(target, id));
    await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        instances[n % count]!.cron.add({
          name: `job-${n}`,
          message: 'tick',
          schedule: { kind: 'interval', everyMs: 1000 },
        }),
      ),
    );
    // Every instance knows every job (edits travel on the bus).
    await eventually(() => (instances.every((each) => each.cron.list().length === 50) ? true : undefined));
    await sleep(3300);
    for (const each of instances) await each.cron.close();
    const slots = await checkSlots(instances[0]!.db, 50);
    expectTurnsOfSlots(instances.flatMap((each) => each.turns).length, slots);
  });
});

describe.skipIf(!pgSuitesEnabled())('cron on PostgreSQL with a paused instance', () => {
  it('never fires a slot twice when an instance stopped past its lease resumes', async () => {
    const target = await freshPgDatabaseUrl('agentd_cron');
    const gate = pauseGate();
    const a = await instance(target, 'a', gate, 1000);
    const b = await instance(target, 'b', undefined, 1000);
    const c = await instance(target, 'c', undefined, 1000);
    for (let n = 0; n < 5; n += 1) {
      await b.cron.add({ name: `job-${n}`, message: 'tick', schedule: { kind: 'interval', everyMs: 1000 } });
    }
    await sleep(1500);
    // A stops mid-stream: its timer still fires on stale due times, but nothing reaches the
    // database until it resumes, well past the run lease.
    gate.pause();
    await sleep(2500);
    gate.resume();
    await sleep(1500);
    for (const each of [a, b, c]) await each.cron.close();
    const slots = await checkSlots(b.db, 5);
    expectTurnsOfSlots([a, b, c].flatMap((each) => each.turns).length, slots);
  });
});

describe.skipIf(!pgSuitesEnabled())('heartbeat on PostgreSQL with three instances', () => {
  it('beats periodically on the singleton holder only, carrying texts queued on any instance', async () => {
    const target = await freshPgDatabaseUrl('agentd_cron');
    const messages: string[] = [];
    const services: HeartbeatService[] = [];
    for (const id of ['a', 'b', 'c']) {
      const { db, coordinator, track } = await instances.open(target, id, {
        poolMax: 3,
        coordination: { leaseMs: 1000 },
      });
      const runner = scriptedRunner();
      runner.respond(async (request) => {
        messages.push(request.message);
        return ok('beat');
      });
      const heartbeat = track(
        createHeartbeatService({
          db,
          coordinator,
          runner,
          singletonRenewMs: 200,
          settings: { enabled: true, intervalMs: 1000, coalesceWindowMs: 0 },
        }),
      );
      await heartbeat.start();
      services.push(heartbeat);
    }
    const startedAt = Date.now();
    services[2]!.queueForNextBeat('queued on c');
    // Waited on, not slept on: on a loaded machine the first beat can come late.
    await eventually(async () => (messages.length >= 3 ? true : undefined), 15_000, 50);
    for (const heartbeat of services) await heartbeat.close();
    // One beat an interval among the three (each alone would beat three times an interval).
    const intervals = (Date.now() - startedAt) / 1000;
    expect(messages.length).toBeLessThanOrEqual(Math.floor(intervals) + 1);
    expect(messages.filter((message) => message.includes('- queued on c'))).toHaveLength(1);
    const queued = await withDatabase(target, (db) => db.query('SELECT * FROM heartbeat_queue'));
    expect(queued).toEqual([]);
  });
});

describe.skipIf(!pgSuitesEnabled())('cron edits and records across instances on PostgreSQL', () => {
  it('shows an edit made on one instance on the others, and a forced run in cron.runs everywhere', async () => {
    const target = await freshPgDatabaseUrl('agentd_cron');
    const a = await instance(target, 'a');
    const b = await instance(target, 'b');
    await a.cron.add({ name: 'hourly', message: 'm', schedule: { kind: 'interval', everyMs: 3_600_000 } });
    await eventually(() => (b.cron.list().length === 1 ? true : undefined));
    await b.cron.update({ name: 'hourly', message: 'changed on b' });
    await eventually(() => (a.cron.get('hourly').message === 'changed on b' ? true : undefined));
    // A name is unique across the cluster, whichever instance knew of it first.
    await expect(
      b.cron.add({ name: 'hourly', message: 'x', schedule: { kind: 'interval', everyMs: 60_000 } }),
    ).rejects.toMatchObject({ code: 'JOB_EXISTS' });
    a.cron.runNow('hourly');
    await a.cron.idle();
    const runs = await b.cron.runs({ jobName: 'hourly' });
    expect(runs).toMatchObject([{ trigger: 'force', status: 'ok', jobName: 'hourly' }]);
    await a.cron.remove('hourly');
    await eventually(() => (b.cron.list().length === 0 ? true : undefined));
  });
});

describe.skipIf(!pgSuitesEnabled())('cron on PostgreSQL without a coordinator', () => {
  it('refuses to start rather than fire every job on every instance', async () => {
    const db = await openDatabase({ url: await freshPgDatabaseUrl('agentd_cron'), poolMax: 2 });
    try {
      const runner = scriptedRunner();
      const cron = createCronService({ db, runner, workspaceDir: () => tmpdir() });
      await expect(cron.start()).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
      const heartbeat = createHeartbeatService({ db, runner });
      await expect(heartbeat.start()).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
      await cron.close();
      await heartbeat.close();
    } finally {
      await db.close();
    }
  });
});

describe.skipIf(!pgSuitesEnabled())('cron on PostgreSQL with a homed agent', () => {
  it("fires a homed agent's jobs only on the instance that may (its home), the others anywhere", async () => {
    const target = await freshPgDatabaseUrl('agentd_cron');
    const away = await instance(target, 'a', undefined, 3000, (agentId) => agentId !== 'coder');
    const home = await instance(target, 'b', undefined, 3000, () => true);
    for (const [name, agentId] of [
      ['code', 'coder'],
      ['chat', 'main'],
    ] as const) {
      await away.cron.add({ name, agentId, message: 'tick', schedule: { kind: 'interval', everyMs: 1000 } });
    }
    await eventually(() => (home.cron.list().length === 2 ? true : undefined));
    await sleep(3300);
    for (const each of [away, home]) await each.cron.close();
    const slots = await checkSlots(home.db, 2);
    expectTurnsOfSlots(away.turns.length + home.turns.length, slots);
    expect(away.turns.filter((turn) => turn.startsWith('coder|'))).toEqual([]);
    expect(home.turns.filter((turn) => turn.startsWith('coder|')).length).toBeGreaterThanOrEqual(2);
  });
});
