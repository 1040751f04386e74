import { randomUUID } from 'node:crypto';
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { StorageError } from './errors.js';
import { processExists, processStartTime } from './internal/process-identity.js';

/** Options of {@link acquireDataDirLock}. */
export const dataDirLockOptionsSchema = z.object({
  /** The data directory to lock; it must exist. */
  dataDir: z.string().min(1),
  /** Name of the lock file inside the data directory. @default 'agentd.lock' */
  fileName: z.string().min(1).default('agentd.lock'),
  /** Clock for the recorded start time, in epoch milliseconds. @default Date.now */
  now: z.custom<() => number>((value) => typeof value === 'function').optional(),
});

/** Options of {@link acquireDataDirLock} as accepted (defaults optional). */
export type DataDirLockOptions = z.input<typeof dataDirLockOptionsSchema>;

/** What the lock file holds: who holds the data directory. */
export interface DataDirLockHolder {
  pid: number;
  /** The holder's kernel start time (`/proc/<pid>/stat`), when the platform has one. */
  processStart?: string;
  hostname: string;
  /** ISO time the lock was taken. */
  startedAt: string;
  /** Tells this holder's lock apart from a later one of the same process. */
  token: string;
}

/** A held data directory lock. */
export interface DataDirLock {
  /** Path of the lock file. */
  readonly path: string;
  /** What the lock file records about this holder. */
  readonly holder: DataDirLockHolder;
  /** The stale holder this lock replaced (a process that died without releasing it), if any. */
  readonly replaced: DataDirLockHolder | undefined;
  /** Removes the lock file if it is still this holder's; safe to call more than once. */
  release(): void;
}

// Takeover can lose a race to another starter; each round re-reads who holds the lock.
const MAX_ROUNDS = 5;

/**
 * Takes the exclusive lock of a data directory, so that one daemon at a time writes it.
 *
 * The lock file (`agentd.lock`: pid, process start time, host, time taken) is written to a
 * private temporary name and hard-linked into place, which fails if the file exists, so
 * the lock appears atomically with its whole content (a reader never sees it half written).
 * A lock left by a process that is gone (killed with SIGKILL, a crash), or whose pid now
 * belongs to another process (the start time differs), is stale and taken over: it is
 * renamed aside, checked to be the same stale file, and replaced. Node has no flock, and
 * this also works for a data directory shared by processes of one host.
 *
 * Two holders in one process are refused too (an embedder starting two daemons on a dir).
 * @throws {StorageError} `DATA_DIR_LOCKED` naming the running holder's pid when the directory
 *   is in use; `LOCK_FAILED` when the lock file cannot be written or read.
 */
export function acquireDataDirLock(options: DataDirLockOptions): DataDirLock {
  const parsed = dataDirLockOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new StorageError(
      'INVALID_OPTIONS',
      `Invalid data directory lock options: ${parsed.error.message}`,
      {
        cause: parsed.error,
      },
    );
  }
  const dataDir = resolve(parsed.data.dataDir);
  const path = join(dataDir, parsed.data.fileName);
  const now = parsed.data.now ?? Date.now;
  const ownStart = processStartTime(process.pid);
  const holder: DataDirLockHolder = {
    pid: process.pid,
    ...(ownStart === undefined ? {} : { processStart: ownStart }),
    hostname: hostname(),
    startedAt: new Date(now()).toISOString(),
    token: randomUUID(),
  };
  const content = `${JSON.stringify(holder)}\n`;

  let replaced: DataDirLockHolder | undefined;
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    if (linkNew(path, content)) {
      return {
        path,
        holder,
        replaced,
        release: () => releaseLock(path, holder.token),
      };
    }
    const current = readLock(path);
    if (current === undefined) continue; // released between our link and read: try again
    const running = current.holder && runningHolder(current.holder);
    if (running) throw lockedError(dataDir, path, running);
    // Stale (or unreadable): move exactly this file aside, then try to link ours again.
    if (moveAsideIfUnchanged(path, current.raw)) replaced = current.holder ?? replaced;
  }
  throw new StorageError(
    'LOCK_FAILED',
    `Could not take the lock ${path}: other processes kept replacing it; start agentd again`,
    { data: { path } },
  );
}

