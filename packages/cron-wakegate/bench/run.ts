/**
 * Scheduler benchmarks, each beside a baseline measured in the same run:
 *
 * 1. Start-up with 10,000 persisted jobs: `createCronService(...).start()` (migrate, load, build
 *    the due heap, arm the timer) against the floor of reading the same rows with one SELECT.
 * 2. Fire lateness with 1,000 jobs due every second and a no-op executor: how long after its
 *    second a job's executor starts, against 1,000 bare `setTimeout`s re-armed for each second.
 * 3. Resident memory per 10,000 loaded jobs (measured in a child process with --expose-gc).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, openDatabase } from '@agentd/storage';
import { printFigure } from '../../../tooling/bench/harness.js';
import {
  type AgentTurnRunner,
  type CronService,
  createCronService,
  cronWakegateMigrations,
  MIGRATION_PACKAGE,
  nextFireAfter,
  type ResolvedSchedule,
} from '../src/index.js';

const JOBS = 10_000;
const DUE_PER_SECOND = 1000;
const SECONDS_PER_ROUND = 5;
const ROUNDS = 2;

const noopRunner: AgentTurnRunner = {
  runTurn: async () => ({
    response: '',
    tokensUsed: { input: 0, output: 0, total: 0 },
    finishReason: 'stop',
    sessionKey: 'bench',
  }),
};

const preciseNow = () => performance.timeOrigin + performance.now();

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Writes `count` jobs straight into cron_jobs in the service's own format, all due in the future. */
async function seed(db: Database, count: number): Promise<void> {
  await db.migrate(MIGRATION_PACKAGE, cronWakegateMigrations);
  const now = Date.now();
  const expressions = ['0 9 * * *', '*/15 * * * *', '30 2 * * 1-5', '0 0 1 * *', '0 */6 * * *'];
  const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'];
  for (let start = 0; start < count; start += 1000) {
    const statements = [];
    for (let index = start; index < Math.min(count, start + 1000); index++) {
      let schedule: ResolvedSchedule;
      if (index % 3 === 0) {
        schedule = {
          kind: 'cron',
          expr: expressions[index % expressions.length]!,
          tz: zones[index % zones.length]!,
        };
      } else if (index % 3 === 1) {
        schedule = { kind: 'interval', everyMs: 60_000 * (1 + (index % 60)), anchorMs: now };
      } else {
        const atMs = now + 86_400_000 + index * 1000;
        schedule = { kind: 'once', atMs, at: new Date(atMs).toISOString() };
      }
      statements.push({
        sql: `INSERT INTO cron_jobs (id, name, agent_id, message, schedule, schedule_kind, enabled, timeout_ms, wake_gate,
                next_run_at_ms, last_run_at_ms, last_error, consecutive_errors, created_at_ms, updated_at_ms)
              VALUES (?, ?, ?, ?, ?, ?, 1, NULL, NULL, ?, NULL, NULL, 0, ?, ?)`,
        args: [
          `job-${index}`,
          `job ${index}`,
          `agent-${index % 20}`,
          `check item ${index}`,
          JSON.stringify(schedule),
          schedule.kind,
          nextFireAfter(schedule, now)!,
          now,
          now,
        ],
      });
    }
    await db.batch(statements);
  }
}

async function startup(dir: string): Promise<void> {
  const seedDb = await openDatabase({ dataDir: dir });
  await seed(seedDb, JOBS);
  await seedDb.close();

  const ours: number[] = [];
  const floor: number[] = [];
  for (let round = 0; round < 5; round++) {
    {
      const began = performance.now();
      const db = await openDatabase({ dataDir: dir });
      const cron = createCronService({ db, runner: noopRunner, workspaceDir: () => dir });
      await cron.start();
      ours.push(performance.now() - began);
      if (cron.list().length !== JOBS) throw new Error('not every job loaded');
      await cron.close();
      await db.close();
    }
    {
      const began = performance.now();
      const db = await openDatabase({ dataDir: dir });
      const rows = await db.query('SELECT * FROM cron_jobs');
      floor.push(performance.now() - began);
      if (rows.length !== JOBS) throw new Error('not every row read');
      await db.close();
    }
  }
  ours.sort((a, b) => a - b);
  floor.sort((a, b) => a - b);
  const ourMedian = percentile(ours, 50);
  const floorMedian = percentile(floor, 50);
  console.log(`\nStart-up with ${JOBS} persisted jobs (median of 5, open database included)`);
  printFigure('baseline: open + SELECT * FROM cron_jobs', floorMedian, 'ms');
  printFigure('createCronService().start()', ourMedian, 'ms', { below: 1000 });
  console.log(`  ratio to baseline ${(ourMedian / floorMedian).toFixed(2)}`);
}

/** Fires of every-second jobs through the service; lateness = executor start minus the second it was due. */
async function serviceLateness(cron: CronService, seconds: number, sink: number[]): Promise<void> {
  // The first second after (re-)enabling warms the JIT and the pattern cache; it is not measured.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  collecting = sink;
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  collecting = undefined;
  await cron.idle();
}

