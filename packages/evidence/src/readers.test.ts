import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSessionIndexDay, readTrajectory, validateTrajectoryLine } from './readers.js';
import {
  SESSION_INDEX_DIR,
  sessionIndexFileName,
  TRAJECTORY_DIR,
  type TrajectoryRecord,
  trajectoryFileName,
  trajectoryRecordSchema,
} from './records.js';
import { indexRecord, tempDirEachTest, turnRecords, writeTurn } from './testing.js';
import { EvidenceWriter } from './writer.js';

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);

const temp = tempDirEachTest('obs-files-', { beforeEach, afterEach });

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
    const path = join(temp.path, TRAJECTORY_DIR, trajectoryFileName(sessionKey));
    mkdirSync(join(temp.path, TRAJECTORY_DIR), { recursive: true });
    const lines = [
      ...good.map((record) => JSON.stringify(record)),
      ...malformed.map((record) => JSON.stringify(record)),
      '{"v":1,"type":"tool_call"',
      'not json',
      '[]',
      'null',
    ];
    appendFileSync(path, `${lines.join('\n')}\n`);

    const read = await readTrajectory(temp.path, sessionKey);
    expect(read.found).toBe(true);
    expect(read.malformed).toBe(malformed.length + 4);
    expect(jsonOf(read.records)).toBe(jsonOf(good.map((record) => trajectoryRecordSchema.parse(record))));
  });

  it('answers found false and no records when the session has no trajectory', async () => {
    const read = await readTrajectory(temp.path, 'web:nobody:main');
    expect(read).toMatchObject({ found: false, records: [], malformed: 0, bytesRead: 0 });
  });
});

describe('readSessionIndexDay', () => {
  it('with a filter parses only the lines holding the value and counts malformed ones among them', async () => {
    const writer = new EvidenceWriter({ dataDir: temp.path });
    for (let s = 0; s < 20; s++) await writeTurn(writer, `web:chat-${s}:main`, 1, T0 + s * 1000);
    await writeTurn(writer, 'web:chat-1:main', 2, T0 + 50_000);
    const day = sessionIndexFileName(T0);
    // A line that holds the key but breaks the schema, and one that breaks it without the key.
    appendFileSync(
      join(temp.path, SESSION_INDEX_DIR, day),
      `${JSON.stringify({ ...indexRecord('web:chat-1:main', 3, T0), steps: 'many' })}\n{"broken":\n`,
    );

    const all = await readSessionIndexDay(temp.path, day);
    expect(all?.records).toHaveLength(21);
    expect(all?.malformed).toBe(2);

    const filtered = await readSessionIndexDay(temp.path, day, {
      filter: { field: 'sessionKey', value: 'web:chat-1:main' },
    });
    expect(filtered?.records.map((record) => record.traceId)).toEqual([
      'trace-web:chat-1:main-1',
      'trace-web:chat-1:main-2',
    ]);
    expect(filtered?.malformed).toBe(1);
    // A key that is a prefix of another key does not pull in the longer one.
    const prefix = await readSessionIndexDay(temp.path, day, {
      filter: { field: 'sessionKey', value: 'web:chat-1' },
    });
    expect(prefix?.records).toEqual([]);
  });

  for (const mode of ['on disk', 'by the writer roll counts'] as const)
    it(`never reads a record twice nor misses one while the writer rolls the file under it (checked ${mode})`, async () => {
      const key = 'web:busy:main';
      const writer = new EvidenceWriter({
        dataDir: temp.path,
        trajectorySoftCapBytes: 1500,
        rotation: { maxSizeBytes: 52_428_800, maxFiles: 200 },
      });
      let written = 0;
      for (let round = 0; round < 20; round++) {
        const settled = written;
        // Three appends (each may roll the file) race one read.
        const appends = [0, 1, 2].map((i) => writer.trajectory(key, turnRecords(key, round * 3 + i, T0, 2)));
        const read = await readTrajectory(temp.path, key, mode === 'on disk' ? {} : { rolls: writer.rolls });
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
      expect((await readTrajectory(temp.path, key)).records).toHaveLength(written);
    });

  it('refuses names that are not day files', async () => {
    expect(await readSessionIndexDay(temp.path, '../secrets.jsonl')).toBeUndefined();
  });
});
