import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { isSecretsError } from './errors.js';
import { openSecrets, type Secrets } from './secrets.js';

const dirs = tempDirs('agentd-secrets-');
const opened: Secrets[] = [];
afterEach(async () => {
  for (const secrets of opened.splice(0)) await secrets.close();
  dirs.removeAll();
});

async function open(dataDir: string, env: NodeJS.ProcessEnv): Promise<Secrets> {
  const secrets = await openSecrets({ dataDir, env });
  opened.push(secrets);
  return secrets;
}

describe('openSecrets', () => {
  it('with a master key, writes the encrypted store and looks up the store, then the environment', async () => {
    const dir = dirs.make();
    const secrets = await open(dir, {
      AGENTD_MASTER_KEY: randomBytes(32).toString('hex'),
      FROM_ENV: 'env-value',
    });
    expect(secrets.storage).toBe('encrypted');
    expect(secrets.masterKeySource).toBe('env');
    expect(await secrets.set('SHARED', 'store-value')).toEqual({ created: true, storage: 'encrypted' });
    expect(await secrets.lookup('SHARED')).toBe('store-value');
    expect(await secrets.lookup('FROM_ENV')).toBe('env-value');
    expect(await secrets.lookup('NOWHERE')).toBeUndefined();
    expect(await secrets.has('FROM_ENV')).toBe(true);
    expect(await secrets.has('NOWHERE')).toBe(false);
    // The store wins over the environment for the same name.
    const both = await open(dirs.make(), {
      AGENTD_MASTER_KEY: randomBytes(32).toString('hex'),
      SHARED: 'env',
    });
    await both.set('SHARED', 'store');
    expect(await both.lookup('SHARED')).toBe('store');
    expect(readdirSync(dir)).not.toContain('.env');
    expect((await secrets.list()).map((entry) => [entry.name, entry.storage, entry.usageCount])).toEqual([
      ['SHARED', 'encrypted', 1],
    ]);
  });

  it('without a master key, writes <data dir>/.env owner-only and reads it back', async () => {
    const dir = dirs.make();
    const secrets = await open(dir, {});
    expect(secrets.storage).toBe('env-file');
    const tricky = 'line one\nline "two" # not a comment = still value';
    expect(await secrets.set('MULTI_LINE', tricky)).toEqual({ created: true, storage: 'env-file' });
    expect(await secrets.set('PLAIN', 'p')).toEqual({ created: true, storage: 'env-file' });
    expect(await secrets.set('PLAIN', 'q')).toEqual({ created: false, storage: 'env-file' });
    expect(statSync(join(dir, '.env')).mode & 0o777).toBe(0o600);
    expect(await secrets.lookup('MULTI_LINE')).toBe(tricky);
    expect(await secrets.lookup('PLAIN')).toBe('q');
    expect(await secrets.list({ filter: 'M*' })).toEqual([{ name: 'MULTI_LINE', storage: 'env-file' }]);
    // No temp file is left behind and the file is re-read after another process writes it.
    expect(readdirSync(dir)).toEqual(['.env']);
    writeFileSync(join(dir, '.env'), `${readFileSync(join(dir, '.env'), 'utf8')}HAND_WRITTEN=abc\n`);
    expect(await secrets.lookup('HAND_WRITTEN')).toBe('abc');
    // Concurrent sets of one process never lose each other's line.
    await Promise.all(Array.from({ length: 10 }, (_, i) => secrets.set(`PARALLEL_${i}`, `v${i}`)));
    expect(await secrets.list({ filter: 'PARALLEL_*' })).toHaveLength(10);
  });

  it('fails to open with a bad AGENTD_MASTER_KEY instead of falling back to the env file', async () => {
    const failure = await openSecrets({ dataDir: dirs.make(), env: { AGENTD_MASTER_KEY: 'short' } }).catch(
      (error: unknown) => error,
    );
    expect(isSecretsError(failure, 'MASTER_KEY_INVALID')).toBe(true);
  });
});
