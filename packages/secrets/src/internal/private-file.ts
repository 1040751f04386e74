import { chmodSync, closeSync, constants, mkdirSync, openSync } from 'node:fs';

/**
 * Makes `dir` exist (0700 when created) and `path` an owner-only file (0600), created empty when
 * missing, before anything writes to it: the store is private even where the process umask is
 * not. SQLite gives its WAL and shared-memory files the mode of the database file.
 */
export function ensurePrivateFile(dir: string, path: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  closeSync(fd);
  chmodSync(path, 0o600);
}
