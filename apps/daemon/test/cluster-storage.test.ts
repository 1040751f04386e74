import { join } from 'node:path';
import { createHttpClient } from '@agentd/client';
import { isStorageError } from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled, withDatabase } from '@agentd/storage/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { unportedPackages } from '../src/cluster.js';
import { configSections, type DaemonConfig } from '../src/config-schema.js';
import { ADMIN_TOKEN, daemonPool } from './helpers.js';

const pool = daemonPool('agentd-cluster-storage-');
afterEach(() => pool.cleanup());

/** The daemon's config as a file that leaves everything out parses to. */
function defaults(): DaemonConfig {
  return Object.fromEntries(
    Object.entries(configSections).map(([name, { schema }]) => [name, schema.parse(undefined)]),
  ) as unknown as DaemonConfig;
}

describe.skipIf(!pgSuitesEnabled())('storage on PostgreSQL', () => {
  it('opens AGENTD_STORAGE_URL over storage.url: refused naming every package without PostgreSQL migrations before touching the database, or started in cluster mode once none is left', async () => {
    const unported = unportedPackages(defaults());
    const url = await freshPgDatabaseUrl('agentd_daemon');
    const dataDir = pool.tempDir();
    const started = pool.start(dataDir, {
      config: { storage: { url: `file:${join(dataDir, 'elsewhere.db')}` } },
      env: { AGENTD_STORAGE_URL: url, AGENTD_MASTER_KEY: 'a1'.repeat(32) },
    });
    if (unported.length === 0) {
      const daemon = await started;
      const status = await createHttpClient({ url: daemon.url, token: ADMIN_TOKEN }).call('gateway.status');
      expect(status.cluster.mode).toBe('postgres');
      return;
    }
    const failure = await started.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isStorageError(failure) && failure.code).toBe('MIGRATION_INVALID');
    expect((failure as Error).message).toContain(`cannot start: ${unported.join(', ')} `);
    const tables = await withDatabase(url, (db) =>
      db.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"),
    );
    expect(tables).toEqual([]);
  });
});

describe('unported packages', () => {
  it('names every store without a pg list, and a disabled one not at all', () => {
    const config = defaults();
    const up = { version: 1, name: 'tables', up: 'CREATE TABLE t (id TEXT)' };
    const stores = [
      { name: 'libsql-only', migrations: [up] },
      { name: 'both', migrations: { libsql: [up], pg: [up] } },
      { name: 'no-pg-list', migrations: { libsql: [up] } },
      { name: 'a-file', migrations: undefined },
      { name: 'switched-off', migrations: [up], enabled: () => false },
    ];
    expect(unportedPackages(config, stores)).toEqual(['libsql-only', 'no-pg-list', 'a-file']);
    const memoryOff = unportedPackages({ ...config, memory: { ...config.memory, enabled: false } });
    expect(memoryOff).not.toContain('@agentd/memory-store');
  });
});
