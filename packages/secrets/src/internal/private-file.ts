import { chmodSync, closeSync, constants, lstatSync, mkdirSync, openSync } from 'node:fs';
import { SecretsError } from '../errors.js';

/**
 * Makes `dir` exist (0700 when created) and `path` an owner-only file (0600), created empty when
 * missing, before anything writes to it: the store is private even where the process umask is
 * not (SQLite gives its WAL and shared-memory files the mode of the database file). An existing
 * file is never opened here: closing a second descriptor of a SQLite file drops the POSIX locks
 * every connection of this process holds on it, which SQLite documents as a way to corrupt it
 * (seen as short reads and sealed rows of the other key after a killed rotate-key).
 */
export function ensurePrivateFile(dir: string, path: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let existing: ReturnType<typeof lstatSync> | undefined;
  try {
    existing = lstatSync(path);
  } catch {
    existing = undefined;
  }
  if (existing === undefined) {
    const fd = openSync(
      path,
      constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    closeSync(fd);
    return;
  }
  if (!existing.isFile()) {
    throw new SecretsError(
      'INVALID_OPTIONS',
      `${path} is not a regular file (a symlink or other); refusing to use it`,
      {
        data: { path },
      },
    );
  }
  chmodSync(path, 0o600);
}
