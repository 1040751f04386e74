import { type Database, type Dialect, openDatabase } from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled } from '@agentd/storage/testing';

/** The dialects the suites run on: libsql always, PostgreSQL when its suites are enabled. */
export const DIALECTS: Dialect[] = pgSuitesEnabled() ? ['libsql', 'pg'] : ['libsql'];

const pgUrls = new Map<string, string>();

/** The database of `dataDir` in `dialect`: its libsql file, or one fresh PostgreSQL database per directory. */
export async function openDialectDatabase(dialect: Dialect, dataDir: string): Promise<Database> {
  if (dialect === 'libsql') return openDatabase({ dataDir });
  let url = pgUrls.get(dataDir);
  if (url === undefined) {
    url = await freshPgDatabaseUrl('agentd_obs');
    pgUrls.set(dataDir, url);
  }
  return openDatabase({ url, poolMax: 4 });
}
