import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, openDatabase } from '@agentd/storage';
import { afterEach, beforeEach } from 'vitest';
import { createMemoryStore, type MemoryStore } from '../memory-store.js';

/** A database file in a fresh temporary directory, for one test. */
export interface TemporaryDatabase {
  db: Database;
  /** Closes the database and deletes its directory. */
  remove(): Promise<void>;
}

/** Opens `memory.db` in a new directory under the system temp dir whose name starts with `prefix`. */
export async function openTemporaryDatabase(prefix: string): Promise<TemporaryDatabase> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const db = await openDatabase({ url: `file:${join(dir, 'memory.db')}` });
  return {
    db,
    remove: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Registers a memory store (default options) over a fresh temporary database before each test,
 * closed and deleted after it; `store` is the current test's.
 */
export function storeEachTest(prefix: string): { readonly store: MemoryStore } {
  let current: { store: MemoryStore; database: TemporaryDatabase } | undefined;
  beforeEach(async () => {
    const database = await openTemporaryDatabase(prefix);
    current = { store: await createMemoryStore({ database: database.db }), database };
  });
  afterEach(async () => {
    if (current === undefined) return;
    await current.store.close();
    await current.database.remove();
    current = undefined;
  });
  return {
    get store() {
      if (current === undefined) throw new Error('storeEachTest: the store exists only during a test');
      return current.store;
    },
  };
}
