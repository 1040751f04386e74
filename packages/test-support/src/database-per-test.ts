import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/** The database of the running test and the directory it lives in. */
export interface DatabasePerTest<D> {
  /** The running test's own temporary directory. */
  readonly dir: string;
  /** What `open(dir)` made for the running test. */
  readonly db: D;
}

/**
 * Before each test of the file: a fresh temporary directory (`prefix` and a random suffix) and
 * what `open(dir)` makes in it, typically `openDatabase({ dataDir })` of `@agentd/storage` (plus
 * the package's migrations). After each: `close()` on it and the directory removed. Call it at
 * the top of a test file, before the file's own hooks: after-each hooks run last-registered first,
 * so a service the file builds on the database is closed before the database is.
 */
export function databasePerTest<D extends { close(): Promise<unknown> }>(
  prefix: string,
  open: (dir: string) => Promise<D>,
): DatabasePerTest<D> {
  let current: { dir: string; db: D } | undefined;
  beforeEach(async () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    try {
      current = { dir, db: await open(dir) };
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  });
  afterEach(async () => {
    const finished = current;
    current = undefined;
    if (finished === undefined) return;
    try {
      await finished.db.close();
    } finally {
      rmSync(finished.dir, { recursive: true, force: true });
    }
  });
  const running = () => {
    if (current === undefined) throw new Error('databasePerTest: used outside a test');
    return current;
  };
  return {
    get dir() {
      return running().dir;
    },
    get db() {
      return running().db;
    },
  };
}
