import { readdir, readFile, stat } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { basename, join } from 'node:path';
import { backoffDelay } from '@agentd/async-control';
import { promisify } from 'node:util';
import { gunzip as gunzipCallback } from 'node:zlib';
import type { SessionIndexRecord, TrajectoryRecord } from './records.js';
import {
  ROLL_MARKER_SUFFIX,
  SESSION_INDEX_DIR,
  sessionIndexFileName,
  sessionIndexRecordSchema,
  TRAJECTORY_DIR,
  trajectoryFileName,
  trajectoryRecordSchema,
} from './records.js';
import type { EvidenceRolls } from './writer.js';

const gunzip = promisify(gunzipCallback);
const DAY_MS = 86_400_000;
const DAY_FILE = /^\d{4}-\d{2}-\d{2}\.jsonl$/;
const NEWLINE = 0x0a;

/** What a read of evidence files found. */
export interface FileRead<T> {
  records: T[];
  /** Bytes of evidence text read (after decompressing `.gz` parts). */
  bytesRead: number;
  /** Lines that did not parse against the record schema (skipped). */
  malformed: number;
}

/** Names present in an evidence directory, listed once and reused for many streams. */
export type EvidenceListing = ReadonlySet<string>;

type Validate<T> = (value: unknown) => T | undefined;

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';

async function readOptional(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/**
 * One rolled part `<live>.<n>`, plain or gzipped. A plain part with a `.gz` twin (a crash
 * between writing the twin and removing the plain copy) holds the same text; the plain one is read.
 */
async function readPart(live: string, n: number, listing: EvidenceListing | undefined, name: string) {
  const plain = `${live}.${n}`;
  if (listing) {
    if (listing.has(`${name}.${n}`)) return readOptional(plain);
    if (listing.has(`${name}.${n}.gz`)) {
      const packed = await readOptional(`${plain}.gz`);
      return packed && (await gunzip(packed));
    }
    return undefined;
  }
  const text = await readOptional(plain);
  if (text) return text;
  const packed = await readOptional(`${plain}.gz`);
  return packed && (await gunzip(packed));
}

/**
 * The live file, or its gzipped copy (a past day's session-index file after the start-up
 * sweep; with both present, a crash between gzip and delete left the same text twice).
 */
async function readLive(live: string, name: string, listing: EvidenceListing | undefined) {
  if (!listing || listing.has(name)) {
    const text = await readOptional(live);
    if (text || listing) return text;
  }
  if (listing && !listing.has(`${name}.gz`)) return undefined;
  const packed = await readOptional(`${live}.gz`);
  return packed && (await gunzip(packed));
}

/** Inode of a file, 0 when it is not there. */
const inode = (path: string) =>
  stat(path).then(
    (info) => info.ino,
    (error: unknown) => {
      if (isMissing(error)) return 0;
      throw error;
    },
  );

/**
 * Which files hold the stream right now. The writer rolls by renaming (`.N` to `.N+1` down to
 * live to `.1`) with the marker `<live>.rolling` in place for the whole roll, so a roll that
 * overlaps a read either shows the marker at one of the two checks or changes the inode at
 * `.1` between them; `rolling` says a roll is under way now.
 */
async function generation(live: string): Promise<{ key: string; rolling: boolean }> {
  const [liveIno, partIno, markerIno] = await Promise.all([
    inode(live),
    inode(`${live}.1`),
    inode(`${live}${ROLL_MARKER_SUFFIX}`),
  ]);
  return { key: `${liveIno}:${partIno}`, rolling: markerIno !== 0 };
}

/**
 * How long a read waits out rolls of its stream before it settles for what it read (a roll is
 * a few renames, every 10-50 MB; only a marker left by a crash, until the start-up sweep
 * removes it, would make a read wait this long).
 */
const ROLL_WAIT_MS = 2000;

async function readStreamOnce(
  live: string,
  name: string,
  listing: EvidenceListing | undefined,
): Promise<Buffer[] | undefined> {
  const [liveText, parts] = await Promise.all([
    readLive(live, name, listing),
    (async () => {
      const found: Buffer[] = [];
      for (let n = 1; ; n++) {
        const part = await readPart(live, n, listing, name);
        if (!part) return found;
        found.push(part);
      }
    })(),
  ]);
  if (!liveText && parts.length === 0) return undefined;
  const chunks = parts.reverse();
  if (liveText) chunks.push(liveText);
  return chunks;
}

/**
 * The contents of one evidence stream in write order: its rolled parts oldest first
 * (`.N` … `.1`, each plain or `.gz`), then the live file (plain or `.gz`). Parts are numbered without gaps
 * (the writer shifts them, the start-up sweep closes gaps a crash left), so the parts end at
 * the first missing number. `undefined` when the stream has no file at all.
 *
 * The writer may roll the stream while it is read (a live session in the same daemon): the
 * read is repeated while a roll overlapped it, so no part is read twice or missed. In the
 * writer's process `rolls` (its roll counts) tells this for free; without it the files' inodes
 * and the roll marker are checked before and after. A listing taken before a roll is not
 * trusted for a stream that rolled since.
 */
async function readStream(
  dataDir: string,
  relative: string,
  listing: EvidenceListing | undefined,
  rolls: EvidenceRolls | undefined,
): Promise<Buffer[] | undefined> {
  const live = join(dataDir, relative);
  const name = basename(relative);
  let chunks: Buffer[] | undefined;
  const deadline = Date.now() + ROLL_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    const last = Date.now() >= deadline;
    if (attempt > 0 && !last) await delay(backoffDelay(attempt, { initialMs: 2, maxMs: 50 }));
    if (rolls) {
      // In process: the writer's roll count says whether a roll overlapped, without touching the disk.
      const before = rolls.of(relative);
      if (before % 2 === 1 && !last) continue;
      // A stream that rolled since the process started may have parts a listing taken earlier lacks.
      chunks = await readStreamOnce(live, name, before === 0 ? listing : undefined);
      if (last || rolls.of(relative) === before) break;
      continue;
    }
    const before = await generation(live);
    if (before.rolling && !last) continue;
    const [liveIno, partIno] = before.key.split(':');
    const stale =
      listing !== undefined &&
      ((liveIno !== '0' && !listing.has(name)) || (partIno !== '0' && !listing.has(`${name}.1`)));
    chunks = await readStreamOnce(live, name, stale ? undefined : listing);
    const after = await generation(live);
    if (last || (!after.rolling && after.key === before.key)) break;
  }
  return chunks;
}

