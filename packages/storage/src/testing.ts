import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type Database, openDatabase } from './database.js';
import type { Dialect, Migration } from './migrations.js';
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