/** Links a complete lock file into place; false when one exists already. */
function linkNew(path: string, content: string): boolean {
  const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`;
  try {
    writeFileSync(temporary, content, { mode: 0o600, flag: 'wx' });
    linkSync(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new StorageError(
      'LOCK_FAILED',
      `Cannot write the data directory lock ${path}: ${(error as Error).message}; check the directory's owner and permissions`,
      { cause: error, data: { path } },
    );
  } finally {
    try {
      unlinkSync(temporary);
    } catch {
      // Not created, or already gone.
    }
  }
}

/** The lock file's raw text and holder (undefined holder: unreadable); undefined when absent. */
function readLock(path: string): { raw: string; holder: DataDirLockHolder | undefined } | undefined {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new StorageError(
      'LOCK_FAILED',
      `Cannot read the data directory lock ${path}: ${(error as Error).message}`,
      { cause: error, data: { path } },
    );
  }
  return { raw, holder: parseHolder(raw) };
}

function parseHolder(raw: string): DataDirLockHolder | undefined {
  try {
    const value = JSON.parse(raw) as Partial<DataDirLockHolder>;
    if (typeof value.pid !== 'number' || !Number.isInteger(value.pid) || value.pid <= 0) return undefined;
    return {
      pid: value.pid,
      ...(typeof value.processStart === 'string' ? { processStart: value.processStart } : {}),
      hostname: typeof value.hostname === 'string' ? value.hostname : '',
      startedAt: typeof value.startedAt === 'string' ? value.startedAt : '',
      token: typeof value.token === 'string' ? value.token : '',
    };
  } catch {
    return undefined;
  }
}

/** The holder when it still runs; undefined when its lock is stale. */
function runningHolder(holder: DataDirLockHolder): DataDirLockHolder | undefined {
  // A holder on another host (a shared mount) cannot be checked from here: assume it runs.
  if (holder.hostname && holder.hostname !== hostname()) return holder;
  if (!processExists(holder.pid)) return undefined;
  const start = processStartTime(holder.pid);
  // The pid was reused by a process started later than the holder.
  if (holder.processStart !== undefined && start !== undefined && start !== holder.processStart) {
    return undefined;
  }
  return holder;
}

/**
 * Renames the stale lock aside and checks that what moved is the file judged stale; a fresh
 * lock another starter linked meanwhile is put back. True when the stale file was removed.
 */
function moveAsideIfUnchanged(path: string, staleRaw: string): boolean {
  const aside = `${path}.stale-${process.pid}-${randomUUID()}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false; // another starter moved it
    throw new StorageError(
      'LOCK_FAILED',
      `Cannot replace the stale data directory lock ${path}: ${(error as Error).message}`,
      { cause: error, data: { path } },
    );
  }
  let moved = '';
  try {
    moved = readFileSync(aside, 'utf8');
  } catch {
    // Treated as changed: put back below.
  }
  if (moved !== staleRaw) {
    try {
      linkSync(aside, path);
    } catch {
      // Yet another lock is in place; the next round reads it.
    }
    unlinkSync(aside);
    return false;
  }
  unlinkSync(aside);
  return true;
}

function releaseLock(path: string, token: string): void {
  const current = readLock(path);
  if (current?.holder?.token !== token) return;
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function lockedError(dataDir: string, path: string, holder: DataDirLockHolder): StorageError {
  const where = holder.hostname && holder.hostname !== hostname() ? ` on host ${holder.hostname}` : '';
  const since = holder.startedAt ? ` since ${holder.startedAt}` : '';
  return new StorageError(
    'DATA_DIR_LOCKED',
    `The data directory ${dataDir} is in use by agentd pid ${holder.pid}${where}${since}; ` +
      `stop that daemon first or choose another --data-dir (if no agentd runs there, remove ${path})`,
    { data: { dataDir, path, pid: holder.pid, hostname: holder.hostname, startedAt: holder.startedAt } },
  );
}