function parseLine<T>(line: string, validate: Validate<T>, out: FileRead<T>): void {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    out.malformed += 1;
    return;
  }
  const record = validate(value);
  if (record === undefined) out.malformed += 1;
  else out.records.push(record);
}

/**
 * Parses the lines of `chunks`. With `needle`, only lines containing it are parsed: a
 * cheap pre-filter for lines that can match a field value (the writer serialises with
 * `JSON.stringify`, so `"field":<JSON value>` appears verbatim in every line holding it);
 * callers still check the parsed field, and `malformed` then counts candidate lines only.
 */
function parseChunks<T>(chunks: Buffer[], validate: Validate<T>, needle?: string): FileRead<T> {
  const out: FileRead<T> = { records: [], bytesRead: 0, malformed: 0 };
  const pattern = needle === undefined ? undefined : Buffer.from(needle);
  for (const [position, whole] of chunks.entries()) {
    // The live file may end in a line still being appended: it is not evidence yet.
    const chunk =
      position === chunks.length - 1 && whole.length > 0 && whole[whole.length - 1] !== NEWLINE
        ? whole.subarray(0, whole.lastIndexOf(NEWLINE) + 1)
        : whole;
    out.bytesRead += chunk.length;
    if (!pattern) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.length > 0) parseLine(line, validate, out);
      }
      continue;
    }
    let at = chunk.indexOf(pattern);
    while (at !== -1) {
      const start = chunk.lastIndexOf(NEWLINE, at) + 1;
      let end = chunk.indexOf(NEWLINE, at);
      if (end === -1) end = chunk.length;
      parseLine(chunk.toString('utf8', start, end), validate, out);
      at = chunk.indexOf(pattern, end);
    }
  }
  return out;
}

