import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, openDatabase } from '@agentd/storage';

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
