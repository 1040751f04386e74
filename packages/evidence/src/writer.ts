import { appendFile, mkdir, open, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { noopLogger, rollFile } from '@agentd/logging';
import { z } from 'zod';
import type { EvidenceLogger } from './logger.js';
import {
  EVIDENCE_MAX_PARTS,
  EVIDENCE_ROLL_BYTES,
  ROLL_MARKER_SUFFIX,
  SESSION_INDEX_DIR,
  type SessionIndexRecord,
  sessionIndexFileName,
  TRAJECTORY_DIR,
  TRAJECTORY_HARD_CAP_BYTES,
  TRAJECTORY_SOFT_CAP_BYTES,
  type TrajectoryRecord,
  trajectoryFileName,
} from './records.js';

/** The rotation policy part of the options, which `applyRotation` changes in place. */
const policySchema = z.object({
  /** Rotation policy (`observability.logRotation`); keys other than these two are ignored. */
  rotation: z
    .object({
      /** A session-index day file rolls at this size. @default 52428800 */
      maxSizeBytes: z.number().int().positive().default(EVIDENCE_ROLL_BYTES),
      /** Rolled parts kept per day file and per session; 0 keeps none. @default 5 */
      maxFiles: z.number().int().min(0).default(EVIDENCE_MAX_PARTS),
    })
    .default({ maxSizeBytes: EVIDENCE_ROLL_BYTES, maxFiles: EVIDENCE_MAX_PARTS }),
  /** A live trajectory file rolls at this size. @default 10485760 */
  trajectorySoftCapBytes: z.number().int().positive().default(TRAJECTORY_SOFT_CAP_BYTES),
  /** A session's trajectory (live file plus rolled parts, uncompressed) stops growing here. @default 52428800 */
  trajectoryHardCapBytes: z.number().int().positive().default(TRAJECTORY_HARD_CAP_BYTES),
});

/** Options of {@link EvidenceWriter}: where it writes, its logger and its rotation policy. */
export const evidenceWriterOptionsSchema = policySchema.extend({
  /** The daemon's data directory; evidence goes under `obs/` in it. */
  dataDir: z.string().min(1),
  /** Where write failures and the hard-cap warning are logged. @default a no-op logger */
  logger: z
    .custom<EvidenceLogger>((value) => typeof value === 'object' && value !== null, {
      message: 'expected a logger',
    })
    .optional(),
});

/** Options of {@link EvidenceWriter} as accepted (every key but `dataDir` optional). */
export type EvidenceWriterOptions = z.input<typeof evidenceWriterOptionsSchema>;

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';

/** Size of a file's text: its size, or for a `.gz` file the length gzip records in its trailer. */
async function textBytes(path: string, gzipped: boolean): Promise<number | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (!gzipped) return size;
    if (size < 4) return 0;
    const trailer = Buffer.alloc(4);
    await handle.read(trailer, 0, 4, size - 4);
    // ISIZE is the length modulo 2^32; parts are far below 4 GiB.
    return trailer.readUInt32LE(0);
  } finally {
    await handle.close();
  }
}

/** Bytes of the rolled parts `<path>.1`, `<path>.2`, ... (plain or `.gz`), up to the first gap. */
async function partBytes(path: string): Promise<number> {
  let total = 0;
  for (let n = 1; ; n++) {
    const bytes = (await textBytes(`${path}.${n}`, false)) ?? (await textBytes(`${path}.${n}.gz`, true));
    if (bytes === undefined) return total;
    total += bytes;
  }
}

interface FileState {
  /** Bytes in the live file. */
  live: number;
  /** Bytes of the live file and its rolled parts (trajectories only). */
  total: number;
  /** The hard-cap warning was logged for this file. */
  warned: boolean;
}

interface StreamPolicy {
  rollBytes: number;
  hardCapBytes: number | undefined;
}

/**
 * Roll counts of evidence files, for in-process readers: `of(relative)` is even while the file
 * is settled and odd while it rolls, and changes with every roll. A reader that saw the same
 * even count before and after reading a stream read no roll (no part twice, none missed).
 */
export interface EvidenceRolls {
  /** The roll count of a file relative to the data dir (e.g. `obs/trajectories/<name>`). */
  of(relative: string): number;
}

/** Files whose sizes an {@link EvidenceWriter} keeps in memory (least recently written dropped first). */
export const FILE_STATES_KEPT = 4096;

/**
 * Appends evidence lines. Lines of one file are written in order; a write failure is
 * logged and never fails a turn.
 *
 * Rotation (`observability.logRotation`): a write that would take a live file past its roll
 * size (a session-index day file at `maxSizeBytes`, a trajectory at the 10 MB soft cap) first
 * rolls it (by @agentd/logging's `rollFile`, the roll of the daemon log too): `<file>.<n>`
 * becomes `<file>.<n+1>` (plain or `.gz`), the part at `maxFiles` is deleted, and the live
 * file becomes `<file>.1`. A write is never split, and a write into an
 * empty file never rolls. A session's trajectory, live file and parts together, stops at the
 * 50 MB hard cap: later lines are dropped, with one warning per file.
 */