/** The pre-filter text of a JSON field (see {@link parseChunks}). */
const fieldNeedle = (field: string, value: string) => `"${field}":${JSON.stringify(value)}`;

const validateIndex: Validate<SessionIndexRecord> = (value) => {
  const parsed = sessionIndexRecordSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
};

type ToolCallRecord = Extract<TrajectoryRecord, { type: 'tool_call' }>;

const isInt = (value: unknown): value is number => Number.isSafeInteger(value);
const isNonNegative = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0;

/**
 * The common trajectory line, checked by hand: a `tool_call` record that satisfies
 * `trajectoryRecordSchema` exactly, copied out in the schema's key order without unknown
 * keys (what zod returns). Anything else is `undefined` and goes through zod, so a line the
 * schema rejects is still rejected, and counted, by the schema itself.
 */
function fastToolCall(value: unknown): ToolCallRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if (
    v.type !== 'tool_call' ||
    v.v !== 1 ||
    !isInt(v.ts) ||
    typeof v.sessionKey !== 'string' ||
    typeof v.traceId !== 'string' ||
    typeof v.agentId !== 'string' ||
    !isInt(v.seq) ||
    !isInt(v.step) ||
    typeof v.toolName !== 'string' ||
    typeof v.toolCallId !== 'string' ||
    typeof v.ok !== 'boolean' ||
    !isNonNegative(v.durationMs) ||
    (v.errorKind !== undefined && typeof v.errorKind !== 'string') ||
    (v.errorPreview !== undefined && typeof v.errorPreview !== 'string') ||
    !isInt(v.resultBytes) ||
    v.resultBytes < 0 ||
    typeof v.resultDigest !== 'string'
  )
    return undefined;
  // Built in the schema's key order (the optional keys sit between durationMs and resultBytes).
  const record: Record<string, unknown> = {
    v: 1,
    ts: v.ts,
    sessionKey: v.sessionKey,
    traceId: v.traceId,
    agentId: v.agentId,
    type: 'tool_call',
    seq: v.seq,
    step: v.step,
    toolName: v.toolName,
    toolCallId: v.toolCallId,
    ok: v.ok,
    durationMs: v.durationMs,
  };
  if (v.errorKind !== undefined) record.errorKind = v.errorKind;
  if (v.errorPreview !== undefined) record.errorPreview = v.errorPreview;
  record.resultBytes = v.resultBytes;
  record.resultDigest = v.resultDigest;
  return record as ToolCallRecord;
}

/** Validates one parsed trajectory line; exported for the equivalence tests. */
export const validateTrajectoryLine: Validate<TrajectoryRecord> = (value) => {
  const fast = fastToolCall(value);
  if (fast) return fast;
  const parsed = trajectoryRecordSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
};

/** Lists the names in the session-index directory (day files and their rolled parts). */
export async function listSessionIndexFiles(dataDir: string): Promise<EvidenceListing> {
  return listDir(join(dataDir, SESSION_INDEX_DIR));
}

/** Lists the names in the trajectory directory, for reading many sessions' trajectories. */
export async function listTrajectoryFiles(dataDir: string): Promise<EvidenceListing> {
  return listDir(join(dataDir, TRAJECTORY_DIR));
}

async function listDir(dir: string): Promise<EvidenceListing> {
  try {
    return new Set(await readdir(dir));
  } catch (error) {
    // No directory is no evidence; an unreadable one is an error, never a clean-looking empty report.
    if (isMissing(error)) return new Set();
    throw error;
  }
}

/** The session-index records of a time window, with which day files were read and which were missing. */
export interface SessionIndexRead extends FileRead<SessionIndexRecord> {
  /** Days with a file (live or rolled parts), counted once per day. */
  daysRead: number;
  daysMissing: number;
}

