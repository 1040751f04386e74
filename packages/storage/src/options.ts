import type { MigrationSet } from './migrations.js';
import { z } from 'zod';
import type { StorageLogger } from './logger.js';

/**
 * The `storage` section of the agentd config file.
 *
 * `authToken` is normally a secret reference such as `${secret:TURSO_TOKEN}`;
 * the daemon resolves it before calling {@link openDatabase}, which refuses an
 * unresolved reference rather than sending it to a server.
 */
export const storageSectionSchema = z
  .object({
    /**
     * `file:<path>`, `libsql://…`, `http(s)://…`, `ws(s)://…`, or `postgres(ql)://…` for
     * PostgreSQL (cluster mode). The env var `AGENTD_STORAGE_URL` overrides it.
     * @default `file:<dataDir>/agentd.db`
     */
    url: z.string().min(1).optional(),
    /** Token for a remote server, usually a `${secret:NAME}` reference. */
    authToken: z.string().min(1).optional(),
    /**
     * SQLite busy_timeout for each attempt on a local file, in milliseconds.
     * @default 5000
     */
    busyTimeoutMs: z.number().int().min(0).max(600_000).default(5000),
    /**
     * Total time a write may keep retrying while another process holds the lock.
     * @default 30000
     */
    busyRetryMs: z.number().int().min(0).max(3_600_000).default(30_000),
    /**
     * SQLite `synchronous` for local files; `normal` is durable against process
     * crashes in WAL mode and loses at most the last commits on power loss.
     * @default 'normal'
     */
    synchronous: z.enum(['normal', 'full']).default('normal'),
    /**
     * PostgreSQL only: the most connections the pool opens (10 when absent).
     */
    poolMax: z.number().int().min(1).max(1000).optional(),
  })
  .strict();

/** The parsed `storage` config section (defaults filled in). */
export type StorageSection = z.output<typeof storageSectionSchema>;

/**
 * The `cluster` config section: how this instance takes part when the storage URL is
 * `postgres://…` (cluster mode). Every key is optional; a key set with a `libsql://` or
 * `http(s)://` server URL is refused by the daemon (that is no cluster engine).
 */
export const clusterSectionSchema = z
  .object({
    /** This instance's id, unique among live instances. @default a random UUID per start */
    instanceId: z
      .string()
      .regex(/^[A-Za-z0-9._:-]{1,128}$/, 'use 1-128 of A-Z a-z 0-9 . _ : -')
      .optional(),
    /** The URL peers and operators reach this instance at. @default the URL it listens on */
    advertiseUrl: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional(),
    /** How long membership and owned-row leases last without renewal, ms. @default 10000 */
    leaseMs: z.number().int().min(1000).max(600_000).optional(),
    /**
     * Joins a cluster whose live members hash a section differently (logged instead of
     * refused), for a rolling config change. @default false
     */
    allowConfigSkew: z.boolean().optional(),
  })
  .strict();

/** The parsed `cluster` config section. */
export type ClusterSection = z.output<typeof clusterSectionSchema>;

/** @internal The serialisable part of {@link OpenDatabaseOptions}, validated at the boundary. */
export const openDatabaseOptionsSchema = z
  .object({
    url: z.string().min(1).optional(),
    dataDir: z.string().min(1).optional(),
    fileName: z.string().min(1).default('agentd.db'),
    authToken: z.string().min(1).optional(),
    busyTimeoutMs: z.number().int().min(0).max(600_000).default(5000),
    busyRetryMs: z.number().int().min(0).max(3_600_000).default(30_000),
    synchronous: z.enum(['normal', 'full']).default('normal'),
    readConcurrency: z.number().int().min(1).max(64).default(4),
    poolMax: z.number().int().min(1).max(1000).default(10),
  })
  .refine((options) => options.url !== undefined || options.dataDir !== undefined, {
    message: 'either url or dataDir is required',
  });

/** Options for {@link openDatabase}. Give `url`, or `dataDir` (and optionally `fileName`). */
export interface OpenDatabaseOptions {
  /**
   * Where the database lives: `file:<path>`, `:memory:`, `libsql://…`,
   * `http(s)://…` or `ws(s)://…`. Takes precedence over `dataDir`.
   */
  url?: string | undefined;
  /** Directory holding the database file; created when missing. Used when `url` is absent. */
  dataDir?: string | undefined;
  /**
   * File name inside `dataDir`.
   * @default 'agentd.db'
   */
  fileName?: string | undefined;
  /** Token for a remote server, already resolved from its secret reference. */
  authToken?: string | undefined;
  /**
   * SQLite busy_timeout for each attempt on a local file, in milliseconds.
   * The wait happens inside the native call and blocks the event loop.
   * @default 5000
   */
  busyTimeoutMs?: number | undefined;
  /**
   * Total time an operation may keep retrying BUSY/LOCKED before it fails with `BUSY`.
   * @default 30000
   */
  busyRetryMs?: number | undefined;
  /**
   * SQLite `synchronous` for local files.
   * @default 'normal'
   */
  synchronous?: 'normal' | 'full' | undefined;
  /**
   * How many read transactions may be open at once on a local file.
   * @default 4
   */
  readConcurrency?: number | undefined;
  /**
   * PostgreSQL only: the most connections the pool opens.
   * @default 10
   */
  poolMax?: number | undefined;
  /**
   * Receives open, retry, migration and batch-failure events.
   * @default a logger that drops everything
   */
  logger?: StorageLogger | undefined;
  /**
   * Clock in epoch milliseconds, used for `applied_at` and retry budgets.
   * @default Date.now
   */
  now?: (() => number) | undefined;
  /**
   * Source of randomness in [0, 1) for retry jitter.
   * @default Math.random
   */
  random?: (() => number) | undefined;
  /**
   * Migrations to run at open, per package name, in key order (same rules as
   * `db.migrate`). A failure closes the database and rejects the open, so a
   * caller never holds a handle on a schema it cannot use.
   * @default none
   */
  migrations?: Readonly<Record<string, MigrationSet>> | undefined;
}
