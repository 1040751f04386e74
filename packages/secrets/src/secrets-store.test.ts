import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '@agentd/storage';
import { tempDirs } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { isSecretsError } from './errors.js';
import { openSecretsStore, type SecretsStore } from './secrets-store.js';

const dirs = tempDirs('agentd-secrets-');
const stores: SecretsStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  dirs.removeAll();
});

async function open(dataDir: string, masterKey: string): Promise<SecretsStore> {
  const store = await openSecretsStore({ dataDir, masterKey });
  stores.push(store);
  return store;
}

const KEY_A = randomBytes(32).toString('hex');
const KEY_B = randomBytes(48).toString('base64');
const PLANTED = 'sk-planted-7f3e9a1c0b2d4e6f';

/** Every file of `dir` (the database and its WAL included), as raw bytes. */
function allBytes(dir: string): Buffer {
  return Buffer.concat(readdirSync(dir).map((name) => readFileSync(join(dir, name))));
}

describe('openSecretsStore', () => {
  it('stores and reads back a value, counting uses, with the file private and never in clear', async () => {
    const dir = dirs.make();
    const store = await open(dir, KEY_A);
    expect(await store.set('OPENAI_KEY', PLANTED)).toEqual({ created: true });
    expect(await store.set('OPENAI_KEY', `${PLANTED}-2`)).toEqual({ created: false });
    expect(await store.get('OPENAI_KEY')).toBe(`${PLANTED}-2`);
    expect(await store.get('OPENAI_KEY')).toBe(`${PLANTED}-2`);
    expect(await store.get('MISSING')).toBeUndefined();
    expect(await store.has('OPENAI_KEY')).toBe(true);
    const [info] = await store.list();
    expect(info).toMatchObject({ name: 'OPENAI_KEY', usageCount: 2 });
    expect(info?.lastUsedAt).toEqual(expect.any(String));
    expect(JSON.stringify(await store.list())).not.toContain(PLANTED);

    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).mode & 0o077).toBe(0);
    const bytes = allBytes(dir);
    expect(bytes.includes(Buffer.from(PLANTED))).toBe(false);
    expect(bytes.includes(Buffer.from('OPENAI_KEY'))).toBe(true);
  });

  it('refuses another master key at open with a clear error and leaves the data intact', async () => {
    const dir = dirs.make();
    const store = await open(dir, KEY_A);
    await store.set('TOKEN_ONE', PLANTED);
    await store.close();
    const before = readFileSync(join(dir, 'secrets.db'));

    const failure = await openSecretsStore({ dataDir: dir, masterKey: KEY_B }).catch(
      (error: unknown) => error,
    );
    expect(isSecretsError(failure, 'WRONG_MASTER_KEY')).toBe(true);
    expect((failure as Error).message).toMatch(/master key does not open .*secrets\.db/);
    expect((failure as Error).message).not.toContain(KEY_B);
    expect(readFileSync(join(dir, 'secrets.db')).equals(before)).toBe(true);

    const again = await open(dir, KEY_A);
    expect(await again.get('TOKEN_ONE')).toBe(PLANTED);
  });

  it('refuses a record whose ciphertext was changed, and one moved to another name', async () => {
    const dir = dirs.make();
    const store = await open(dir, KEY_A);
    await store.set('FIRST', PLANTED);
    await store.set('SECOND', 'another-value');
    await store.close();

    const raw = await openDatabase({ dataDir: dir, fileName: 'secrets.db' });
    const row = await raw.get<{ ciphertext: ArrayBuffer }>(
      "SELECT ciphertext FROM secrets WHERE name = 'FIRST'",
    );
    const flipped = Buffer.from(new Uint8Array(row?.ciphertext ?? new ArrayBuffer(1)));
    flipped[0] = (flipped[0] ?? 0) ^ 0x01;
    await raw.execute("UPDATE secrets SET ciphertext = ? WHERE name = 'FIRST'", [flipped]);
    // SECOND's record copied over to a third name: the name is authenticated, so it must not open.
    await raw.execute(
      "INSERT INTO secrets SELECT 'THIRD', salt, iv, ciphertext, tag, created_at, updated_at, NULL, 0 FROM secrets WHERE name = 'SECOND'",
    );
    await raw.close();

    const reopened = await open(dir, KEY_A);
    const tampered = await reopened.get('FIRST').catch((error: unknown) => error);
    expect(isSecretsError(tampered, 'TAMPERED')).toBe(true);
    expect(String((tampered as Error).message)).not.toContain(PLANTED);
    expect(isSecretsError(await reopened.get('THIRD').catch((error: unknown) => error), 'TAMPERED')).toBe(
      true,
    );
    expect(await reopened.get('SECOND')).toBe('another-value');
    // A failed rotation changes nothing.
    expect(isSecretsError(await reopened.rotateKey(KEY_B).catch((error: unknown) => error), 'TAMPERED')).toBe(
      true,
    );
    expect(await reopened.get('SECOND')).toBe('another-value');
  });

  it('re-encrypts every secret under a new key: the new key reads them all, the old one is refused', async () => {
    const dir = dirs.make();
    const store = await open(dir, KEY_A);
    const values = new Map(Array.from({ length: 20 }, (_, i) => [`NAME_${i}`, `value-${i}-${PLANTED}`]));
    for (const [name, value] of values) await store.set(name, value);
    expect(await store.rotateKey(KEY_B)).toEqual({ rotated: 20 });
    // The same handle now works under the new key.
    expect(await store.get('NAME_3')).toBe(values.get('NAME_3'));
    await store.close();

    expect(
      isSecretsError(
        await openSecretsStore({ dataDir: dir, masterKey: KEY_A }).catch((error: unknown) => error),
        'WRONG_MASTER_KEY',
      ),
    ).toBe(true);
    const rotated = await open(dir, KEY_B);
    for (const [name, value] of values) expect(await rotated.get(name)).toBe(value);
  });

  it('validates names and values and refuses short master keys', async () => {
    const store = await open(dirs.make(), KEY_A);
    for (const name of ['lower', '1ABC', 'A-B', '__proto__', 'A'.repeat(257)]) {
      expect(
        isSecretsError(await store.set(name, 'v').catch((error: unknown) => error), 'INVALID_NAME'),
      ).toBe(true);
    }
    for (const value of ['', '[REDACTED]', 'x'.repeat(8193)]) {
      expect(
        isSecretsError(await store.set('OK', value).catch((error: unknown) => error), 'INVALID_VALUE'),
      ).toBe(true);
    }
    expect(await store.set('A'.repeat(256), 'x'.repeat(8192))).toEqual({ created: true });
    expect(await store.list({ filter: 'A*', limit: 1 })).toHaveLength(1);
    expect(await store.list({ filter: 'B*' })).toEqual([]);
    const short = await openSecretsStore({ dataDir: dirs.make(), masterKey: 'abcd' }).catch(
      (error: unknown) => error,
    );
    expect(isSecretsError(short, 'MASTER_KEY_INVALID')).toBe(true);
  });
});
