/**
 * Report benchmarks, each beside a baseline measured in the same run:
 *
 * 1. `obs.explain` (the service's reader path: trajectory read with schema validation, the
 *    session-index days from the trajectory's oldest record on with lines of other sessions
 *    skipped unparsed, diagnostics query, buildIncidentReport) on a session with 10,000
 *    trajectory records, against reading the same files with readFile and a bare JSON.parse per
 *    line. Measured twice: with only that session on disk, and inside the 10,000-session data
 *    dir (where the two index day files hold 10,250 lines, 250 of them the session's).
 * 2. `obs.fleet.health` over 24 hours with 10,000 sessions (a quarter made tool calls, so
 *    their trajectories are read too), against the same bare read of the same files.
 * 3. The serialized size of the summary-depth report against SUMMARY_REPORT_BYTES.
 *
 * Evidence files hold the sample turns of @agentd/evidence/testing (the tests' turns, here with
 * 37 tool calls a turn in the big session), written with @agentd/evidence's file names and
 * validated against its record schemas before the run, so the readers see exactly what the
 * runtime writes.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  SESSION_INDEX_DIR,
  type SessionIndexRecord,
  sessionIndexFileName,
  sessionIndexRecordSchema,
  TRAJECTORY_DIR,
  type TrajectoryRecord,
  trajectoryFileName,
  trajectoryRecordSchema,
  EvidenceWriter,
  INVALID_EVIDENCE_CATEGORY,
} from '@agentd/evidence';
import { type Database, openDatabase } from '@agentd/storage';
import { indexRecord, turnRecords } from '@agentd/evidence/testing';
import { printFigure } from '../../../tooling/bench/harness.js';
import { createSessionTables } from '../test/session-tables.js';
import {
  createObsEvidence,
  createObsService,
  FLEET_CATEGORIES,
  type ObsEvidence,
  type ObsService,
  SESSION_CATEGORIES,
  SUMMARY_REPORT_BYTES,
} from '../src/index.js';

const HOUR_MS = 3_600_000;
// 18:00 UTC, so the 24-hour window spans two session-index day files.
const NOW = Date.UTC(2025, 0, 15, 18, 0, 0);
const TRAJECTORY_RECORDS = 10_000;
const RECORDS_PER_TURN = 40;
const SESSIONS = 10_000;
const BIG_SESSION = 'telegram:chat-4242:main';

/** One turn of the shared sample evidence with `calls` tool calls, every 9th failing. */
const turn = (sessionKey: string, ts: number, turnNo: number, calls: number) =>
  turnRecords(sessionKey, turnNo, ts, calls, (i) => (turnNo + i) % 9 === 0);

/** Evidence files laid out as the runtime lays them out, validated against its schemas. */
class EvidenceDir {
  readonly index = new Map<string, SessionIndexRecord[]>();
  readonly trajectories = new Map<string, TrajectoryRecord[]>();

  addIndex(record: SessionIndexRecord): void {
    const name = sessionIndexFileName(record.ts);
    this.index.set(name, [...(this.index.get(name) ?? []), record]);
  }

  write(dataDir: string): void {
    mkdirSync(join(dataDir, SESSION_INDEX_DIR), { recursive: true });
    mkdirSync(join(dataDir, TRAJECTORY_DIR), { recursive: true });
    for (const [name, records] of this.index) {
      for (const record of records) sessionIndexRecordSchema.parse(record);
      writeFileSync(join(dataDir, SESSION_INDEX_DIR, name), lines(records));
    }
    for (const [sessionKey, records] of this.trajectories) {
      for (const record of records) trajectoryRecordSchema.parse(record);
      writeFileSync(join(dataDir, TRAJECTORY_DIR, trajectoryFileName(sessionKey)), lines(records));
    }
  }
}

const lines = (records: unknown[]) => `${records.map((record) => JSON.stringify(record)).join('\n')}\n`;

