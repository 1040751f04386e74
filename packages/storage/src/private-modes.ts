import { closeSync, constants, fchmodSync, fstatSync, openSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { StorageError } from './errors.js';

/**
 * What of a data directory holds private data: the config and its git history, the
 * databases with their WAL files, the pid and lock files, logs and evidence. Entries that do
 * not exist are skipped; directories are walked whole. `.env` holds secrets while no master key is set.
 */
export const PRIVATE_DATA_DIR_ENTRIES: readonly string[] = Object.freeze([
  'config.yaml',
  '.gitignore',
  '.git',
  'agentd.db',
  'agentd.db-wal',
  'agentd.db-shm',
  'agentd.db-journal',
  'secrets.db',
  'secrets.db-wal',
  'secrets.db-shm',
  'secrets.db-journal',
  '.env',
  'agentd.pid',
  'agentd.lock',
  'logs',
  'obs',
  'graph-runs',
  'workspaces',
]);

/** Options of {@link repairPrivateModes}. */
export const repairPrivateModesOptionsSchema = z.object({
  /** The data directory; it becomes 0700 itself. */
  dataDir: z.string().min(1),
  /** Names inside `dataDir` to make private (directories recursively). @default PRIVATE_DATA_DIR_ENTRIES */
  entries: z.array(z.string().min(1)).optional(),
});

/** Options of {@link repairPrivateModes} as accepted (defaults optional). */
export type RepairPrivateModesOptions = z.input<typeof repairPrivateModesOptionsSchema>;

/** What {@link repairPrivateModes} changed. */
export interface RepairPrivateModesResult {
  /** Files and directories whose mode was changed. */
  repaired: number;
  /** Entries whose mode could not be read or changed (another owner, a vanished file). */
  failures: Array<{ path: string; error: unknown }>;
}

// O_NOFOLLOW: a symlink planted inside the data dir is never followed (to chmod, or to walk
// into); O_NONBLOCK: opening a FIFO must not wait for a writer.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Makes a data directory private to its owner: the directory and every directory below the
 * given entries become 0700, and regular files lose every group and other bit (0644 becomes
 * 0600, git's read-only 0444 objects 0400; no bit is ever added, so no file becomes
 * executable). Symlinks are neither changed nor followed, so nothing outside the data
 * directory is touched; sockets and FIFOs are left alone.
 *
 * Meant for start-up, before anything is opened, to repair what an older build or a
 * permissive umask left readable; files created afterwards are private through the umask
 * (see {@link usePrivateUmask}).
 * @throws {StorageError} `INVALID_OPTIONS` for bad options. Per-file failures are returned, not thrown.
 */
export function repairPrivateModes(options: RepairPrivateModesOptions): RepairPrivateModesResult {
  const parsed = repairPrivateModesOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new StorageError('INVALID_OPTIONS', `Invalid private modes options: ${parsed.error.message}`, {
      cause: parsed.error,
    });
  }
  const dataDir = resolve(parsed.data.dataDir);
  const result: RepairPrivateModesResult = { repaired: 0, failures: [] };
  if (!statSync(dataDir, { throwIfNoEntry: false })?.isDirectory()) return result;
  repairRoot(dataDir, result);
  for (const name of parsed.data.entries ?? PRIVATE_DATA_DIR_ENTRIES) {
    repairEntry(join(dataDir, name), result);
  }
  return result;
}

/**
 * Sets the process umask to 077, so every file and directory the process creates from now on
 * (the database, logs, evidence, git's objects written by child processes) is private.
 * Answers false where the umask cannot be set (a worker thread: the umask is process-wide).
 */
export function usePrivateUmask(): boolean {
  try {
    process.umask(0o077);
    return true;
  } catch {
    return false;
  }
}

/** Repairs one path of unknown type; absent paths and symlinks are skipped. */
function repairEntry(path: string, result: RepairPrivateModesResult): void {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOENT: not there; ELOOP: a symlink (O_NOFOLLOW); ENXIO: a socket.
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENXIO') return;
    result.failures.push({ path, error });
    return;
  }
  let isDirectory = false;
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) {
      isDirectory = true;
      changeMode(fd, stat.mode, 0o700, result);
    } else if (stat.isFile() && (stat.mode & 0o077) !== 0) {
      changeMode(fd, stat.mode, stat.mode & 0o700, result);
    }
  } catch (error) {
    result.failures.push({ path, error });
  } finally {
    closeSync(fd);
  }
  if (isDirectory) repairChildren(path, result);
}

function changeMode(fd: number, mode: number, wanted: number, result: RepairPrivateModesResult): void {
  if ((mode & 0o7777) === wanted) return;
  fchmodSync(fd, wanted);
  result.repaired += 1;
}

/** Makes the data directory itself 0700 (following a symlink there: the operator chose it). */
function repairRoot(path: string, result: RepairPrivateModesResult): void {
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      changeMode(fd, fstatSync(fd).mode, 0o700, result);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    result.failures.push({ path, error });
  }
}

/** Repairs everything in a directory that was already opened without following a symlink. */
function repairChildren(path: string, result: RepairPrivateModesResult): void {
  let names: string[];
  try {
    names = readdirSync(path);
  } catch (error) {
    result.failures.push({ path, error });
    return;
  }
  for (const name of names) repairEntry(join(path, name), result);
}
