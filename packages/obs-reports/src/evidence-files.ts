import { readdir, readFile } from 'node:fs/promises';
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
} from '@agentd/agent-runtime';
import type { z } from 'zod';

const DAY_MS = 86_400_000;
const DAY_FILE = /^\d{4}-\d{2}-\d{2}\.jsonl$/;

/** What a read of evidence files found. */
export interface FileRead<T> {
  records: T[];
  /** Bytes read from disk. */
  bytesRead: number;
  /** Lines that did not parse against the record schema (skipped). */
  malformed: number;
}

async function readLines<S extends z.ZodType>(
  path: string,
  schema: S,
): Promise<FileRead<z.output<S>> | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  const records: Array<z.output<S>> = [];
  let malformed = 0;
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      malformed += 1;
      continue;
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) records.push(parsed.data);
    else malformed += 1;
  }
  return { records, bytesRead: Buffer.byteLength(text), malformed };
}

/** The session-index records of a time window, with which day files were read and which were missing. */
export interface SessionIndexRead extends FileRead<SessionIndexRecord> {
  daysRead: number;
  daysMissing: number;
}

/**
 * Reads the session-index day files covering `[sinceMs, untilMs)`, keeping records in the
 * window, oldest day first and in file order within a day.
 */
export async function readSessionIndex(
  dataDir: string,
  window: { sinceMs: number; untilMs: number },
): Promise<SessionIndexRead> {
  const out: SessionIndexRead = { records: [], bytesRead: 0, malformed: 0, daysRead: 0, daysMissing: 0 };
  const firstDay = Math.floor(window.sinceMs / DAY_MS) * DAY_MS;
  for (let day = firstDay; day < window.untilMs; day += DAY_MS) {
    const read = await readLines(
      join(dataDir, SESSION_INDEX_DIR, sessionIndexFileName(day)),
      sessionIndexRecordSchema,
    );
    if (!read) {
      out.daysMissing += 1;
      continue;
    }
    out.daysRead += 1;
    out.bytesRead += read.bytesRead;
    out.malformed += read.malformed;
    for (const record of read.records) {
      if (record.ts >= window.sinceMs && record.ts < window.untilMs) out.records.push(record);
    }
  }
  return out;
}

/** Every session-index day file present, oldest first. */
export async function listSessionIndexDays(dataDir: string): Promise<string[]> {
  try {
    return (await readdir(join(dataDir, SESSION_INDEX_DIR))).filter((name) => DAY_FILE.test(name)).sort();
  } catch {
    return [];
  }
}

/** Reads one session-index day file by name (`YYYY-MM-DD.jsonl`). */
export async function readSessionIndexDay(
  dataDir: string,
  fileName: string,
): Promise<FileRead<SessionIndexRecord> | undefined> {
  if (!DAY_FILE.test(fileName)) return undefined;
  return readLines(join(dataDir, SESSION_INDEX_DIR, fileName), sessionIndexRecordSchema);
}

/** Reads a session's trajectory file; `found` is false when there is none. */
export async function readTrajectory(
  dataDir: string,
  sessionKey: string,
): Promise<FileRead<TrajectoryRecord> & { found: boolean; file: string }> {
  const file = join(TRAJECTORY_DIR, trajectoryFileName(sessionKey));
  const read = await readLines(join(dataDir, file), trajectoryRecordSchema);
  return read
    ? {
        ...read,
        found: true,
        file,
        records: read.records.filter((record) => record.sessionKey === sessionKey),
      }
    : { records: [], bytesRead: 0, malformed: 0, found: false, file };
}