function addBigSession(dir: EvidenceDir): void {
  const turns = TRAJECTORY_RECORDS / RECORDS_PER_TURN;
  const records: TrajectoryRecord[] = [];
  for (let t = 1; t <= turns; t++) {
    // Spread over the last 20 hours, one turn every few minutes.
    const ts = NOW - 20 * HOUR_MS + t * 4 * 60_000;
    const turnLines = turn(BIG_SESSION, ts, t, RECORDS_PER_TURN - 3);
    records.push(...turnLines);
    const end = turnLines.at(-1) as Extract<TrajectoryRecord, { type: 'turn_end' }>;
    dir.addIndex(indexRecord(BIG_SESSION, t, ts + 100, end.toolCalls));
  }
  dir.trajectories.set(BIG_SESSION, records);
}

function addFleet(dir: EvidenceDir): void {
  for (let s = 0; s < SESSIONS; s++) {
    const sessionKey = `web:chat-${s}:main`;
    const ts = NOW - 24 * HOUR_MS + Math.floor(((s + 0.5) * 24 * HOUR_MS) / SESSIONS);
    if (s % 4 === 0) {
      const records = turn(sessionKey, ts - 100, 1, 3);
      const end = records.at(-1) as Extract<TrajectoryRecord, { type: 'turn_end' }>;
      dir.trajectories.set(sessionKey, records);
      dir.addIndex(indexRecord(sessionKey, 1, ts, end.toolCalls));
    } else {
      dir.addIndex(indexRecord(sessionKey, 1, ts, { ok: 0, failed: 0 }));
    }
  }
}

/** A payload each category's schema accepts (the writer stores malformed ones only as evidence:invalid). */
function samplePayload(category: string, i: number): Record<string, unknown> {
  const samples: Record<string, Record<string, unknown>> = {
    'memory:recalled': { lanes: ['fts', 'vector'], finalCount: i % 4, vectorCandidates: 3 },
    'memory:reranked': { fellBack: i % 5 === 0, timedOut: false },
    'voice:turn': {
      provider: 'local',
      keyless: true,
      outcome: i % 6 === 0 ? 'failed' : 'ok',
      errorKind: 'timeout',
    },
    'learning:observed': {
      outcomeResolved: true,
      outcome: 'success',
      sources: ['tool'],
      skillsUsed: 1,
      skillFailures: 0,
      synthesisAbstained: false,
    },
    'orchestrate:run_summary': {
      runId: `run-${i}`,
      exitCode: 0,
      durationMs: 120,
      toolCalls: [{ tool: 'read', capability: 'fs', decision: 'allow', count: 2 }],
      resultRefs: { count: 1, bytes: 512 },
    },
    'tool:breaker': { toolName: 'fetch', event: i % 2 === 0 ? 'opened' : 'closed', seq: 1 + (i % 20) },
    'offload:written': { diskPathRel: `obs/offloads/bench/${i}.json`, bytes: 200_000, resolved: true },
    'terminal.drive_promoted': { taskSent: true },
    'terminal.session_evicted': { reason: 'max_sessions', idleMs: 1000, wasProducing: true },
    config_posture: { servedBelowConfigured: 0 },
    voice_degraded: { errorKind: 'network' },
    'pipeline:authored': {
      action: 'define',
      agentId: 'helper',
      capabilityClass: 'small',
      valid: i % 3 !== 0,
      nodeCount: 3,
    },
    autonomy_denial_breaker: {},
    'learning:lifecycle_swept': { agentId: 'helper', scanned: 10, promoted: 1, demoted: 1, evicted: 0 },
    cron_wake_gate: { jobId: 'job-1', gateOutcome: 'failed-open' },
    pipeline_authoring: { capabilityClass: 'small', invalidReason: 'validation' },
  };
  return samples[category] ?? { count: i };
}

