import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { SecretsError } from './errors.js';

/** The environment variable that carries the master key. */
export const MASTER_KEY_ENV = 'AGENTD_MASTER_KEY';
/** Fewest bytes a master key may have. */
export const MASTER_KEY_MIN_BYTES = 32;

/** Where a master key came from. */
export type MasterKeySource = 'env' | 'file';

/** A master key and where it came from. */
export interface MasterKey {
  key: Buffer;
  source: MasterKeySource;
}

const hexPattern = /^(?:[0-9a-fA-F]{2})+$/;
const base64Pattern = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/;

/**
 * Reads a master key written as hex or base64 (standard or URL-safe), surrounding white space
 * ignored. Hex wins when the text is both.
 * @throws SecretsError `MASTER_KEY_INVALID` (the message never holds the text) when it is
 * neither or decodes to fewer than 32 bytes.
 */
export function parseMasterKey(text: string, origin = 'the master key'): Buffer {
  const trimmed = text.trim();
  let key: Buffer | undefined;
  if (hexPattern.test(trimmed)) key = Buffer.from(trimmed, 'hex');
  else if (trimmed.length > 0 && base64Pattern.test(trimmed)) key = Buffer.from(trimmed, 'base64');
  if (!key || key.length < MASTER_KEY_MIN_BYTES) {
    throw new SecretsError(
      'MASTER_KEY_INVALID',
      `${origin} must be hex or base64 of at least ${MASTER_KEY_MIN_BYTES} bytes (generate one with: openssl rand -hex 32)`,
    );
  }
  return key;
}

/**
 * Reads the master key file at `path`. The file must be a regular file of this user with no
 * permission for group or others (0600 or 0400): a key others can read protects nothing.
 * @throws SecretsError `MASTER_KEY_FILE_INSECURE`, `MASTER_KEY_FILE_UNREADABLE` or `MASTER_KEY_INVALID`.
 */
export function readMasterKeyFile(path: string): Buffer {
  let fd: number;
  try {
    // O_NOFOLLOW: the mode checked must be the key file's own, not a symlink target's.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    throw new SecretsError('MASTER_KEY_FILE_UNREADABLE', `Cannot read the master key file ${path}`, {
      cause: error,
      data: { path },
    });
  }
  try {
    const stat = fstatSync(fd);
    const mode = stat.mode & 0o777;
    if (!stat.isFile()) {
      throw new SecretsError(
        'MASTER_KEY_FILE_INSECURE',
        `The master key file ${path} is not a regular file`,
        {
          data: { path },
        },
      );
    }
    if ((mode & 0o077) !== 0) {
      throw new SecretsError(
        'MASTER_KEY_FILE_INSECURE',
        `The master key file ${path} has mode 0${mode.toString(8)}; it must be 0600 (chmod 600 ${path})`,
        { data: { path, mode: `0${mode.toString(8)}` } },
      );
    }
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) {
      throw new SecretsError(
        'MASTER_KEY_FILE_INSECURE',
        `The master key file ${path} belongs to another user; it must be owned by the user running agentd`,
        { data: { path } },
      );
    }
    return parseMasterKey(readFileSync(fd, 'utf8'), `The master key file ${path}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * The configured master key: `AGENTD_MASTER_KEY` from `env` first, else the file named by
 * `keyFile`, else `undefined` (secrets then go to the env-file fallback).
 */
export function loadMasterKey(options: {
  env?: NodeJS.ProcessEnv | undefined;
  keyFile?: string | undefined;
}): MasterKey | undefined {
  const fromEnv = options.env?.[MASTER_KEY_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    return { key: parseMasterKey(fromEnv, MASTER_KEY_ENV), source: 'env' };
  }
  if (options.keyFile) return { key: readMasterKeyFile(options.keyFile), source: 'file' };
  return undefined;
}
