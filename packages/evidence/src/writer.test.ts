import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  SESSION_INDEX_DIR,
  type SessionIndexRecord,
  sessionIndexFileName,
  TRAJECTORY_DIR,
  type TrajectoryRecord,
  trajectoryFileName,
} from './records.js';
import { tempDirEachTest, indexRecord as sampleIndexRecord, warningLogger } from './testing.js';
import { EvidenceWriter } from './writer.js';
import { sweepEvidence } from './sweep.js';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

const temp = tempDirEachTest('evidence-', { beforeEach, afterEach });

/** A session-index line of one session whose trace id names the turn. */
function indexRecord(turn: number, ts = T0 + turn): SessionIndexRecord {
  return { ...sampleIndexRecord('web:chat-1:main', turn, ts, 0), traceId: `trace-${turn}` };
}

function toolCalls(sessionKey: string, turn: number, count: number): TrajectoryRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    v: 1 as const,
    ts: T0 + turn * 1000 + i,
    sessionKey,
    traceId: `trace-${turn}`,
    agentId: 'helper',
    type: 'tool_call' as const,
    seq: i + 1,
    step: 1,
    toolName: 'search',
    toolCallId: `call-${turn}-${i}`,
    ok: true,
    durationMs: 3,
    resultBytes: 10,
    resultDigest: 'sha256:0000000000000000',
  }));
}

/** Lines of a stream in write order: parts oldest first (plain or gzipped), then the live file. */
function streamLines(path: string): string[] {
  const names = readdirSync(join(path, '..'));
  const base = path.split('/').at(-1) as string;
  const texts: string[] = [];
  for (let n = 1; ; n++) {
    if (names.includes(`${base}.${n}`)) texts.unshift(readFileSync(`${path}.${n}`, 'utf8'));
    else if (names.includes(`${base}.${n}.gz`))
      texts.unshift(gunzipSync(readFileSync(`${path}.${n}.gz`)).toString('utf8'));
    else break;
  }
  if (names.includes(base)) texts.push(readFileSync(path, 'utf8'));
  return texts.join('').split('\n').filter(Boolean);
}

