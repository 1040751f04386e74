import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSessionIndexDay, readTrajectory, validateTrajectoryLine } from './readers.js';
import {
  SESSION_INDEX_DIR,
  type SessionIndexRecord,
  sessionIndexFileName,
  TRAJECTORY_DIR,
  type TrajectoryRecord,
  trajectoryFileName,
  trajectoryRecordSchema,
} from './records.js';
import { EvidenceWriter } from './writer.js';

const _DAY_MS = 86_400_000;
const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'obs-files-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const base = (sessionKey: string, turn: number) => ({
  v: 1 as const,
  sessionKey,
  traceId: `trace-${sessionKey}-${turn}`,
  agentId: 'helper',
});

/** One turn's trajectory lines: turn_start, a budget, `calls` tool calls (the second fails), turn_end. */
function turnRecords(sessionKey: string, turn: number, ts: number, calls = 3): TrajectoryRecord[] {
  const b = base(sessionKey, turn);
  const tools: TrajectoryRecord[] = Array.from({ length: calls }, (_, i) => ({
    ...b,
    ts: ts + 10 + i,
    type: 'tool_call' as const,
    seq: i + 1,
    step: 1,
    toolName: ['search', 'fetch', 'shell'][i % 3] as string,
    toolCallId: `call-${turn}-${i}`,
    ok: i !== 1,
    durationMs: 12.5 + i,
    ...(i === 1 ? { errorKind: 'timeout', errorPreview: 'upstream 503' } : {}),
    resultBytes: 100 + i,
    resultDigest: `sha256:${String(turn * 100 + i).padStart(16, '0')}`,
  }));
  const failed = calls > 1 ? 1 : 0;
  return [
    { ...b, ts, type: 'turn_start', origin: 'channel', provider: 'offline', model: 'echo' },
    {
      ...b,
      ts: ts + 5,
      type: 'context_budget',
      step: 1,
      budget: {
        windowTokens: 8000,
        rawContextWindowTokens: 8000,
        windowCapSource: 'none',
        systemTokens: 100,
        freshTailTokens: 300,
        budgetedHistoryTokens: 200,
        keptCount: 4,
        assembledInputTokens: 600,
        outputHeadroom: 1024,
        verdict: 'fits',
      },
    },
    ...tools,
    {
      ...b,
      ts: ts + 100,
      type: 'turn_end',
      endReason: failed ? 'completed_with_tool_errors' : 'completed',
      finishReason: 'stop',
      steps: 2,
      durationMs: 100,
      tokens: { input: 500, output: 60, total: 560, cacheRead: 100, cacheWrite: 0 },
      costUsd: 0.0004,
      toolCalls: { ok: calls - failed, failed },
    },
  ];
}

function indexRecord(sessionKey: string, turn: number, ts: number, calls = 3): SessionIndexRecord {
  const failed = calls > 1 ? 1 : 0;
  return {
    v: 1,
    ts,
    traceId: `trace-${sessionKey}-${turn}`,
    messageId: `${sessionKey}#${turn * 2 - 1}`,
    sessionKey,
    agentId: 'helper',
    channelType: 'webchat',
    origin: 'channel',
    kind: 'main',
    provider: 'offline',
    model: 'echo',
    outcome: {
      endReason: failed ? 'completed_with_tool_errors' : 'completed',
      degraded: failed > 0,
      severity: failed ? 'warning' : 'info',
    },
    finishReason: 'stop',
    costUsd: 0.0004,
    tokens: { input: 500, output: 60, total: 560, cacheRead: 100, cacheWrite: 0 },
    durationMs: 100,
    steps: 2,
    toolCalls: { ok: calls - failed, failed },
    synthetic: false,
    trajectoryFile: `${TRAJECTORY_DIR}/${trajectoryFileName(sessionKey)}`,
  };
}

/** Writes one turn the way the runtime does: its trajectory lines, then its index line. */
async function writeTurn(writer: EvidenceWriter, sessionKey: string, turn: number, ts: number, calls = 3) {
  await Promise.all([
    writer.trajectory(sessionKey, turnRecords(sessionKey, turn, ts, calls)),
    writer.sessionIndex(indexRecord(sessionKey, turn, ts + 100, calls)),
  ]);
}

const jsonOf = (value: unknown) => JSON.stringify(value);

