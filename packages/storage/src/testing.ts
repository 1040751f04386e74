import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { openCoordination } from './coordination/index.js';
import type { CoordinationOptions, Coordinator } from './coordination/types.js';
import { type Database, openDatabase } from './database.js';
import type { Dialect, Migration, MigrationSet } from './migrations.js';
import type { OpenDatabaseOptions } from './options.js';

/**
 * What the PostgreSQL suites of any package run against: `AGENTD_TEST_PG_URL`, set by
 * `tooling/scripts/pg-test-server.sh` (started by the test command). Without it the suites
 * skip with the reason printed, except under `CI=true`, where {@link requirePgTestUrl} fails
 * them: a CI run never passes by skipping PostgreSQL.
 */
export function pgTestUrl(): string | undefined {
  const url = process.env.AGENTD_TEST_PG_URL;
  if (url !== undefined && url !== '') return url;
  if (process.env.CI === 'true') return undefined;
  console.warn(
    'PostgreSQL suites skipped: AGENTD_TEST_PG_URL is not set (start one with ' +
      '`bash tooling/scripts/pg-test-server.sh start`, or run the README test command)',
  );
  return undefined;
}

/** True when the PostgreSQL suites must run: a URL is set, or CI demands them. */
export function pgSuitesEnabled(): boolean {
  return pgTestUrl() !== undefined || process.env.CI === 'true';
}

/** The server URL; throws (failing the suite) when there is none. */
export function requirePgTestUrl(): string {
  const url = process.env.AGENTD_TEST_PG_URL;
  if (url === undefined || url === '') {
    throw new Error(
      'CI=true and AGENTD_TEST_PG_URL is not set: PostgreSQL did not start (see tooling/scripts/pg-test-server.sh)',
    );
  }
  return url;
}

/**
 * Creates an empty database on the test server and returns its URL, so each suite starts from
 * nothing and suites in parallel forks never see each other's tables.
 */