/**
 * Reads the session-index day files covering `[sinceMs, untilMs)`, keeping records in the
 * window, oldest day first and in write order within a day (rolled parts, then the live file).
 */
export async function readSessionIndex(
  dataDir: string,
  window: { sinceMs: number; untilMs: number },
  options: { rolls?: EvidenceRolls | undefined } = {},
): Promise<SessionIndexRead> {
  const out: SessionIndexRead = { records: [], bytesRead: 0, malformed: 0, daysRead: 0, daysMissing: 0 };
  const listing = await listSessionIndexFiles(dataDir);
  const firstDay = Math.floor(window.sinceMs / DAY_MS) * DAY_MS;
  for (let day = firstDay; day < window.untilMs; day += DAY_MS) {
    const chunks = await readStream(
      dataDir,
      join(SESSION_INDEX_DIR, sessionIndexFileName(day)),
      listing,
      options.rolls,
    );
    if (!chunks) {
      out.daysMissing += 1;
      continue;
    }
    const read = parseChunks(chunks, validateIndex);
    out.daysRead += 1;
    out.bytesRead += read.bytesRead;
    out.malformed += read.malformed;
    for (const record of read.records) {
      if (record.ts >= window.sinceMs && record.ts < window.untilMs) out.records.push(record);
    }
  }
  return out;
}

/** Every session-index day present (live file, its `.gz`, or rolled parts), oldest first, as `YYYY-MM-DD.jsonl`. */
export async function listSessionIndexDays(dataDir: string, listing?: EvidenceListing): Promise<string[]> {
  const names = listing ?? (await listSessionIndexFiles(dataDir));
  const days = new Set<string>();
  for (const name of names) {
    const day = name.slice(0, 16);
    if (DAY_FILE.test(day) && (name.length === 16 || /^(\.\d+)?(\.gz)?$/.test(name.slice(16)))) days.add(day);
  }
  return [...days].sort();
}

/** A field pre-filter for {@link readSessionIndexDay}: only lines whose `field` equals `value` can match. */
export interface SessionIndexFilter {
  field: 'sessionKey' | 'traceId';
  value: string;
}

/**
 * Reads one session-index day by name (`YYYY-MM-DD.jsonl`), rolled parts included. With
 * `filter`, lines that cannot hold that field value are skipped unparsed (a superset of the
 * matching lines is returned; check the field). `undefined` when the day has no file.
 */
export async function readSessionIndexDay(
  dataDir: string,
  fileName: string,
  options: { filter?: SessionIndexFilter; listing?: EvidenceListing; rolls?: EvidenceRolls | undefined } = {},
): Promise<FileRead<SessionIndexRecord> | undefined> {
  if (!DAY_FILE.test(fileName)) return undefined;
  const chunks = await readStream(dataDir, join(SESSION_INDEX_DIR, fileName), options.listing, options.rolls);
  if (!chunks) return undefined;
  const { filter } = options;
  return parseChunks(chunks, validateIndex, filter && fieldNeedle(filter.field, filter.value));
}

/**
 * Reads a session's trajectory (rolled parts oldest first, then the live file); `found` is
 * false when there is none. Pass `listing` (from {@link listTrajectoryFiles}) when reading many.
 */
export async function readTrajectory(
  dataDir: string,
  sessionKey: string,
  options: { listing?: EvidenceListing; rolls?: EvidenceRolls | undefined } = {},
): Promise<FileRead<TrajectoryRecord> & { found: boolean; file: string }> {
  const file = join(TRAJECTORY_DIR, trajectoryFileName(sessionKey));
  const chunks = await readStream(dataDir, file, options.listing, options.rolls);
  if (!chunks) return { records: [], bytesRead: 0, malformed: 0, found: false, file };
  const read = parseChunks(chunks, validateTrajectoryLine);
  return {
    ...read,
    found: true,
    file,
    records: read.records.filter((record) => record.sessionKey === sessionKey),
  };
}