export class EvidenceWriter {
  readonly #dataDir: string;
  readonly #logger: EvidenceLogger;
  #options: z.output<typeof policySchema>;
  // Only files that rolled (every 10-50 MB) get an entry.
  readonly #rollCounts = new Map<string, number>();
  /** Roll counts of this writer's files (see {@link EvidenceRolls}). */
  readonly rolls: EvidenceRolls = { of: (relative) => this.#rollCounts.get(relative) ?? 0 };
  readonly #queues = new Map<string, Promise<void>>();
  readonly #files = new Map<string, FileState>();
  #dirsReady: Promise<void> | undefined;

  /** @throws {z.ZodError} when `options` are invalid. */
  constructor(options: EvidenceWriterOptions) {
    const { dataDir, logger, ...policy } = evidenceWriterOptionsSchema.parse(options);
    this.#dataDir = dataDir;
    this.#logger = logger ?? noopLogger;
    this.#options = policy;
  }

  /**
   * Applies a new rotation policy in place (config hot-reload): the next write of each file
   * rolls by the new `maxSizeBytes` and keeps the new `maxFiles`. Keys left out keep their value.
   * @throws {z.ZodError} when `rotation` is invalid (the old policy stays).
   */
  applyRotation(rotation: { maxSizeBytes?: number | undefined; maxFiles?: number | undefined }): void {
    const merged = {
      maxSizeBytes: rotation.maxSizeBytes ?? this.#options.rotation.maxSizeBytes,
      maxFiles: rotation.maxFiles ?? this.#options.rotation.maxFiles,
    };
    this.#options = policySchema.parse({ ...this.#options, rotation: merged });
  }

  /** Appends trajectory records of one session. */
  trajectory(sessionKey: string, records: TrajectoryRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    const relative = join(TRAJECTORY_DIR, trajectoryFileName(sessionKey));
    return this.#append(relative, records, {
      rollBytes: this.#options.trajectorySoftCapBytes,
      hardCapBytes: this.#options.trajectoryHardCapBytes,
    });
  }

  /** Appends one session-index record to its day file. */
  sessionIndex(record: SessionIndexRecord): Promise<void> {
    return this.#append(join(SESSION_INDEX_DIR, sessionIndexFileName(record.ts)), [record], {
      rollBytes: this.#options.rotation.maxSizeBytes,
      hardCapBytes: undefined,
    });
  }

  /** Waits for every queued write. */
  async flush(): Promise<void> {
    await Promise.all([...this.#queues.values()]);
  }

  #append(relative: string, records: unknown[], policy: StreamPolicy): Promise<void> {
    const text = `${records.map((record) => JSON.stringify(record)).join('\n')}\n`;
    const previous = this.#queues.get(relative) ?? Promise.resolve();
    const next = previous.then(() => this.#write(relative, text, policy));
    this.#queues.set(relative, next);
    void next.finally(() => {
      if (this.#queues.get(relative) === next) this.#queues.delete(relative);
    });
    return next;
  }

  /**
   * The sizes of a file, kept for the {@link FILE_STATES_KEPT} most recently written files
   * (every graph node and webhook turn is a session of its own, so a long-running daemon
   * touches unboundedly many); a file written again after eviction is measured on disk again.
   */
  async #state(path: string, relative: string, policy: StreamPolicy): Promise<FileState> {
    let state = this.#files.get(relative);
    if (state) {
      this.#files.delete(relative);
    } else {
      const live = (await textBytes(path, false)) ?? 0;
      const total = policy.hardCapBytes === undefined ? live : live + (await partBytes(path));
      state = { live, total, warned: false };
    }
    this.#files.set(relative, state);
    if (this.#files.size > FILE_STATES_KEPT) {
      const oldest = this.#files.keys().next().value;
      if (oldest !== undefined) this.#files.delete(oldest);
    }
    return state;
  }

  async #write(relative: string, text: string, policy: StreamPolicy): Promise<void> {
    const path = join(this.#dataDir, relative);
    try {
      this.#dirsReady ??= Promise.all([
        mkdir(join(this.#dataDir, SESSION_INDEX_DIR), { recursive: true }),
        mkdir(join(this.#dataDir, TRAJECTORY_DIR), { recursive: true }),
      ]).then(() => undefined);
      await this.#dirsReady;
      const state = await this.#state(path, relative, policy);
      const bytes = Buffer.byteLength(text);
      if (policy.hardCapBytes !== undefined && state.total + bytes > policy.hardCapBytes) {
        if (!state.warned) {
          state.warned = true;
          this.#logger.warn(
            {
              file: relative,
              capBytes: policy.hardCapBytes,
              hint: 'the trajectory is at its hard cap; older evidence stays, new lines are dropped',
              errorKind: 'resource',
            },
            'trajectory file at hard cap',
          );
        }
        return;
      }
      if (state.live > 0 && state.live + bytes > policy.rollBytes) {
        this.#rollCounts.set(relative, (this.#rollCounts.get(relative) ?? 0) + 1);
        try {
          await this.#roll(path);
        } finally {
          this.#rollCounts.set(relative, (this.#rollCounts.get(relative) ?? 0) + 1);
        }
        state.live = 0;
        // Rolling may have deleted the oldest part.
        if (policy.hardCapBytes !== undefined) state.total = await partBytes(path);
      }
      await appendFile(path, text);
      state.live += bytes;
      state.total += bytes;
    } catch (error) {
      this.#dirsReady = undefined;
      // Sizes are read from disk again on the next write.
      this.#files.delete(relative);
      this.#logger.warn(
        {
          err: error,
          file: relative,
          hint: 'check free space and permissions of the obs directory',
          errorKind: 'resource',
        },
        'evidence write failed',
      );
    }
  }

  /**
   * Shifts `<path>.<n>[.gz]` up by one (dropping the part at maxFiles) and moves the live file to
   * `.1`. The renames take several steps, so `<path>.rolling` exists while they run: a reader
   * that sees it (or sees `.1` change) reads again.
   */
  async #roll(path: string): Promise<void> {
    const marker = `${path}${ROLL_MARKER_SUFFIX}`;
    await writeFile(marker, '');
    try {
      await rollFile(path, path, { maxFiles: this.#options.rotation.maxFiles });
    } finally {
      await unlink(marker).catch(() => undefined);
    }
  }
}
