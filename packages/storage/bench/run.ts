/**
 * storage benchmark: the same `Database` port on the embedded libsql file and on PostgreSQL,
 * side by side in one run (the libsql file is the baseline of every table):
 *
 *   npx -y pnpm@10 bench storage      (from the repository root)
 *
 * 1. One autocommit INSERT at a time.
 * 2. Eight INSERTs in flight (PostgreSQL group-commits them; libsql serialises its writer).
 * 3. A primary-key SELECT at a time.
 * 4. A five-statement write transaction (read, three writes, read).
 *
 * PostgreSQL: `AGENTD_BENCH_PG_URL` when set, else a throwaway server started here with
 * `tooling/scripts/pg-test-server.sh` with fsync on. It is measured twice: with
 * `synchronous_commit = on` (a commit is on disk before it is acknowledged) and `off` (a commit
 * survives a crash of the server process but may be lost with the machine), which is what the
 * libsql file's `synchronous = normal` promises. Loopback TCP, so the network costs nothing
 * here that it costs in a real cluster. Reported, not gated: cluster mode trades speed per
 * call for several instances. `--smoke` shortens every phase.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { interleave, printComparison } from '../../../tooling/bench/harness.js';
import { type Database, openDatabase } from '../src/index.js';
import { createPgDatabase, postgres } from './pg-server.js';

const smoke = process.argv.includes('--smoke');
const timing = smoke
  ? { warmupMs: 200, durationMs: 300, rounds: 1 }
  : { warmupMs: 1000, durationMs: 2000, rounds: 3 };
/** A new database on the server, with `synchronous_commit` set for every connection to it. */
async function pgDatabase(
  serverUrl: string,
  name: string,
  synchronousCommit: 'on' | 'off',
): Promise<Database> {
  return openDatabase({ url: await createPgDatabase(serverUrl, name, synchronousCommit) });
}

async function prepare(db: Database): Promise<void> {
  await db.execute('CREATE TABLE bench (id TEXT PRIMARY KEY, n BIGINT NOT NULL, body TEXT NOT NULL)');
  await db.execute('CREATE TABLE counters (id TEXT PRIMARY KEY, n BIGINT NOT NULL)');
  await db.execute("INSERT INTO counters (id, n) VALUES ('c', 0)");
  for (let i = 0; i < 1000; i++) {
    await db.execute('INSERT INTO bench (id, n, body) VALUES (?, ?, ?)', [`seed-${i}`, i, 'x'.repeat(200)]);
  }
}

/** Runs `op(i)` with `inFlight` calls outstanding for about `ms`; answers how many finished. */
function loop(inFlight: number, op: (i: number) => Promise<unknown>): (ms: number) => Promise<number> {
  let next = 0;
  return async (ms) => {
    const until = performance.now() + ms;
    let done = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (performance.now() < until) {
          await op(next++);
          done++;
        }
      }),
    );
    return done;
  };
}

const body = 'y'.repeat(200);
const operations: Array<[string, (db: Database, tag: string) => (ms: number) => Promise<number>]> = [
  [
    'INSERT, one at a time',
    (db, tag) =>
      loop(1, (i) =>
        db.execute('INSERT INTO bench (id, n, body) VALUES (?, ?, ?)', [`${tag}-a${i}`, i, body]),
      ),
  ],
  [
    'INSERT, 8 in flight',
    (db, tag) =>
      loop(8, (i) =>
        db.execute('INSERT INTO bench (id, n, body) VALUES (?, ?, ?)', [`${tag}-b${i}`, i, body]),
      ),
  ],
  [
    'primary-key SELECT',
    (db) => loop(1, (i) => db.get('SELECT n, body FROM bench WHERE id = ?', [`seed-${i % 1000}`])),
  ],
  [
    '5-statement write transaction',
    (db, tag) =>
      loop(1, (i) =>
        db.transaction(async (tx) => {
          await tx.get("SELECT n FROM counters WHERE id = 'c'");
          await tx.execute("UPDATE counters SET n = n + 1 WHERE id = 'c'");
          await tx.execute('INSERT INTO bench (id, n, body) VALUES (?, ?, ?)', [`${tag}-t${i}`, i, body]);
          await tx.execute('UPDATE bench SET n = n + 1 WHERE id = ?', [`seed-${i % 1000}`]);
          await tx.get('SELECT COUNT(*) AS c FROM bench WHERE n > ?', [i]);
        }),
      ),
  ],
];

const server = postgres();
const dir = mkdtempSync(join(tmpdir(), 'agentd-bench-storage-'));
const subjects: Array<{ name: string; db: Database }> = [];
try {
  subjects.push({ name: 'libsql file (baseline)', db: await openDatabase({ dataDir: dir }) });
  subjects.push({
    name: 'PostgreSQL, synchronous_commit on',
    db: await pgDatabase(server.url, 'agentd_bench_sync', 'on'),
  });
  subjects.push({
    name: 'PostgreSQL, synchronous_commit off',
    db: await pgDatabase(server.url, 'agentd_bench_async', 'off'),
  });
  for (const { db } of subjects) await prepare(db);
  for (const [title, make] of operations) {
    const rows = await interleave(
      subjects.map(({ name, db }, index) => ({ name, runFor: make(db, `s${index}`) })),
      timing,
    );
    printComparison(`${title} (ops/s)`, rows);
  }
} finally {
  for (const { db } of subjects) await db.close();
  rmSync(dir, { recursive: true, force: true });
  server.stop();
}