export async function freshPgDatabaseUrl(prefix = 'agentd_test'): Promise<string> {
  const serverUrl = requirePgTestUrl();
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = await openDatabase({ url: serverUrl, poolMax: 1 });
  try {
    await admin.execute(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The dialects a package's conformance suite runs its test bodies on: libsql always, PostgreSQL
 * when {@link pgSuitesEnabled}. Use with `describe.each` and {@link openTestDatabase}.
 */
export function testDialects(): Dialect[] {
  return pgSuitesEnabled() ? ['libsql', 'pg'] : ['libsql'];
}

/** PostgreSQL databases made for a data directory, so opening it again reopens the same one. */
const pgDatabaseOf = new Map<string, string>();

/**
 * The database of `dataDir` in `dialect` for a test: its libsql file, or on the PostgreSQL test
 * server a database made fresh the first time the directory is opened (see
 * {@link freshPgDatabaseUrl}) and reopened after, as the file would be.
 */
export async function openTestDatabase(
  dialect: Dialect,
  dataDir: string,
  options: Omit<OpenDatabaseOptions, 'url' | 'dataDir'> = {},
): Promise<Database> {
  if (dialect === 'libsql') return openDatabase({ ...options, dataDir });
  let url = pgDatabaseOf.get(dataDir);
  if (url === undefined) {
    url = await freshPgDatabaseUrl();
    pgDatabaseOf.set(dataDir, url);
  }
  return openDatabase({ ...options, url });
}

/**
 * {@link openTestDatabase} as one instance of a cluster has it: on PostgreSQL (pool of 4 unless
 * `options` says) with its own started coordinator, which closes with the handle; on libsql none.
 */
export async function openTestInstance(
  dialect: Dialect,
  dataDir: string,
  options: Omit<OpenDatabaseOptions, 'url' | 'dataDir'> = {},
): Promise<{ db: Database; coordinator: Coordinator | undefined }> {
  if (dialect === 'libsql')
    return { db: await openTestDatabase(dialect, dataDir, options), coordinator: undefined };
  const db = await openTestDatabase(dialect, dataDir, { poolMax: 4, ...options });
  const coordinator = await openCoordination(db);
  await coordinator.start();
  return { db, coordinator };
}

/**
 * The migrations kept in `file`, a JSON list of `{version, name, up}` written as they shipped.
 * A package's test compares the head of its list with it: `_migrations` records only a version
 * and a name, so a migration that ran on users' databases must keep its SQL byte for byte, or a
 * fresh database would no longer get the schema the old ones have.
 */
export function readShippedMigrations(file: URL): Migration[] {
  const shipped: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(shipped) || shipped.length === 0) {
    throw new Error(`${file.pathname} holds no list of shipped migrations`);
  }
  return shipped as Migration[];
}

/** Anything a test opens and must close. */
export interface Closable {
  close(): Promise<unknown>;
}

/** One instance of a cluster run in the test's process: its own pool and a started coordinator. */
export interface TestInstance {
  readonly db: Database;
  readonly coordinator: Coordinator;
  /** Closes `value` when this instance leaves (before its coordinator and pool). */
  track<T extends Closable>(value: T): T;
  /** Closes what the instance opened, newest first; once (later calls do nothing). */
  leave(): Promise<void>;
}

/** The instances of one test, each opened with {@link TestInstances.open}. */
export interface TestInstances {
  /**
   * Opens an instance on `url`: its own pool (`poolMax` 4 unless given), as a separate daemon
   * would have, the `migrate` migrations applied, and a coordinator for `instanceId` started.
   */
  open(
    url: string,
    instanceId: string,
    options?: {
      coordination?: Omit<CoordinationOptions, 'instanceId'>;
      poolMax?: number;
      migrate?: { packageName: string; migrations: MigrationSet };
    },
  ): Promise<TestInstance>;
  /** Closes `value` at {@link TestInstances.closeAll}, before the instances leave. */
  track<T extends Closable>(value: T): T;
  /** Closes everything tracked and makes every instance leave, newest first. */
  closeAll(): Promise<void>;
}

/** Newest first: closes each once, every one even when one fails, then throws the first failure. */
async function closeEach(handles: Closable[]): Promise<void> {
  let failure: { error: unknown } | undefined;
  for (const handle of handles) {
    try {
      await handle.close();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure !== undefined) throw failure.error;
}

/**
 * The instances of a multi-instance test (call `closeAll` in `afterEach`): several pools and
 * coordinators on one database stand for several daemons, without the cost of processes.
 */
export function testInstances(): TestInstances {
  const opened: Closable[] = [];
  const track = <T extends Closable>(value: T): T => {
    opened.unshift(value);
    return value;
  };
  return {
    track,
    async open(url, instanceId, options = {}) {
      const own: Closable[] = [];
      let left: Promise<void> | undefined;
      const leave = () => {
        left ??= closeEach(own.splice(0));
        return left;
      };
      track({ close: leave });
      const ownTrack = <T extends Closable>(value: T): T => {
        own.unshift(value);
        return value;
      };
      const db = ownTrack(await openDatabase({ url, poolMax: options.poolMax ?? 4 }));
      if (options.migrate !== undefined) {
        await db.migrate(options.migrate.packageName, options.migrate.migrations);
      }
      const coordinator = ownTrack(await openCoordination(db, { ...options.coordination, instanceId }));
      await coordinator.start();
      return { db, coordinator, track: ownTrack, leave };
    },
    closeAll: () => closeEach(opened.splice(0)),
  };
}

/**
 * Opens `url` with one connection, answers what `run` answers with it, and closes it whatever
 * happens: for a test that looks at (or empties) the tables of a database other handles use.
 */
export async function withDatabase<T>(url: string, run: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase({ url, poolMax: 1 });
  try {
    return await run(db);
  } finally {
    await db.close();
  }
}
