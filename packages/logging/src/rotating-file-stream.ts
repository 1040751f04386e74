import { EventEmitter } from 'node:events';
import {
  closeSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { LoggingError } from './errors.js';
import { rollFile } from './roll.js';

/** Options of {@link createRotatingFileStream}. */
export const rotatingFileOptionsSchema = z.object({
  /** Path of the live file, e.g. `<data dir>/logs/agentd.log`. Its directory is created. */
  filePath: z.string().min(1),
  /** Size at which the live file rolls. @default 10485760 (10m) */
  maxSizeBytes: z
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024),
  /** Rotated copies kept (`.1` newest … `.maxFiles` oldest); 0 keeps none. @default 5 */
  maxFiles: z.number().int().min(0).default(5),
  /** Gzip rotated copies (`agentd.log.1.gz`). @default true */
  compress: z.boolean().default(true),
});

// The keys of an applyOptions call, without defaults: a key left out keeps its value.
const changedOptionsSchema = z.object({
  filePath: z.string().min(1).optional(),
  maxSizeBytes: z.number().int().positive().optional(),
  maxFiles: z.number().int().min(0).optional(),
  compress: z.boolean().optional(),
});

/** Options of {@link createRotatingFileStream} as accepted (defaults optional). */
export type RotatingFileOptions = z.input<typeof rotatingFileOptionsSchema>;

// A rolled file waits under this infix until it has been shifted into `.1`
// (and gzipped); the sweep ignores it and a restarted stream finishes the job.
const PENDING_INFIX = '.rotating-';

/**
 * A size-rotated, append-only log file for pino. Lines are written synchronously
 * (like `pino.destination({ sync: true })`), one `write` per line, and the file
 * rolls only between writes, so no line is split across files or lost when the
 * process exits. When a write would take the live file past `maxSizeBytes` the
 * file is renamed aside and a fresh one opened at once; shifting
 * `.1` → `.2` …, dropping copies beyond `maxFiles` and gzipping happen in the
 * background, one rotation at a time, while writing goes on.
 *
 * Emits `'error'` (a {@link LoggingError}) when a write or a rotation fails; with
 * no listener the failure is reported on stderr instead, because a logging
 * failure must not crash the daemon.
 */
export class RotatingFileStream extends EventEmitter {
  #filePath: string;
  #maxSizeBytes: number;
  #maxFiles: number;
  #compress: boolean;
  #fd: number | undefined;
  #size: number;
  #sequence = 0;
  #jobs: Promise<void> = Promise.resolve();
  #droppedLines = 0;
  /** Pending files queued for settling (so a file is never adopted twice after a move). */
  readonly #queued = new Set<string>();

  constructor(options: RotatingFileOptions) {
    super();
    const parsed = rotatingFileOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new LoggingError('INVALID_OPTIONS', `Invalid rotating file options: ${parsed.error.message}`, {
        cause: parsed.error,
      });
    }
    this.#filePath = parsed.data.filePath;
    this.#maxSizeBytes = parsed.data.maxSizeBytes;
    this.#maxFiles = parsed.data.maxFiles;
    this.#compress = parsed.data.compress;
    const opened = openLive(this.#filePath);
    this.#fd = opened.fd;
    this.#size = opened.size;
    this.#adoptLeftovers();
  }

  /** Path of the live file. */
  get filePath(): string {
    return this.#filePath;
  }

