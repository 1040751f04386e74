import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { LoggingError } from './errors.js';
import { gzipFile, isMissing } from './internal/gzip.js';

const DAY_MS = 24 * 60 * 60 * 1000;
// `<stream>.<n>` or `<stream>.<n>.gz`: the naming every rotating writer here uses.
const ROTATED_PATTERN = /^(.+)\.(\d+)(\.gz)?$/;

/** Options of {@link sweepLogs}. */
export const sweepOptionsSchema = z.object({
  /** Directory holding the streams, e.g. `<data dir>/logs`. */
  dir: z.string().min(1),
  /** Rotated copies kept per stream (lowest numbers, i.e. newest, are kept). @default 5 */
  maxFiles: z.number().int().min(0).default(5),
  /** Rotated copies last modified longer ago than this are deleted; 0 disables the age rule. @default 30 */
  maxAgeDays: z.number().min(0).default(30),
  /** Gzip rotated copies that are still plain text. @default true */
  compressAged: z.boolean().default(true),
  /** Clock, in epoch milliseconds. @default Date.now */
  now: z.custom<() => number>((value) => typeof value === 'function').optional(),
});

/** Options of {@link sweepLogs} as accepted (defaults optional). */
export type SweepOptions = z.input<typeof sweepOptionsSchema>;

/** Why {@link sweepLogs} deleted a file. */
export type SweepDeleteReason = 'age' | 'count' | 'duplicate';

/** What {@link sweepLogs} did. Paths are absolute (joined onto `dir`). */
export interface SweepResult {
  /** Files removed and why; `duplicate` is a plain copy whose `.gz` twin already exists. */
  deleted: Array<{ path: string; reason: SweepDeleteReason }>;
  /** Plain copies gzipped: `path` became `path + '.gz'`. */
  compressed: string[];
  /** Rotated copies left in place (after compression, under their `.gz` name). */
  kept: string[];
  /** Files that could not be handled; the sweep goes on past them. */
  errors: Array<{ path: string; error: unknown }>;
}

interface RotatedFile {
  path: string;
  stream: string;
  index: number;
  gzipped: boolean;
  mtimeMs: number;
}

/**
 * The startup sweep of `observability.logRotation` over one directory. Every
 * file named `<stream>.<n>` or `<stream>.<n>.gz` is a rotated copy of stream
 * `<stream>`; anything else, the live files included, is never touched (nor are
 * in-flight `.rotating-*` and `.tmp` files). In order: a plain copy with a `.gz`
 * twin is dropped, copies older than `maxAgeDays` are deleted, each stream keeps
 * its `maxFiles` lowest-numbered copies, and with `compressAged` the plain copies
 * left are gzipped (keeping their modification time). A missing directory is an
 * empty sweep.
 * @throws {LoggingError} `INVALID_OPTIONS`, or `SWEEP_FAILED` if the directory cannot be read.
 */
export async function sweepLogs(options: SweepOptions): Promise<SweepResult> {
  const parsed = sweepOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new LoggingError('INVALID_OPTIONS', `Invalid sweep options: ${parsed.error.message}`, {
      cause: parsed.error,
    });
  }
  const { dir, maxFiles, maxAgeDays, compressAged } = parsed.data;
  const now = parsed.data.now ?? Date.now;
  const result: SweepResult = { deleted: [], compressed: [], kept: [], errors: [] };

  let names: string[];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
  } catch (error) {
    if (isMissing(error)) return result;
    throw new LoggingError('SWEEP_FAILED', `Cannot read log directory ${dir}`, {
      cause: error,
      data: { dir },
    });
  }

  const rotated: RotatedFile[] = [];
  for (const name of names) {
    const match = ROTATED_PATTERN.exec(name);
    if (!match) continue;
    const path = join(dir, name);
    try {
      const info = await stat(path);
      rotated.push({
        path,
        stream: match[1]!,
        index: Number(match[2]),
        gzipped: match[3] !== undefined,
        mtimeMs: info.mtimeMs,
      });
    } catch (error) {
      if (!isMissing(error)) result.errors.push({ path, error });
    }
  }

  const remove = async (file: RotatedFile, reason: SweepDeleteReason): Promise<boolean> => {
    try {
      await unlink(file.path);
      result.deleted.push({ path: file.path, reason });
      return true;
    } catch (error) {
      if (isMissing(error)) return true;
      result.errors.push({ path: file.path, error });
      return false;
    }
  };

  const byStream = new Map<string, RotatedFile[]>();
  for (const file of rotated) {
    const files = byStream.get(file.stream) ?? [];
    files.push(file);
    byStream.set(file.stream, files);
  }

  const cutoff = maxAgeDays > 0 ? now() - maxAgeDays * DAY_MS : Number.NEGATIVE_INFINITY;
  for (const files of byStream.values()) {
    // Gzipped first so that, within one index, the plain twin is the one dropped.
    files.sort((left, right) => left.index - right.index || Number(right.gzipped) - Number(left.gzipped));
    const survivors: RotatedFile[] = [];
    let previousIndex = -1;
    for (const file of files) {
      if (file.index === previousIndex) {
        if (!(await remove(file, 'duplicate'))) survivors.push(file);
        continue;
      }
      previousIndex = file.index;
      if (file.mtimeMs < cutoff) {
        if (!(await remove(file, 'age'))) survivors.push(file);
        continue;
      }
      survivors.push(file);
    }
    for (const [position, file] of survivors.entries()) {
      if (position >= maxFiles) {
        await remove(file, 'count');
        continue;
      }
      if (compressAged && !file.gzipped) {
        try {
          await gzipFile(file.path, `${file.path}.gz`);
          result.compressed.push(file.path);
          result.kept.push(`${file.path}.gz`);
        } catch (error) {
          result.errors.push({ path: file.path, error });
          result.kept.push(file.path);
        }
        continue;
      }
      result.kept.push(file.path);
    }
  }
  return result;
}
