import { join } from 'node:path';
import { isStorageError } from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled } from '@agentd/storage/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonPool } from './helpers.js';

const pool = daemonPool('agentd-cluster-storage-');
afterEach(() => pool.cleanup());

describe.skipIf(!pgSuitesEnabled())('storage on PostgreSQL', () => {
  it('opens AGENTD_STORAGE_URL over storage.url, and refuses to start while a package has no PostgreSQL migrations', async () => {
    const url = await freshPgDatabaseUrl('agentd_daemon');
    const dataDir = pool.tempDir();
    const failure = await pool
      .start(dataDir, {
        config: { storage: { url: `file:${join(dataDir, 'elsewhere.db')}` } },
        env: { AGENTD_STORAGE_URL: url },
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isStorageError(failure) && failure.code).toBe('MIGRATION_INVALID');
    expect((failure as Error).message).toMatch(/has no PostgreSQL migrations/);
  });
});
