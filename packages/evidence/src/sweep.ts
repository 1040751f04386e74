import { readdir, rename, rmdir, stat, unlink } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { gzipFile, sweepLogs } from '@agentd/logging';
import { z } from 'zod';
import { EVIDENCE_MAX_PARTS, ROLL_MARKER_SUFFIX, SESSION_INDEX_DIR, TRAJECTORY_DIR } from './records.js';
import { OFFLOAD_DIR } from './offload.js';

const DAY_MS = 86_400_000;
const PART = /^(.+)\.(\d+)(\.gz)?$/;
const DAY_NAME = /^(\d{4}-\d{2}-\d{2})\.jsonl(\.\d+)?(\.gz)?$/;
const LIVE_DAY = /^\d{4}-\d{2}-\d{2}\.jsonl$/;
/** The temporary name `gzipFile` of @agentd/logging writes beside `<file>.gz`. */
const GZIP_TEMP = '.gz.tmp';

/** Options of {@link sweepEvidence}. */
export const sweepEvidenceOptionsSchema = z.object({
  /** The data directory holding `obs/`. */
  dataDir: z.string().min(1),
  /** `observability.logRotation` (its `maxSizeBytes` is the writer's, not the sweep's). */
  rotation: z
    .object({
      /** Rolled parts kept per day file and per session. @default 5 */
      maxFiles: z.number().int().min(0).default(EVIDENCE_MAX_PARTS),
      /** Evidence older than this many days is deleted; 0 disables the age rule. @default 30 */
      maxAgeDays: z.number().min(0).default(30),
      /** Gzip past days' session-index files and every rolled part. @default true */
      compressAged: z.boolean().default(true),
    })
    .default({ maxFiles: EVIDENCE_MAX_PARTS, maxAgeDays: 30, compressAged: true }),
  /** Clock, in epoch milliseconds. @default Date.now */
  now: z.custom<() => number>((value) => typeof value === 'function').optional(),
});

/** Options of {@link sweepEvidence} as accepted (defaults optional). */
export type SweepEvidenceOptions = z.input<typeof sweepEvidenceOptionsSchema>;

