import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The temporary directories of a test file, made one by one and removed together. */
export interface TempDirs {
  /** A new directory under the OS temp dir: the prefix and a random suffix. */
  make(): string;
  /** Removes every directory made so far, with what is in it (call it after each test). */
  removeAll(): void;
}

/** {@link TempDirs} named `prefix` and a random suffix. */
export function tempDirs(prefix: string): TempDirs {
  const made: string[] = [];
  return {
    make() {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    removeAll() {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}
