import { join } from 'node:path';
import type { Logger } from '@agentd/contracts';
import {
  type Database,
  type DialectMigrations,
  isPostgresUrl,
  type Migration,
  openDatabase,
  type Queryable,
} from '@agentd/storage';
import { z } from 'zod';
import { SecretsError } from './errors.js';
import { open, type Sealed, seal } from './internal/cipher.js';
import { ensurePrivateFile } from './internal/private-file.js';
import { noopLogger } from './internal/logger.js';
import { SECRET_LIST_DEFAULT, secretFilterSchema, secretNameSchema, secretValueSchema } from './names.js';
import { MASTER_KEY_MIN_BYTES, parseMasterKey } from './master-key.js';

/** Name of the database file inside the data directory. */
export const SECRETS_DB_FILE = 'secrets.db';

/** What is known about a stored secret besides its value. */
export interface SecretInfo {
  name: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601: the last time the value was set. */
  updatedAt: string;
  /** ISO 8601: the last time the value was read for use; `null` when never. */
  lastUsedAt: string | null;
  /** How many times the value was read for use. */
  usageCount: number;
}

/** Options of {@link openSecretsStore}. */
export interface SecretsStoreOptions {
  /** Directory of `secrets.db`; created (0700) when missing. */
  dataDir: string;
  /**
   * Cluster mode: a `postgres://` URL. The secrets live in the `secrets` table of that database
   * (shared by every instance), still sealed here with AES-GCM; `secrets.db` is not used.
   * @default none (the `secrets.db` file)
   */
  databaseUrl?: string | undefined;
  /** The master key: raw bytes, or hex or base64 text of at least 32 bytes. */
  masterKey: Buffer | string;
  /** Clock in epoch milliseconds. @default Date.now */
  now?: (() => number) | undefined;
  /** Receives what was set and rotated, by name only. @default a logger that drops everything */
  logger?: Logger | undefined;
}

/** The encrypted secrets store over `<dataDir>/secrets.db`, or a PostgreSQL table in cluster mode. */
export interface SecretsStore {
  /** Path of the database file, or the database URL without credentials in cluster mode. */
  readonly path: string;
  /** Stores `value` under `name`, replacing an older value; `created` is false for a replacement. */
  set(name: string, value: string): Promise<{ created: boolean }>;
  /**
   * The value of `name` for use (counted: usage count and last-used time), or `undefined`.
   * @throws SecretsError `TAMPERED` when the stored record fails its tag check.
   */
  get(name: string): Promise<string | undefined>;
  /** True when `name` is stored; not counted as a use. */
  has(name: string): Promise<boolean>;
  /** Names and metadata, by name; `filter` is a glob (`OPENAI_*`). Values are never listed. */
  list(options?: { filter?: string | undefined; limit?: number | undefined }): Promise<SecretInfo[]>;
  /** Removes `name`; false when it was not stored. */
  delete(name: string): Promise<boolean>;
  /**
   * Re-encrypts every secret and the canary under `newMasterKey` in one transaction: a crash
   * leaves the store wholly under the old key or wholly under the new one. From the next call
   * this handle uses the new key.
   * @throws SecretsError `TAMPERED` (nothing changed) when a record does not open under the current key.
   */
  rotateKey(newMasterKey: Buffer | string): Promise<{ rotated: number }>;
  /** Closes the database; idempotent. */
  close(): Promise<void>;
}

const optionsSchema = z.object({
  dataDir: z.string().min(1),
  databaseUrl: z
    .string()
    .refine(isPostgresUrl, 'databaseUrl must be a postgres:// or postgresql:// URL')
    .optional(),
  masterKey: z.union([z.string(), z.instanceof(Buffer)]),
  now: z.custom<() => number>((value) => typeof value === 'function').optional(),
  logger: z.custom<Logger>((value) => typeof value === 'object' && value !== null).optional(),
});

const migrations: Migration[] = [
  {
    version: 1,
    name: 'secrets and canary',
    up: [
      `CREATE TABLE secrets (
        name TEXT PRIMARY KEY,
        salt BLOB NOT NULL,
        iv BLOB NOT NULL,
        ciphertext BLOB NOT NULL,
        tag BLOB NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        last_used_at INTEGER,
        usage_count INTEGER NOT NULL DEFAULT 0
      )`,
      `CREATE TABLE secrets_canary (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        salt BLOB NOT NULL,
        iv BLOB NOT NULL,
        ciphertext BLOB NOT NULL,
        tag BLOB NOT NULL,
        created_at INTEGER NOT NULL
      )`,
    ],
  },
];

// The same tables on PostgreSQL (cluster mode): bytes are bytea, epoch-ms columns BIGINT.
const pgMigrations: Migration[] = [
  {
    version: 1,
    name: 'secrets and canary',
    up: [
      `CREATE TABLE secrets (
        name TEXT PRIMARY KEY,
        salt BYTEA NOT NULL,
        iv BYTEA NOT NULL,
        ciphertext BYTEA NOT NULL,
        tag BYTEA NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        last_used_at BIGINT,
        usage_count BIGINT NOT NULL DEFAULT 0
      );
      CREATE TABLE secrets_canary (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        salt BYTEA NOT NULL,
        iv BYTEA NOT NULL,
        ciphertext BYTEA NOT NULL,
        tag BYTEA NOT NULL,
        created_at BIGINT NOT NULL
      );`,
    ],
  },
];