/** What {@link sweepEvidence} did. Paths are relative to the data directory. */
export interface EvidenceSweepResult {
  /** Files removed and why (`duplicate`: a plain copy whose `.gz` twin exists; `temporary`: an unfinished gzip). */
  deleted: Array<{ path: string; reason: 'age' | 'count' | 'duplicate' | 'temporary' }>;
  /** Plain files gzipped: `path` became `path + '.gz'`. */
  compressed: string[];
  /** Rolled parts renumbered to close a gap a crash left between two parts. */
  renumbered: Array<{ from: string; to: string }>;
  /** Offload directories removed because they were empty. */
  removedDirs: string[];
  /** Files that could not be handled; the sweep goes on past them. */
  errors: Array<{ path: string; error: unknown }>;
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';

async function namesIn(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name);
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

/**
 * The start-up sweep of the evidence files under `observability.logRotation`; run it before
 * an {@link EvidenceWriter} writes into the same data directory. In order, for
 * `obs/session-index` and `obs/trajectories`:
 *
 * 1. leftovers of an unfinished gzip (`*.gz.tmp`) are deleted, and rolled parts are
 *    renumbered `.1`, `.2`, ... without gaps (a crash while rolling can leave one);
 * 2. age (`maxAgeDays` > 0): a session-index day whose whole UTC day ended more than
 *    `maxAgeDays` ago is deleted with its parts; trajectory files and parts last modified
 *    before that are deleted;
 * 3. rolled parts: a plain part with a `.gz` twin is deleted, each file keeps its `maxFiles`
 *    newest parts, and with `compressAged` the plain ones left are gzipped (by
 *    `sweepLogs` of @agentd/logging, the same rules as the daemon log);
 * 4. past days' session-index files: with a `.gz` twin the plain copy is deleted, else with
 *    `compressAged` gzipped to `YYYY-MM-DD.jsonl.gz`. Today's day file and live trajectory files
 *    are never compressed.
 *
 * Under `obs/offloads`, files last modified more than `maxAgeDays` ago are deleted, then empty
 * directories. Missing directories are empty sweeps; failures on single files are collected
 * in `errors` and the sweep goes on.
 * @throws {z.ZodError} when `options` are invalid.
 */
export async function sweepEvidence(options: SweepEvidenceOptions): Promise<EvidenceSweepResult> {
  const parsed = sweepEvidenceOptionsSchema.parse(options);
  const { dataDir } = parsed;
  const { maxFiles, maxAgeDays, compressAged } = parsed.rotation;
  const now = (parsed.now ?? Date.now)();
  const cutoff = maxAgeDays > 0 ? now - maxAgeDays * DAY_MS : Number.NEGATIVE_INFINITY;
  const result: EvidenceSweepResult = {
    deleted: [],
    compressed: [],
    renumbered: [],
    removedDirs: [],
    errors: [],
  };
  const rel = (path: string) => relative(dataDir, path);
  const remove = async (path: string, reason: EvidenceSweepResult['deleted'][number]['reason']) => {
    try {
      await unlink(path);
      result.deleted.push({ path: rel(path), reason });
    } catch (error) {
      if (!isMissing(error)) result.errors.push({ path: rel(path), error });
    }
  };

  const indexDir = join(dataDir, SESSION_INDEX_DIR);
  const trajectoryDir = join(dataDir, TRAJECTORY_DIR);

  for (const dir of [indexDir, trajectoryDir]) {
    await closeGaps(dir, result, rel);
  }

  // 2. Age.
  for (const name of await namesIn(indexDir)) {
    const match = DAY_NAME.exec(name);
    if (!match) continue;
    if (Date.parse(`${match[1]}T00:00:00Z`) + DAY_MS <= cutoff) await remove(join(indexDir, name), 'age');
  }
  for (const name of await namesIn(trajectoryDir)) {
    if (!name.endsWith('.jsonl')) continue;
    const path = join(trajectoryDir, name);
    try {
      if ((await stat(path)).mtimeMs < cutoff) await remove(path, 'age');
    } catch (error) {
      if (!isMissing(error)) result.errors.push({ path: rel(path), error });
    }
  }

  // 3. Rolled parts: duplicates, trajectory part age, count, compression.
  for (const [dir, ageDays] of [
    [indexDir, 0],
    [trajectoryDir, maxAgeDays],
  ] as const) {
    try {
      const swept = await sweepLogs({ dir, maxFiles, maxAgeDays: ageDays, compressAged, now: () => now });
      for (const entry of swept.deleted) result.deleted.push({ path: rel(entry.path), reason: entry.reason });
      for (const path of swept.compressed) result.compressed.push(rel(path));
      for (const entry of swept.errors) result.errors.push({ path: rel(entry.path), error: entry.error });
    } catch (error) {
      result.errors.push({ path: rel(dir), error });
    }
  }

  // 4. Past days' session-index files.
  const today = new Date(now).toISOString().slice(0, 10);
  const indexNames = new Set(await namesIn(indexDir));
  for (const name of [...indexNames].sort()) {
    if (!LIVE_DAY.test(name) || name.slice(0, 10) >= today) continue;
    const path = join(indexDir, name);
    if (indexNames.has(`${name}.gz`)) {
      await remove(path, 'duplicate');
      continue;
    }
    if (!compressAged) continue;
    try {
      await gzipFile(path, `${path}.gz`);
      result.compressed.push(rel(path));
    } catch (error) {
      result.errors.push({ path: rel(path), error });
    }
  }

  await sweepOffloads(join(dataDir, OFFLOAD_DIR), cutoff, result, rel);
  return result;
}

/** Deletes unfinished gzip leftovers and renumbers each file's parts `.1`, `.2`, ... in order. */
async function closeGaps(
  dir: string,
  result: EvidenceSweepResult,
  rel: (path: string) => string,
): Promise<void> {
  let names: string[];
  try {
    names = await namesIn(dir);
  } catch (error) {
    result.errors.push({ path: rel(dir), error });
    return;
  }
  const parts = new Map<string, Map<number, string[]>>();
  for (const name of names) {
    // Leftovers of a crash: an unfinished gzip, or the marker of an unfinished roll.
    if (name.endsWith(GZIP_TEMP) || name.endsWith(ROLL_MARKER_SUFFIX)) {
      try {
        await unlink(join(dir, name));
        result.deleted.push({ path: rel(join(dir, name)), reason: 'temporary' });
      } catch (error) {
        if (!isMissing(error)) result.errors.push({ path: rel(join(dir, name)), error });
      }
      continue;
    }
    const match = PART.exec(name);
    if (!match) continue;
    const stream = match[1] as string;
    const byIndex = parts.get(stream) ?? new Map<number, string[]>();
    const index = Number(match[2]);
    byIndex.set(index, [...(byIndex.get(index) ?? []), match[3] ?? '']);
    parts.set(stream, byIndex);
  }
  for (const [stream, byIndex] of parts) {
    const indices = [...byIndex.keys()].sort((left, right) => left - right);
    for (const [position, index] of indices.entries()) {
      const wanted = position + 1;
      if (index === wanted) continue;
      // Ascending order: the slot `wanted` was vacated (or never used) before it is filled.
      for (const suffix of byIndex.get(index) ?? []) {
        const from = join(dir, `${stream}.${index}${suffix}`);
        const to = join(dir, `${stream}.${wanted}${suffix}`);
        try {
          await rename(from, to);
          result.renumbered.push({ from: rel(from), to: rel(to) });
        } catch (error) {
          result.errors.push({ path: rel(from), error });
        }
      }
    }
  }
}

/** Deletes offloaded results older than the cutoff, then the directories left empty. */
async function sweepOffloads(
  root: string,
  cutoff: number,
  result: EvidenceSweepResult,
  rel: (path: string) => string,
): Promise<void> {
  const walk = async (dir: string): Promise<boolean> => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if (!isMissing(error)) result.errors.push({ path: rel(dir), error });
      return false;
    }
    let left = entries.length;
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (await walk(path)) {
          try {
            await rmdir(path);
            result.removedDirs.push(rel(path));
            left -= 1;
          } catch (error) {
            if (!isMissing(error)) result.errors.push({ path: rel(path), error });
          }
        }
        continue;
      }
      try {
        if ((await stat(path)).mtimeMs < cutoff) {
          await unlink(path);
          result.deleted.push({ path: rel(path), reason: 'age' });
          left -= 1;
        }
      } catch (error) {
        if (!isMissing(error)) result.errors.push({ path: rel(path), error });
      }
    }
    return left === 0;
  };
  await walk(root);
}