async function seedDiagnostics(evidence: ObsEvidence, fleetRows: number): Promise<void> {
  // Rows that explain reads for the big session, and fleet-category rows over the window.
  for (let i = 0; i < 200; i++) {
    const category = SESSION_CATEGORIES[i % SESSION_CATEGORIES.length] as string;
    evidence.record(category, {
      ...samplePayload(category, i),
      timestamp: NOW - 19 * HOUR_MS + i * 1000,
      sessionKey: BIG_SESSION,
    });
  }
  for (let i = 0; i < fleetRows; i++) {
    const category = FLEET_CATEGORIES[i % FLEET_CATEGORIES.length] as string;
    evidence.record(category, {
      ...samplePayload(category, i),
      timestamp: NOW - 23 * HOUR_MS + i * 60_000,
      sessionKey: `web:chat-${i * 7}:main`,
    });
  }
  await evidence.flush();
  const { counts } = await evidence.diagnostics({ limit: 1 });
  if (counts[INVALID_EVIDENCE_CATEGORY] !== undefined)
    throw new Error(`bench evidence failed its schemas: ${counts[INVALID_EVIDENCE_CATEGORY]} rows`);
}

interface Fixture {
  dataDir: string;
  db: Database;
  evidence: ObsEvidence;
  service: ObsService;
}

async function fixture(name: string, build: (dir: EvidenceDir) => void, fleetRows: number) {
  const dataDir = mkdtempSync(join(tmpdir(), `obs-bench-${name}-`));
  const files = new EvidenceDir();
  build(files);
  files.write(dataDir);
  const db = await openDatabase({ dataDir });
  // The session store's columns the reports read: explain reads index days from the session's creation on.
  await createSessionTables(db);
  await db.execute('INSERT INTO agent_sessions (session_key, created_at, updated_at) VALUES (?, ?, ?)', [
    BIG_SESSION,
    NOW - 20 * HOUR_MS,
    NOW,
  ]);
  const evidence = createObsEvidence({ db, now: () => NOW });
  await evidence.start();
  await seedDiagnostics(evidence, fleetRows);
  // As in the daemon: the runtime's evidence writer lives in the same process (nothing rolled yet).
  const evidenceRolls = new EvidenceWriter({ dataDir: dataDir }).rolls;
  const service = createObsService({ db, dataDir, evidence, evidenceRolls, now: () => NOW });
  return { dataDir, db, evidence, service, files } satisfies Fixture & { files: EvidenceDir };
}

/** The floor: read each file and JSON.parse each line, no schema, no report. */
async function bareRead(paths: string[]): Promise<number> {
  let records = 0;
  for (const path of paths) {
    const text = await readFile(path, 'utf8');
    for (const line of text.split('\n')) {
      if (line.length === 0) continue;
      JSON.parse(line);
      records += 1;
    }
  }
  return records;
}

const bytesOf = (paths: string[]) => paths.reduce((sum, path) => sum + statSync(path).size, 0);

/** Median wall time of `run` over `rounds` after `warmup` unmeasured runs. */
async function median(run: () => Promise<unknown>, rounds: number, warmup: number): Promise<number> {
  for (let i = 0; i < warmup; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)] as number;
}

async function compare(
  title: string,
  subject: () => Promise<unknown>,
  paths: string[],
  rounds: number,
  aimMs: number,
): Promise<void> {
  // Interleaved so drift on the shared machine hits both alike.
  await subject();
  await bareRead(paths);
  let subjectMs = 0;
  let baselineMs = 0;
  const perRound = Math.max(1, Math.floor(rounds / 3));
  for (let r = 0; r < 3; r++) {
    subjectMs += await median(subject, perRound, 1);
    baselineMs += await median(() => bareRead(paths), perRound, 1);
  }
  subjectMs /= 3;
  baselineMs /= 3;
  console.log(`\n${title}`);
  printFigure('files read', paths.length, 'files');
  printFigure('bytes read', bytesOf(paths) / 1024, 'KiB');
  printFigure('report (median)', subjectMs, 'ms', { below: aimMs });
  printFigure('baseline: readFile + JSON.parse per line', baselineMs, 'ms');
  printFigure('ratio report / baseline', subjectMs / baselineMs, 'x');
}