describe('EvidenceWriter', () => {
  it('takes one options object and refuses one without a data directory', () => {
    expect(() => new EvidenceWriter({} as never)).toThrow(/dataDir/);
    expect(() => new EvidenceWriter({ dataDir: temp.path, trajectorySoftCapBytes: 0 })).toThrow();
    expect(new EvidenceWriter({ dataDir: temp.path, logger: { warn: () => undefined } }).rolls.of('x')).toBe(
      0,
    );
  });

  it('rolls a session-index day file at maxSizeBytes and keeps at most maxFiles parts', async () => {
    const lineBytes = JSON.stringify(indexRecord(10)).length + 1;
    const writer = new EvidenceWriter({
      dataDir: temp.path,
      rotation: { maxSizeBytes: lineBytes * 3, maxFiles: 2 },
    });
    for (let turn = 10; turn < 30; turn++) await writer.sessionIndex(indexRecord(turn));
    const live = join(temp.path, SESSION_INDEX_DIR, sessionIndexFileName(T0));
    const day = sessionIndexFileName(T0);
    expect(readdirSync(join(temp.path, SESSION_INDEX_DIR)).sort()).toEqual([day, `${day}.1`, `${day}.2`]);
    for (const suffix of ['', '.1', '.2']) {
      expect(statSync(`${live}${suffix}`).size).toBeLessThanOrEqual(lineBytes * 3);
    }
    // The newest 20 - 2 * 3 ... lines survive, in write order, ending with the last one.
    const traces = streamLines(live).map((line) => (JSON.parse(line) as SessionIndexRecord).traceId);
    expect(traces).toEqual(
      Array.from({ length: traces.length }, (_, i) => `trace-${30 - traces.length + i}`),
    );
    expect(traces.length).toBe(8);
  });

  it('applies a new rotation at the next write (applyRotation)', async () => {
    const lineBytes = JSON.stringify(indexRecord(10)).length + 1;
    const writer = new EvidenceWriter({
      dataDir: temp.path,
      rotation: { maxSizeBytes: 100_000, maxFiles: 5 },
    });
    for (let turn = 10; turn < 14; turn++) await writer.sessionIndex(indexRecord(turn));
    const day = sessionIndexFileName(T0);
    expect(readdirSync(join(temp.path, SESSION_INDEX_DIR))).toEqual([day]);
    writer.applyRotation({ maxSizeBytes: lineBytes * 2, maxFiles: 1 });
    for (let turn = 14; turn < 20; turn++) await writer.sessionIndex(indexRecord(turn));
    expect(readdirSync(join(temp.path, SESSION_INDEX_DIR)).sort()).toEqual([day, `${day}.1`]);
    expect(() => writer.applyRotation({ maxFiles: -1 })).toThrow();
    // The refused policy left the applied one in force.
    await writer.sessionIndex(indexRecord(20));
    expect(readdirSync(join(temp.path, SESSION_INDEX_DIR)).sort()).toEqual([day, `${day}.1`]);
  });

  it('starts a new file for each UTC day without rolling', async () => {
    const writer = new EvidenceWriter({
      dataDir: temp.path,
      rotation: { maxSizeBytes: 100_000, maxFiles: 2 },
    });
    await writer.sessionIndex(indexRecord(1, T0));
    await writer.sessionIndex(indexRecord(2, T0 + 86_400_000));
    expect(readdirSync(join(temp.path, SESSION_INDEX_DIR)).sort()).toEqual([
      sessionIndexFileName(T0),
      sessionIndexFileName(T0 + 86_400_000),
    ]);
  });

  it('never splits a write and never rolls an empty file', async () => {
    const writer = new EvidenceWriter({ dataDir: temp.path, trajectorySoftCapBytes: 100 });
    await writer.trajectory('web:chat-1:main', toolCalls('web:chat-1:main', 1, 5));
    const path = join(temp.path, TRAJECTORY_DIR, trajectoryFileName('web:chat-1:main'));
    expect(readdirSync(join(temp.path, TRAJECTORY_DIR))).toEqual([trajectoryFileName('web:chat-1:main')]);
    expect(streamLines(path)).toHaveLength(5);
    await writer.trajectory('web:chat-1:main', toolCalls('web:chat-1:main', 2, 2));
    expect(readdirSync(join(temp.path, TRAJECTORY_DIR))).toHaveLength(2);
    expect(readFileSync(path, 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
    expect(readFileSync(`${path}.1`, 'utf8').split('\n').filter(Boolean)).toHaveLength(5);
  });

  it('rolls a trajectory at the soft cap and drops lines past the hard cap with one warning', async () => {
    const sessionKey = 'web:chat-1:main';
    const batch = toolCalls(sessionKey, 1, 4);
    const batchBytes = Buffer.byteLength(`${batch.map((record) => JSON.stringify(record)).join('\n')}\n`);
    const { logger, warnings } = warningLogger();
    const writer = new EvidenceWriter({
      dataDir: temp.path,
      logger: logger,
      rotation: { maxSizeBytes: 1_000_000, maxFiles: 10 },
      trajectorySoftCapBytes: batchBytes * 2,
      trajectoryHardCapBytes: batchBytes * 5 + 10,
    });
    for (let turn = 1; turn <= 9; turn++) await writer.trajectory(sessionKey, toolCalls(sessionKey, turn, 4));
    const path = join(temp.path, TRAJECTORY_DIR, trajectoryFileName(sessionKey));
    const lines = streamLines(path);
    // Five batches fit under the hard cap; the other four were dropped.
    expect(lines).toHaveLength(20);
    expect((JSON.parse(lines.at(-1) as string) as TrajectoryRecord).traceId).toBe('trace-5');
    expect(readdirSync(join(temp.path, TRAJECTORY_DIR)).sort()).toEqual(
      [
        trajectoryFileName(sessionKey),
        `${trajectoryFileName(sessionKey)}.1`,
        `${trajectoryFileName(sessionKey)}.2`,
      ].sort(),
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ errorKind: 'resource', capBytes: batchBytes * 5 + 10 });
    expect(String(warnings[0]?.hint)).toMatch(/hard cap/);
  });

  it('counts gzipped parts at their text size toward the hard cap after a restart', async () => {
    const sessionKey = 'web:chat-2:main';
    const batch = toolCalls(sessionKey, 1, 4);
    const batchBytes = Buffer.byteLength(`${batch.map((record) => JSON.stringify(record)).join('\n')}\n`);
    const options = {
      trajectorySoftCapBytes: batchBytes,
      trajectoryHardCapBytes: batchBytes * 4,
      rotation: { maxSizeBytes: 1_000_000, maxFiles: 10 },
    };
    const first = new EvidenceWriter({ dataDir: temp.path, ...options });
    for (let turn = 1; turn <= 3; turn++) await first.trajectory(sessionKey, toolCalls(sessionKey, turn, 4));
    const swept = await sweepEvidence({ dataDir: temp.path, rotation: { maxFiles: 10, maxAgeDays: 0 } });
    expect(swept.compressed).toHaveLength(2);

    const { logger, warnings } = warningLogger();
    const second = new EvidenceWriter({ dataDir: temp.path, logger: logger, ...options });
    for (let turn = 4; turn <= 6; turn++) await second.trajectory(sessionKey, toolCalls(sessionKey, turn, 4));
    const lines = streamLines(join(temp.path, TRAJECTORY_DIR, trajectoryFileName(sessionKey)));
    expect(lines).toHaveLength(16);
    expect(warnings).toHaveLength(1);
  });
});