const migrationSet: DialectMigrations = { libsql: migrations, pg: pgMigrations };

// The canary is sealed under a name no secret can have (names start with an upper-case letter).
const CANARY_NAME = '.canary';
const CANARY_TEXT = 'agentd secrets canary v1';

interface SealedRow {
  salt: ArrayBuffer | Uint8Array;
  iv: ArrayBuffer | Uint8Array;
  ciphertext: ArrayBuffer | Uint8Array;
  tag: ArrayBuffer | Uint8Array;
}

function bytes(value: ArrayBuffer | Uint8Array): Buffer {
  return value instanceof Uint8Array ? Buffer.from(value) : Buffer.from(new Uint8Array(value));
}

function sealedOf(row: SealedRow): Sealed {
  return { salt: bytes(row.salt), iv: bytes(row.iv), ciphertext: bytes(row.ciphertext), tag: bytes(row.tag) };
}

function toKey(masterKey: Buffer | string): Buffer {
  if (typeof masterKey === 'string') return parseMasterKey(masterKey);
  if (masterKey.length < MASTER_KEY_MIN_BYTES) {
    throw new SecretsError(
      'MASTER_KEY_INVALID',
      `The master key must have at least ${MASTER_KEY_MIN_BYTES} bytes`,
    );
  }
  return Buffer.from(masterKey);
}

function validName(name: string): string {
  const parsed = secretNameSchema.safeParse(name);
  if (!parsed.success) {
    throw new SecretsError('INVALID_NAME', `Invalid secret name: ${parsed.error.issues[0]?.message}`);
  }
  return parsed.data;
}

/** Checks the canary under `key`, or writes it into an empty store; never overwrites data. */
async function checkCanary(db: Database, key: Buffer, now: number, path: string): Promise<void> {
  await db.transaction(async (tx) => {
    const read = () => tx.get<SealedRow>('SELECT salt, iv, ciphertext, tag FROM secrets_canary WHERE id = 1');
    let canary = await read();
    if (canary === undefined) {
      const count = await tx.get<{ n: number }>('SELECT count(*) AS n FROM secrets');
      if (Number(count?.n ?? 0) > 0) {
        throw new SecretsError(
          'CANARY_MISSING',
          `${path} holds secrets but no canary, so the master key cannot be checked; nothing was changed`,
          { data: { path } },
        );
      }
      // Never over another's: two instances starting at once on one PostgreSQL both find no
      // canary, and the second must check the first's instead of replacing it.
      const sealed = seal(key, CANARY_NAME, CANARY_TEXT);
      await tx.execute(
        `INSERT INTO secrets_canary (id, salt, iv, ciphertext, tag, created_at) VALUES (1, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO NOTHING`,
        [sealed.salt, sealed.iv, sealed.ciphertext, sealed.tag, now],
      );
      canary = await read();
    }
    if (canary) {
      if (open(key, CANARY_NAME, sealedOf(canary)) !== CANARY_TEXT) {
        throw new SecretsError(
          'WRONG_MASTER_KEY',
          `The master key does not open ${path}: its secrets were written under another key. Set the key they were written with (AGENTD_MASTER_KEY or secrets.masterKeyFile); nothing was changed`,
          { data: { path } },
        );
      }
    }
  });
}

async function writeCanary(tx: Queryable, key: Buffer, now: number): Promise<void> {
  const sealed = seal(key, CANARY_NAME, CANARY_TEXT);
  await tx.execute(
    `INSERT INTO secrets_canary (id, salt, iv, ciphertext, tag, created_at) VALUES (1, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET salt = excluded.salt, iv = excluded.iv,
       ciphertext = excluded.ciphertext, tag = excluded.tag`,
    [sealed.salt, sealed.iv, sealed.ciphertext, sealed.tag, now],
  );
}

/**
 * Opens (creating when missing, mode 0600) the encrypted store `<dataDir>/secrets.db` under
 * `masterKey`. A store written under another key is refused before anything is read or written.
 * @throws SecretsError `INVALID_OPTIONS`, `MASTER_KEY_INVALID`, `WRONG_MASTER_KEY` or `CANARY_MISSING`.
 */