function reportSizes(label: string, summary: unknown, full: unknown): void {
  const summaryBytes = Buffer.byteLength(JSON.stringify(summary));
  const fullBytes = Buffer.byteLength(JSON.stringify(full));
  console.log(`\n${label}`);
  printFigure('summary-depth report', summaryBytes, 'bytes', { below: SUMMARY_REPORT_BYTES + 1 });
  printFigure('full-depth report', fullBytes, 'bytes');
  if (summaryBytes > SUMMARY_REPORT_BYTES)
    console.log(`  summary report is ABOVE the ${SUMMARY_REPORT_BYTES}-byte bound`);
}

async function main(): Promise<void> {
  const fixtures: Fixture[] = [];
  try {
    const generated = performance.now();
    const alone = await fixture('explain', addBigSession, 0);
    fixtures.push(alone);
    const fleet = await fixture(
      'fleet',
      (dir) => {
        addFleet(dir);
        addBigSession(dir);
      },
      1000,
    );
    fixtures.push(fleet);
    console.log(
      `generated: ${TRAJECTORY_RECORDS} trajectory records in one session; ${SESSIONS} sessions over 24 h ` +
        `(${SESSIONS / 4} with tool calls) plus that session; 1,200 diagnostic rows ` +
        `(${((performance.now() - generated) / 1000).toFixed(1)} s)`,
    );

    const indexFiles = (f: typeof alone) =>
      [...f.files.index.keys()].sort().map((name) => join(f.dataDir, SESSION_INDEX_DIR, name));
    const trajectoryOf = (f: typeof alone, sessionKey: string) =>
      join(f.dataDir, TRAJECTORY_DIR, trajectoryFileName(sessionKey));

    const explain = (service: ObsService) => () => service.explain({ sessionKey: BIG_SESSION });
    await compare(
      `obs.explain, session with ${TRAJECTORY_RECORDS} trajectory records, alone on disk`,
      explain(alone.service),
      [...indexFiles(alone), trajectoryOf(alone, BIG_SESSION)],
      30,
      50,
    );
    await compare(
      `obs.explain, same session inside the ${SESSIONS}-session data dir (index days pre-filtered)`,
      explain(fleet.service),
      [...indexFiles(fleet), trajectoryOf(fleet, BIG_SESSION)],
      30,
      50,
    );

    const withTools = [...fleet.files.index.values()]
      .flat()
      .filter((record) => record.toolCalls.ok + record.toolCalls.failed > 0)
      .map((record) => record.sessionKey);
    await compare(
      `obs.fleet.health, 24 h, ${SESSIONS + 1} sessions`,
      () => fleet.service.fleetHealth({ sinceHours: 24 }),
      [...indexFiles(fleet), ...[...new Set(withTools)].sort().map((key) => trajectoryOf(fleet, key))],
      9,
      1000,
    );

    reportSizes(
      `IncidentReport size, session with ${TRAJECTORY_RECORDS} trajectory records (bound ${SUMMARY_REPORT_BYTES} bytes)`,
      await alone.service.explain({ sessionKey: BIG_SESSION }),
      await alone.service.explain({ sessionKey: BIG_SESSION, depth: 'full' }),
    );
    const fleetReport = await fleet.service.fleetHealth({ sinceHours: 24 });
    console.log('');
    printFigure('FleetHealthReport size', Buffer.byteLength(JSON.stringify(fleetReport)), 'bytes');
  } finally {
    for (const f of fixtures) {
      await f.evidence.close();
      await f.db.close();
      rmSync(f.dataDir, { recursive: true, force: true });
    }
  }
}

await main();