  /**
   * Applies new options in place (config hot-reload): a new roll size is checked at the next
   * write (so a live file already over it rolls then), `maxFiles` and `compress` apply to the
   * next rotation, and a new `filePath` opens that file (creating its directory) before the
   * old one is closed, between two writes, so no line is lost or split. Rotations already
   * started finish under the old path. Keys left out keep their value.
   * @throws {LoggingError} `INVALID_OPTIONS`, or `FILE_OPEN_FAILED` when the new file cannot
   * be opened (the stream then keeps writing to the old one with its old options).
   */
  applyOptions(options: Partial<RotatingFileOptions>): void {
    const parsed = changedOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new LoggingError('INVALID_OPTIONS', `Invalid rotating file options: ${parsed.error.message}`, {
        cause: parsed.error,
      });
    }
    const next = parsed.data;
    if (next.filePath !== undefined && next.filePath !== this.#filePath && this.#fd !== undefined) {
      const opened = openLive(next.filePath);
      const previous = this.#fd;
      this.#fd = opened.fd;
      this.#size = opened.size;
      this.#filePath = next.filePath;
      try {
        closeSync(previous);
      } catch (error) {
        this.#report(error);
      }
      this.#adoptLeftovers();
    }
    if (next.maxSizeBytes !== undefined) this.#maxSizeBytes = next.maxSizeBytes;
    if (next.maxFiles !== undefined) this.#maxFiles = next.maxFiles;
    if (next.compress !== undefined) this.#compress = next.compress;
  }

  /** Bytes in the live file. */
  get size(): number {
    return this.#size;
  }

  /** Lines dropped because the stream was closed or a write failed. */
  get droppedLines(): number {
    return this.#droppedLines;
  }

  /** Appends one chunk (pino writes exactly one line per call). */
  write(chunk: string | Uint8Array): boolean {
    if (this.#fd === undefined) {
      this.#droppedLines++;
      return false;
    }
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (this.#size > 0 && this.#size + data.length > this.#maxSizeBytes) this.#roll();
    try {
      let offset = 0;
      while (offset < data.length) offset += writeSync(this.#fd, data, offset, data.length - offset);
      this.#size += data.length;
      return true;
    } catch (error) {
      this.#droppedLines++;
      this.#report(
        new LoggingError('FILE_WRITE_FAILED', `Cannot write to log file ${this.filePath}`, {
          cause: error,
          data: { filePath: this.filePath },
        }),
      );
      return false;
    }
  }

  /** pino calls this from `logger.flush()`; writes are synchronous, so only the kernel buffer is left. */
  flush(callback?: (error?: Error) => void): void {
    try {
      this.flushSync();
      if (callback) process.nextTick(callback);
    } catch (error) {
      if (callback) process.nextTick(callback, error as Error);
    }
  }

  /** Forces the live file to disk. */
  flushSync(): void {
    if (this.#fd !== undefined) fsyncSync(this.#fd);
  }

  /** Resolves when every rotation started so far has been shifted and compressed. */
  async whenIdle(): Promise<void> {
    let seen: Promise<void>;
    do {
      seen = this.#jobs;
      await seen;
    } while (seen !== this.#jobs);
  }

  /** Finishes pending rotations and closes the live file; later writes are dropped. */
  async close(): Promise<void> {
    await this.whenIdle();
    if (this.#fd !== undefined) {
      const fd = this.#fd;
      this.#fd = undefined;
      closeSync(fd);
    }
  }

  /** Stream-style alias of {@link close}. */
  end(callback?: () => void): this {
    this.close().then(
      () => callback?.(),
      (error: unknown) => this.#report(error),
    );
    return this;
  }

  #roll(): void {
    const fd = this.#fd;
    if (fd === undefined) return;
    const pending = `${this.filePath}${PENDING_INFIX}${process.pid}-${Date.now()}-${++this.#sequence}`;
    try {
      closeSync(fd);
      renameSync(this.filePath, pending);
    } catch (error) {
      // Keep logging into the same file; retry only after another maxSizeBytes so a
      // persistent failure does not cost a rename attempt on every line.
      this.#fd = openSync(this.filePath, 'a');
      this.#size = 0;
      this.#report(
        new LoggingError('ROTATION_FAILED', `Cannot roll log file ${this.filePath}`, {
          cause: error,
          data: { filePath: this.filePath },
        }),
      );
      return;
    }
    this.#fd = openSync(this.filePath, 'a');
    this.#size = 0;
    this.#enqueue(pending);
  }

  #enqueue(pending: string): void {
    // The live path the pending file belongs to, even if the stream moves before it settles.
    const target = this.#filePath;
    if (this.#queued.has(pending)) return;
    this.#queued.add(pending);
    this.#jobs = this.#jobs.then(() =>
      this.#settle(pending, target)
        .catch((error: unknown) =>
          this.#report(
            new LoggingError('ROTATION_FAILED', `Cannot finish rotating ${pending}`, {
              cause: error,
              data: { filePath: target, pending },
            }),
          ),
        )
        .finally(() => this.#queued.delete(pending)),
    );
  }

  /** Shifts the numbered copies of `target` up by one and moves `pending` into `.1` (see {@link rollFile}). */
  async #settle(pending: string, target: string): Promise<void> {
    const part = await rollFile(pending, target, {
      maxFiles: this.#maxFiles,
      compress: this.#compress,
    });
    if (part !== undefined) this.emit('rotate', part);
  }

  /** Finishes rotations a previous process started but did not complete. */
  #adoptLeftovers(): void {
    const directory = dirname(this.filePath);
    const prefix = basename(this.filePath) + PENDING_INFIX;
    let leftovers: Array<{ path: string; mtime: number }>;
    try {
      leftovers = readdirSync(directory)
        .filter((name) => name.startsWith(prefix))
        .map((name) => {
          const path = join(directory, name);
          return { path, mtime: statSync(path).mtimeMs };
        });
    } catch (error) {
      this.#report(error);
      return;
    }
    leftovers.sort((left, right) => left.mtime - right.mtime || left.path.localeCompare(right.path));
    for (const leftover of leftovers) this.#enqueue(leftover.path);
  }

  #report(error: unknown): void {
    if (this.listenerCount('error') > 0) {
      this.emit('error', error);
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    process.stderr.write(`@agentd/logging: ${message}${cause}\n`);
  }
}

/** Opens a live file for appending (creating its directory) and measures it. */
function openLive(filePath: string): { fd: number; size: number } {
  try {
    mkdirSync(dirname(filePath), { recursive: true });
    const fd = openSync(filePath, 'a');
    return { fd, size: fstatSync(fd).size };
  } catch (error) {
    throw new LoggingError('FILE_OPEN_FAILED', `Cannot open log file ${filePath}`, {
      cause: error,
      data: { filePath },
    });
  }
}

/**
 * Opens (creating its directory) a {@link RotatingFileStream} that rolls
 * `agentd.log` → `agentd.log.1(.gz)` … keeping `maxFiles` copies.
 * @throws {LoggingError} `INVALID_OPTIONS` or `FILE_OPEN_FAILED`.
 */
export function createRotatingFileStream(options: RotatingFileOptions): RotatingFileStream {
  return new RotatingFileStream(options);
}
