import { randomBytes } from 'node:crypto';
import { type Database, openDatabase } from './database.js';
import type { Dialect } from './migrations.js';
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

/**
 * A fresh database of `dialect` for one test or suite: a libsql file in `dataDir`, or a new
 * database on the PostgreSQL test server (see {@link freshPgDatabaseUrl}).
 */
export async function openTestDatabase(
  dialect: Dialect,
  dataDir: string,
  options: Omit<OpenDatabaseOptions, 'url' | 'dataDir'> = {},
): Promise<Database> {
  if (dialect === 'pg') return openDatabase({ ...options, url: await freshPgDatabaseUrl() });
  return openDatabase({ ...options, dataDir });
}
