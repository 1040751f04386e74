import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** One encrypted value as stored: the HKDF salt, the GCM IV, the ciphertext and the tag. */
export interface Sealed {
  salt: Buffer;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

const SALT_BYTES = 16;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
// The info string binds derived keys to this use and format version: the same master key used
// elsewhere with HKDF never yields these keys.
const INFO_PREFIX = 'agentd secrets v1 ';

/**
 * A fresh AES-256 key for one record: HKDF-SHA256 over the master key with the record's own
 * random salt, its name in the info. A leaked record key opens that record only.
 */
function recordKey(masterKey: Buffer, salt: Buffer, name: string): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, salt, `${INFO_PREFIX}${name}`, KEY_BYTES));
}

/**
 * Encrypts `plaintext` for the record `name` with AES-256-GCM under a key derived for it,
 * with a random salt and a random 12-byte IV. The name is the additional authenticated data,
 * so a ciphertext copied to another name fails its tag check.
 */
export function seal(masterKey: Buffer, name: string, plaintext: string): Sealed {
  const salt = randomBytes(SALT_BYTES);
  const iv = randomBytes(IV_BYTES);
  const key = recordKey(masterKey, salt, name);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(name, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const sealed = { salt, iv, ciphertext, tag: cipher.getAuthTag() };
  key.fill(0);
  return sealed;
}

/**
 * Decrypts a record sealed by {@link seal}, or returns `undefined` when the tag does not check
 * out (another master key, a changed byte, a record moved to another name).
 */
export function open(masterKey: Buffer, name: string, sealed: Sealed): string | undefined {
  if (sealed.iv.length !== IV_BYTES || sealed.tag.length !== TAG_BYTES || sealed.salt.length === 0) {
    return undefined;
  }
  const key = recordKey(masterKey, sealed.salt, name);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(name, 'utf8'));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  } finally {
    key.fill(0);
  }
}