let collecting: number[] | undefined;
const measuringRunner: AgentTurnRunner = {
  runTurn: async () => {
    const at = preciseNow();
    collecting?.push(at - Math.floor(at / 1000) * 1000);
    return noopRunner.runTurn({ message: '' });
  },
};

/** The baseline: one bare setTimeout per job, re-armed for the next whole second each time. */
function timerLateness(count: number, seconds: number, sink: number[]): Promise<void> {
  return new Promise((resolve) => {
    const until = Date.now() + seconds * 1000;
    let live = count;
    const arm = () => {
      const now = Date.now();
      const due = Math.floor(now / 1000) * 1000 + 1000;
      if (due > until) {
        live -= 1;
        if (live === 0) resolve();
        return;
      }
      setTimeout(() => {
        sink.push(preciseNow() - due);
        void noopRunner.runTurn({ message: '' }).then(arm);
      }, due - now);
    };
    for (let index = 0; index < count; index++) arm();
  });
}

async function lateness(dir: string, maxConcurrentRuns: number): Promise<void> {
  const db = await openDatabase({ dataDir: join(dir, `lateness-${maxConcurrentRuns}`) });
  const cron = createCronService({
    db,
    runner: measuringRunner,
    workspaceDir: () => dir,
    defaultTimeZone: 'UTC',
    maxConcurrentRuns,
  });
  await cron.start();
  for (let index = 0; index < DUE_PER_SECOND; index++) {
    // Distinct expressions (all every second; the year range differs) so no job reuses another's next time.
    const expr = `* * * * * * 2026-${2100 + index}`;
    await cron.add({ name: `every-second-${index}`, message: 'm', schedule: { kind: 'cron', expr } });
  }
  await cron.update({ name: 'every-second-0', message: 'warm' });
  const ours: number[] = [];
  const baseline: number[] = [];
  // Alternate so drift on the shared machine hits both alike; the service keeps firing between its windows.
  for (let round = 0; round < ROUNDS; round++) {
    await serviceLateness(cron, SECONDS_PER_ROUND, ours);
    for (let index = 0; index < DUE_PER_SECOND; index++) {
      await cron.update({ name: `every-second-${index}`, enabled: false });
    }
    await cron.idle();
    await timerLateness(DUE_PER_SECOND, SECONDS_PER_ROUND, baseline);
    for (let index = 0; index < DUE_PER_SECOND; index++) {
      await cron.update({ name: `every-second-${index}`, enabled: true });
    }
  }
  await cron.close();
  await db.close();
  ours.sort((a, b) => a - b);
  baseline.sort((a, b) => a - b);
  console.log(
    `\nFire lateness, ${DUE_PER_SECOND} jobs due each second, no-op executor, maxConcurrentRuns ${maxConcurrentRuns}` +
      ` (${ours.length} fires measured; run records written)`,
  );
  printFigure('baseline: bare setTimeout per job, p50', percentile(baseline, 50), 'ms');
  printFigure('baseline: bare setTimeout per job, p99', percentile(baseline, 99), 'ms');
  printFigure('cron service, p50', percentile(ours, 50), 'ms');
  printFigure('cron service, p99', percentile(ours, 99), 'ms', { below: 20 });
  console.log(`  p99 ratio to baseline ${(percentile(ours, 99) / percentile(baseline, 99)).toFixed(2)}`);
}

/** Child-process mode: RSS with no jobs loaded and with 10,000, after a full GC each time. */
async function rssChild(dir: string): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const db = await openDatabase({ dataDir: dir });
  await db.query('SELECT COUNT(*) FROM cron_jobs');
  gc();
  const before = process.memoryUsage();
  const cron = createCronService({ db, runner: noopRunner, workspaceDir: () => dir });
  await cron.start();
  gc();
  const after = process.memoryUsage();
  if (cron.list().length !== JOBS) throw new Error('not every job loaded');
  console.log(JSON.stringify({ rss: after.rss - before.rss, heap: after.heapUsed - before.heapUsed }));
  await cron.close();
  await db.close();
}

async function main(): Promise<void> {
  if (process.argv[2] === '--rss-child') {
    await rssChild(process.argv[3]!);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'agentd-cron-bench-'));
  try {
    await startup(dir);
    const child = spawnSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', import.meta.filename, '--rss-child', dir],
      {
        encoding: 'utf8',
      },
    );
    if (child.status !== 0) throw new Error(`rss child failed: ${child.stderr}`);
    const { rss, heap } = JSON.parse(child.stdout.trim().split('\n').pop()!) as { rss: number; heap: number };
    console.log(`\nMemory per ${JOBS} loaded jobs (after GC)`);
    printFigure('resident set size growth', rss / 1_048_576, 'MiB');
    printFigure('JS heap growth', heap / 1_048_576, 'MiB');
    // The default cap (4 runs at once) queues a burst behind four slots; a cap of 1000 starts it at once.
    await lateness(dir, 4);
    await lateness(dir, 1000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
