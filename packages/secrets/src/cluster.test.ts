import { randomBytes } from 'node:crypto';
import { freshPgDatabaseUrl, pgSuitesEnabled, withDatabase } from '@agentd/storage/testing';
import { tempDirs } from '@agentd/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSecretsError } from './errors.js';
import { openSecrets } from './secrets.js';
import { openSecretsStore, type SecretsStore } from './secrets-store.js';

const KEY_A = randomBytes(32).toString('hex');
const KEY_B = randomBytes(32).toString('hex');
const PLANTED = 'sk-planted-5c1d9e7a3b';

// Two instances (own data directories) sharing one PostgreSQL database, as a cluster does.
describe.skipIf(!pgSuitesEnabled())('secrets in a cluster (PostgreSQL)', () => {
  const dirs = tempDirs('agentd-secrets-pg-');
  const stores: SecretsStore[] = [];
  let url: string;
  beforeEach(async () => {
    url = await freshPgDatabaseUrl('agentd_secrets');
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    dirs.removeAll();
  });
  const open = async (masterKey: string) => {
    const store = await openSecretsStore({ dataDir: dirs.make(), databaseUrl: url, masterKey });
    stores.push(store);
    return store;
  };

  it('shares the sealed secrets between instances, never in clear in the table', async () => {
    const a = await open(KEY_A);
    const b = await open(KEY_A);
    expect(await a.set('OPENAI_KEY', PLANTED)).toEqual({ created: true });
    await a.set('OTHER_KEY', 'x-1');
    await a.set('OPENAIXKEY', 'x-2');
    expect(await b.get('OPENAI_KEY')).toBe(PLANTED);
    // The glob is a LIKE there: `_` matches itself only, `*` any run, `?` one character.
    expect((await b.list({ filter: 'OPENAI_*' })).map((info) => info.name)).toEqual(['OPENAI_KEY']);
    expect((await b.list({ filter: 'OPENAI?KEY' })).map((info) => info.name)).toEqual([
      'OPENAIXKEY',
      'OPENAI_KEY',
    ]);
    expect((await b.list({ filter: 'openai*' })).map((info) => info.name)).toEqual([]);
    expect(b.path).not.toContain('agentd@');
    const rows = await withDatabase(url, (db) =>
      db.query<{ ciphertext: Buffer }>('SELECT ciphertext FROM secrets'),
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(Buffer.from(row.ciphertext).includes(Buffer.from(PLANTED))).toBe(false);
  });

  it('refuses to start under another master key (the canary), decrypting nothing', async () => {
    const a = await open(KEY_A);
    await a.set('TOKEN_ONE', PLANTED);
    const refused = await open(KEY_B).catch((error: unknown) => error);
    expect(isSecretsError(refused, 'WRONG_MASTER_KEY')).toBe(true);
    expect(String((refused as Error).message)).not.toContain(PLANTED);
    // Two instances starting at once with different keys on an empty database: one canary wins,
    // the other start is refused, never a canary overwritten.
    const fresh = await freshPgDatabaseUrl('agentd_secrets');
    const starts = await Promise.allSettled(
      [KEY_A, KEY_B].map((masterKey) =>
        openSecretsStore({ dataDir: dirs.make(), databaseUrl: fresh, masterKey }).then((store) => {
          stores.push(store);
          return store;
        }),
      ),
    );
    expect(starts.filter((start) => start.status === 'fulfilled')).toHaveLength(1);
    const failed = starts.find((start) => start.status === 'rejected') as PromiseRejectedResult;
    expect(isSecretsError(failed.reason, 'WRONG_MASTER_KEY')).toBe(true);
  });

  it('needs a master key in cluster mode instead of the per-instance env file', async () => {
    const refused = await openSecrets({ dataDir: dirs.make(), databaseUrl: url, env: {} }).catch(
      (error: unknown) => error,
    );
    expect(isSecretsError(refused, 'NO_MASTER_KEY')).toBe(true);
    const secrets = await openSecrets({
      dataDir: dirs.make(),
      databaseUrl: url,
      env: { AGENTD_MASTER_KEY: KEY_A },
    });
    try {
      expect(secrets.storage).toBe('encrypted');
      await secrets.set('SHARED', 'v');
      expect(await (await open(KEY_A)).get('SHARED')).toBe('v');
    } finally {
      await secrets.close();
    }
  });
});