export async function openSecretsStore(options: SecretsStoreOptions): Promise<SecretsStore> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new SecretsError(
      'INVALID_OPTIONS',
      `Invalid secrets store options: ${parsed.error.issues[0]?.message}`,
    );
  }
  let key = toKey(options.masterKey);
  const now = options.now ?? Date.now;
  const logger = options.logger ?? noopLogger;
  let db: Database;
  let path: string;
  if (options.databaseUrl !== undefined) {
    db = await openDatabase({
      url: options.databaseUrl,
      poolMax: 2,
      migrations: { '@agentd/secrets': migrationSet },
    });
    path = db.url;
  } else {
    path = join(options.dataDir, SECRETS_DB_FILE);
    ensurePrivateFile(options.dataDir, path);
    db = await openDatabase({
      dataDir: options.dataDir,
      fileName: SECRETS_DB_FILE,
      migrations: { '@agentd/secrets': migrationSet },
    });
  }
  try {
    await checkCanary(db, key, now(), path);
  } catch (error) {
    await db.close();
    throw error;
  }
  let closed = false;
  const usable = (): Database => {
    if (closed) throw new SecretsError('CLOSED', 'The secrets store is closed');
    return db;
  };

  return {
    path,
    async set(name, value) {
      const checkedName = validName(name);
      const checkedValue = secretValueSchema.safeParse(value);
      if (!checkedValue.success) {
        throw new SecretsError(
          'INVALID_VALUE',
          `Invalid value for ${checkedName}: ${checkedValue.error.issues[0]?.message}`,
        );
      }
      const sealed = seal(key, checkedName, checkedValue.data);
      const at = now();
      const result = await usable().transaction(async (tx) => {
        const existing = await tx.get('SELECT 1 AS found FROM secrets WHERE name = ?', [checkedName]);
        await tx.execute(
          `INSERT INTO secrets (name, salt, iv, ciphertext, tag, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (name) DO UPDATE SET salt = excluded.salt, iv = excluded.iv,
             ciphertext = excluded.ciphertext, tag = excluded.tag, updated_at = excluded.updated_at`,
          [checkedName, sealed.salt, sealed.iv, sealed.ciphertext, sealed.tag, at, at],
        );
        return { created: existing === undefined };
      });
      logger.info({ name: checkedName, created: result.created }, 'secret stored');
      return result;
    },

    async get(name) {
      if (!secretNameSchema.safeParse(name).success) return undefined;
      const row = await usable().get<SealedRow>(
        'SELECT salt, iv, ciphertext, tag FROM secrets WHERE name = ?',
        [name],
      );
      if (!row) return undefined;
      const value = open(key, name, sealedOf(row));
      if (value === undefined) {
        throw new SecretsError(
          'TAMPERED',
          `The stored secret ${name} failed its integrity check and was not used`,
          {
            data: { name },
          },
        );
      }
      await db.execute('UPDATE secrets SET usage_count = usage_count + 1, last_used_at = ? WHERE name = ?', [
        now(),
        name,
      ]);
      return value;
    },

    async has(name) {
      if (!secretNameSchema.safeParse(name).success) return false;
      return (await usable().get('SELECT 1 AS found FROM secrets WHERE name = ?', [name])) !== undefined;
    },

    async list(listOptions = {}) {
      const filter = listOptions.filter === undefined ? '*' : secretFilterSchema.parse(listOptions.filter);
      const limit = listOptions.limit ?? SECRET_LIST_DEFAULT;
      // SQLite's GLOB is PostgreSQL's LIKE with `_` escaped (both case-sensitive there).
      const [match, pattern] =
        db.dialect === 'pg'
          ? ["LIKE ? ESCAPE '\\'", filter.replace(/_/g, '\\_').replace(/\*/g, '%').replace(/\?/g, '_')]
          : ['GLOB ?', filter];
      const rows = await usable().query<{
        name: string;
        created_at: number;
        updated_at: number;
        last_used_at: number | null;
        usage_count: number;
      }>(
        `SELECT name, created_at, updated_at, last_used_at, usage_count FROM secrets
         WHERE name ${match} ORDER BY name LIMIT ?`,
        [pattern, limit],
      );
      return rows.map((row) => ({
        name: row.name,
        createdAt: new Date(Number(row.created_at)).toISOString(),
        updatedAt: new Date(Number(row.updated_at)).toISOString(),
        lastUsedAt: row.last_used_at === null ? null : new Date(Number(row.last_used_at)).toISOString(),
        usageCount: Number(row.usage_count),
      }));
    },

    async delete(name) {
      if (!secretNameSchema.safeParse(name).success) return false;
      const result = await usable().execute('DELETE FROM secrets WHERE name = ?', [name]);
      return result.rowsAffected > 0;
    },

    async rotateKey(newMasterKey) {
      const next = toKey(newMasterKey);
      const rotated = await usable().transaction(async (tx) => {
        const rows = await tx.query<SealedRow & { name: string }>(
          'SELECT name, salt, iv, ciphertext, tag FROM secrets',
        );
        for (const row of rows) {
          const value = open(key, row.name, sealedOf(row));
          if (value === undefined) {
            throw new SecretsError(
              'TAMPERED',
              `The stored secret ${row.name} failed its integrity check; no key was rotated`,
              {
                data: { name: row.name },
              },
            );
          }
          const sealed = seal(next, row.name, value);
          await tx.execute('UPDATE secrets SET salt = ?, iv = ?, ciphertext = ?, tag = ? WHERE name = ?', [
            sealed.salt,
            sealed.iv,
            sealed.ciphertext,
            sealed.tag,
            row.name,
          ]);
        }
        await writeCanary(tx, next, now());
        return rows.length;
      });
      key = next;
      logger.info({ count: rotated }, 'secrets master key rotated');
      return { rotated };
    },

    async close() {
      closed = true;
      await db.close();
    },
  };
}
