/**
 * The PostgreSQL server a benchmark measures: `AGENTD_BENCH_PG_URL` when set, else a throwaway
 * server started with `tooling/scripts/pg-test-server.sh` with fsync on (stopped by `stop`).
 * Shared by the storage benchmark and the daemon's cluster benchmark.
 */
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/index.js';

const root = join(import.meta.dirname, '..', '..', '..');
const script = join(root, 'tooling', 'scripts', 'pg-test-server.sh');

/** The server URL, and how to stop it when this run started it. */
export function postgres(): { url: string; stop: () => void } {
  const given = process.env.AGENTD_BENCH_PG_URL;
  if (given) return { url: given, stop: () => undefined };
  const state = join(tmpdir(), `agentd-bench-pg-${process.pid}.dir`);
  const env = { ...process.env, PG_TEST_FSYNC: 'on', PG_TEST_STATE: state };
  const started = spawnSync('bash', [script, 'start'], { env, encoding: 'utf8' });
  const url = /AGENTD_TEST_PG_URL=(\S+)/.exec(started.stdout ?? '')?.[1];
  if (started.status !== 0 || url === undefined) {
    throw new Error(
      `PostgreSQL did not start (set AGENTD_BENCH_PG_URL to use a running one): ${started.stderr}`,
    );
  }
  return { url, stop: () => void spawnSync('bash', [script, 'stop'], { env, stdio: 'inherit' }) };
}

/**
 * (Re)creates database `name` (letters, digits, `_`) on the server, with `synchronous_commit`
 * set for every connection to it when given; answers its URL.
 */
export async function createPgDatabase(
  serverUrl: string,
  name: string,
  synchronousCommit?: 'on' | 'off',
): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a database name: ${name}`);
  const admin = await openDatabase({ url: serverUrl, poolMax: 1 });
  try {
    await admin.execute(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.execute(`CREATE DATABASE ${name}`);
    if (synchronousCommit !== undefined) {
      await admin.execute(`ALTER DATABASE ${name} SET synchronous_commit = ${synchronousCommit}`);
    }
  } finally {
    await admin.close();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
