import type { Logger } from '@agentd/contracts';
import { type EnvFile, openEnvFile } from './env-file.js';
import { SecretsError } from './errors.js';
import { noopLogger } from './internal/logger.js';
import { loadMasterKey, type MasterKeySource } from './master-key.js';
import { SECRET_LIST_DEFAULT } from './names.js';
import { openSecretsStore, type SecretInfo, type SecretsStore } from './secrets-store.js';

/**
 * Where `set` writes: `encrypted` is `secrets.db` under the master key, `env-file` the
 * plain-text `<data dir>/.env` used while no master key is configured.
 */
export type SecretStorage = 'encrypted' | 'env-file';

/** One listed secret: its name, where it lives, and (for the encrypted store) its metadata. */
export type ListedSecret = { name: string; storage: SecretStorage } & Partial<Omit<SecretInfo, 'name'>>;

/** Options of {@link openSecrets}. */
export interface OpenSecretsOptions {
  /** The data directory (`secrets.db`, `.env`). */
  dataDir: string;
  /**
   * Cluster mode: the `postgres://` URL of the shared database. The encrypted secrets live in
   * its `secrets` table (every instance reads the same ones) and a master key is required: the
   * per-instance `.env` fallback is refused, as is a key that does not open the shared canary.
   * @default none (`secrets.db` in the data directory)
   */
  databaseUrl?: string | undefined;
  /** Where `AGENTD_MASTER_KEY` and, last, referenced names are looked up. @default process.env */
  env?: NodeJS.ProcessEnv | undefined;
  /** `secrets.masterKeyFile`: a 0600 file holding the master key. */
  masterKeyFile?: string | undefined;
  /** Clock in epoch milliseconds. @default Date.now */
  now?: (() => number) | undefined;
  /** Receives stores and rotations by name only. @default a logger that drops everything */
  logger?: Logger | undefined;
}

/** The secrets of one data directory, wherever they live, and the lookup of `${secret:NAME}`. */
export interface Secrets {
  /** Where `set` writes. */
  readonly storage: SecretStorage;
  /** Where the master key came from; `undefined` in env-file mode. */
  readonly masterKeySource: MasterKeySource | undefined;
  /** Stores a secret where {@link storage} says. */
  set(name: string, value: string): Promise<{ created: boolean; storage: SecretStorage }>;
  /** Names and metadata of stored secrets (never values), sorted by name. */
  list(options?: { filter?: string | undefined; limit?: number | undefined }): Promise<ListedSecret[]>;
  /**
   * The value a `${secret:NAME}` reference resolves to: the encrypted store first, then the
   * `.env` file, then the environment; `undefined` when none has it. A store read counts as a use.
   */
  lookup(name: string): Promise<string | undefined>;
  /** True when {@link lookup} would find `name`; counts no use. */
  has(name: string): Promise<boolean>;
  /** Closes the encrypted store. */
  close(): Promise<void>;
}

/**
 * Opens the secrets of `dataDir`: with a master key (`AGENTD_MASTER_KEY` or
 * `secrets.masterKeyFile`) the encrypted `secrets.db`, refused at once when written under
 * another key; without one, the `.env` fallback.
 * @throws SecretsError from {@link loadMasterKey} and {@link openSecretsStore}.
 */
export async function openSecrets(options: OpenSecretsOptions): Promise<Secrets> {
  const env = options.env ?? process.env;
  const logger = options.logger ?? noopLogger;
  const master = loadMasterKey({ env, keyFile: options.masterKeyFile });
  if (options.databaseUrl !== undefined && !master) {
    throw new SecretsError(
      'NO_MASTER_KEY',
      'Cluster mode keeps secrets in the shared PostgreSQL database, sealed under the master key: set the same AGENTD_MASTER_KEY (or secrets.masterKeyFile) on every instance',
    );
  }
  const envFile: EnvFile = openEnvFile({ dataDir: options.dataDir });
  let store: SecretsStore | undefined;
  if (master) {
    store = await openSecretsStore({
      dataDir: options.dataDir,
      databaseUrl: options.databaseUrl,
      masterKey: master.key,
      now: options.now,
      logger,
    });
    master.key.fill(0);
  }
  const storage: SecretStorage = store ? 'encrypted' : 'env-file';
  const fromEnv = (name: string): string | undefined =>
    Object.hasOwn(env, name) && env[name] !== '' ? env[name] : undefined;

  return {
    storage,
    masterKeySource: master?.source,
    async set(name, value) {
      const { created } = store ? await store.set(name, value) : await envFile.set(name, value);
      if (!store) logger.info({ name, created }, 'secret written to the env file (no master key)');
      return { created, storage };
    },
    async list(listOptions = {}) {
      const limit = listOptions.limit ?? SECRET_LIST_DEFAULT;
      if (store) {
        const infos = await store.list({ filter: listOptions.filter, limit });
        return infos.map((info) => ({ ...info, storage: 'encrypted' as const }));
      }
      return envFile
        .list({ filter: listOptions.filter, limit })
        .map((name) => ({ name, storage: 'env-file' as const }));
    },
    async lookup(name) {
      return (await store?.get(name)) ?? envFile.get(name) ?? fromEnv(name);
    },
    async has(name) {
      return (
        (await store?.has(name)) === true || envFile.get(name) !== undefined || fromEnv(name) !== undefined
      );
    },
    async close() {
      await store?.close();
    },
  };
}