function schemaResult(value: unknown): TrajectoryRecord | undefined {
  const parsed = trajectoryRecordSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

describe('validateTrajectoryLine', () => {
  it('returns what the schema returns for every record type', () => {
    const records = turnRecords('web:chat-1:main', 1, T0);
    expect(new Set(records.map((record) => record.type)).size).toBe(4);
    for (const record of records) {
      const value = JSON.parse(JSON.stringify({ ...record, unknownKey: 'stripped' })) as unknown;
      expect(jsonOf(validateTrajectoryLine(value))).toBe(jsonOf(schemaResult(value)));
      expect(validateTrajectoryLine(value)).not.toHaveProperty('unknownKey');
    }
  });

  it('accepts and rejects every mutation of a tool_call exactly as the schema does', () => {
    const records = turnRecords('web:chat-1:main', 1, T0).filter((record) => record.type === 'tool_call');
    const replacements: unknown[] = [null, 'x', '', -1, 0, -0, 1.5, 2 ** 53, true, false, {}, [], 1];
    let rejected = 0;
    for (const record of records) {
      const keys = [...Object.keys(record), 'errorKind', 'errorPreview'];
      for (const key of keys) {
        const variants: Array<Record<string, unknown>> = replacements.map((replacement) => ({
          ...record,
          [key]: replacement,
        }));
        const without: Record<string, unknown> = { ...record };
        delete without[key];
        variants.push(without);
        for (const variant of variants) {
          const value = JSON.parse(JSON.stringify(variant)) as unknown;
          const expected = schemaResult(value);
          if (!expected) rejected += 1;
          expect(jsonOf(validateTrajectoryLine(value)), `${key}=${JSON.stringify(variant[key])}`).toBe(
            jsonOf(expected),
          );
        }
      }
    }
    // The mutations do exercise rejection, not only acceptance.
    expect(rejected).toBeGreaterThan(100);
  });
});

describe('readTrajectory', () => {
  it('counts a malformed line of each record type as malformed and skips it', async () => {
    const sessionKey = 'web:chat-1:main';
    const good = turnRecords(sessionKey, 1, T0);
    const byType = (type: TrajectoryRecord['type']) =>
      good.find((record) => record.type === type) as Record<string, unknown>;
    const malformed = [
      { ...byType('turn_start'), model: 42 },
      {
        ...byType('context_budget'),
        budget: { ...(byType('context_budget').budget as object), verdict: 'x' },
      },
      { ...byType('tool_call'), ok: 'yes' },
      { ...byType('tool_call'), durationMs: -1 },
      { ...byType('tool_call'), seq: 1.5 },
      { ...byType('turn_end'), endReason: 'exploded' },
      { ...byType('turn_end'), v: 2 },
      { ...byType('tool_call'), type: 'tool_result' },
    ];
    const path = join(dir, TRAJECTORY_DIR, trajectoryFileName(sessionKey));
    mkdirSync(join(dir, TRAJECTORY_DIR), { recursive: true });
    const lines = [
      ...good.map((record) => JSON.stringify(record)),
      ...malformed.map((record) => JSON.stringify(record)),
      '{"v":1,"type":"tool_call"',
      'not json',
      '[]',
      'null',
    ];
    appendFileSync(path, `${lines.join('\n')}\n`);

    const read = await readTrajectory(dir, sessionKey);
    expect(read.found).toBe(true);
    expect(read.malformed).toBe(malformed.length + 4);
    expect(jsonOf(read.records)).toBe(jsonOf(good.map((record) => trajectoryRecordSchema.parse(record))));
  });

  it('answers found false and no records when the session has no trajectory', async () => {
    const read = await readTrajectory(dir, 'web:nobody:main');
    expect(read).toMatchObject({ found: false, records: [], malformed: 0, bytesRead: 0 });
  });
});

describe('readSessionIndexDay', () => {
  it('with a filter parses only the lines holding the value and counts malformed ones among them', async () => {
    const writer = new EvidenceWriter(dir);
    for (let s = 0; s < 20; s++) await writeTurn(writer, `web:chat-${s}:main`, 1, T0 + s * 1000);
    await writeTurn(writer, 'web:chat-1:main', 2, T0 + 50_000);
    const day = sessionIndexFileName(T0);
    // A line that holds the key but breaks the schema, and one that breaks it without the key.
    appendFileSync(
      join(dir, SESSION_INDEX_DIR, day),
      `${JSON.stringify({ ...indexRecord('web:chat-1:main', 3, T0), steps: 'many' })}\n{"broken":\n`,
    );

    const all = await readSessionIndexDay(dir, day);
    expect(all?.records).toHaveLength(21);
    expect(all?.malformed).toBe(2);

    const filtered = await readSessionIndexDay(dir, day, {
      filter: { field: 'sessionKey', value: 'web:chat-1:main' },
    });
    expect(filtered?.records.map((record) => record.traceId)).toEqual([
      'trace-web:chat-1:main-1',
      'trace-web:chat-1:main-2',
    ]);
    expect(filtered?.malformed).toBe(1);
    // A key that is a prefix of another key does not pull in the longer one.
    const prefix = await readSessionIndexDay(dir, day, {
      filter: { field: 'sessionKey', value: 'web:chat-1' },
    });
    expect(prefix?.records).toEqual([]);
  });

  for (const mode of ['on disk', 'by the writer roll counts'] as const)
    it(`never reads a record twice nor misses one while the writer rolls the file under it (checked ${mode})`, async () => {
      const key = 'web:busy:main';
      const writer = new EvidenceWriter(dir, undefined, {
        trajectorySoftCapBytes: 1500,
        rotation: { maxSizeBytes: 52_428_800, maxFiles: 200 },
      });
      let written = 0;
      for (let round = 0; round < 20; round++) {
        const settled = written;
        // Three appends (each may roll the file) race one read.
        const appends = [0, 1, 2].map((i) => writer.trajectory(key, turnRecords(key, round * 3 + i, T0, 2)));
        const read = await readTrajectory(dir, key, mode === 'on disk' ? {} : { rolls: writer.rolls });
        await Promise.all(appends);
        written += 3 * turnRecords(key, 0, T0, 2).length;
        const ids = read.records.map(
          (record) => `${record.traceId}/${record.type}/${'seq' in record ? record.seq : ''}`,
        );
        // No duplicate, and everything settled before the read began is there.
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.length).toBeGreaterThanOrEqual(settled);
        expect(read.malformed).toBe(0);
      }
      expect((await readTrajectory(dir, key)).records).toHaveLength(written);
    });

  it('refuses names that are not day files', async () => {
    expect(await readSessionIndexDay(dir, '../secrets.jsonl')).toBeUndefined();
  });
});
