import { randomBytes } from 'node:crypto';
import { chmodSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs, thrownBy } from '@agentd/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { isSecretsError } from './errors.js';
import { loadMasterKey, parseMasterKey, readMasterKeyFile } from './master-key.js';

const dirs = tempDirs('agentd-key-');
afterEach(() => dirs.removeAll());

function keyFile(text: string, mode: number): string {
  const path = join(dirs.make(), 'master.key');
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

describe('parseMasterKey', () => {
  it('reads hex and base64 (standard and URL-safe) of at least 32 bytes', () => {
    const raw = randomBytes(32);
    expect(parseMasterKey(raw.toString('hex')).equals(raw)).toBe(true);
    expect(parseMasterKey(` ${raw.toString('base64')}\n`).equals(raw)).toBe(true);
    expect(parseMasterKey(raw.toString('base64url')).equals(raw)).toBe(true);
  });

  it('refuses short keys and other text without echoing them', () => {
    for (const text of ['', 'ab'.repeat(31), randomBytes(16).toString('base64'), 'not a key at all!!']) {
      const caught = thrownBy(() => parseMasterKey(text, 'AGENTD_MASTER_KEY'));
      expect(isSecretsError(caught, 'MASTER_KEY_INVALID')).toBe(true);
      expect((caught as Error).message).toContain(
        'AGENTD_MASTER_KEY must be hex or base64 of at least 32 bytes',
      );
      if (text.length > 0) expect((caught as Error).message).not.toContain(text);
    }
  });
});

describe('readMasterKeyFile', () => {
  it('reads an owner-only file and refuses one group or others may read', () => {
    const hex = randomBytes(32).toString('hex');
    expect(readMasterKeyFile(keyFile(`${hex}\n`, 0o600)).toString('hex')).toBe(hex);
    expect(readMasterKeyFile(keyFile(hex, 0o400)).toString('hex')).toBe(hex);
    for (const mode of [0o644, 0o640, 0o604]) {
      const path = keyFile(hex, mode);
      const caught = thrownBy(() => readMasterKeyFile(path));
      expect(isSecretsError(caught, 'MASTER_KEY_FILE_INSECURE')).toBe(true);
      expect((caught as Error).message).toContain(`has mode 0${mode.toString(8)}; it must be 0600`);
    }
  });

  it('refuses a symlink and a missing file', () => {
    const target = keyFile(randomBytes(32).toString('hex'), 0o600);
    const link = `${target}.link`;
    symlinkSync(target, link);
    expect(() => readMasterKeyFile(link)).toThrow(/Cannot read the master key file/);
    expect(() => readMasterKeyFile(`${target}.missing`)).toThrow(/Cannot read the master key file/);
  });
});

describe('loadMasterKey', () => {
  it('prefers AGENTD_MASTER_KEY, then the key file, else none', () => {
    const fromEnv = randomBytes(32);
    const fromFile = randomBytes(32);
    const path = keyFile(fromFile.toString('hex'), 0o600);
    expect(loadMasterKey({ env: { AGENTD_MASTER_KEY: fromEnv.toString('hex') }, keyFile: path })).toEqual({
      key: fromEnv,
      source: 'env',
    });
    expect(loadMasterKey({ env: {}, keyFile: path })).toEqual({ key: fromFile, source: 'file' });
    expect(loadMasterKey({ env: {} })).toBeUndefined();
  });
});
