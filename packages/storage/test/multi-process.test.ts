import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase, StorageError } from '../src/index.js';
import { recordingLogger } from '@agentd/test-support';
import { makeTempDir } from './helpers.js';
import { startFixture, stopFixtures } from './processes.js';

let temp: ReturnType<typeof makeTempDir>;
let url: string;
const open: Database[] = [];

async function openHere(options: Omit<Parameters<typeof openDatabase>[0], 'url'> = {}): Promise<Database> {
  const db = await openDatabase({ url, ...options });
  open.push(db);
  return db;
}

beforeEach(async () => {
  temp = makeTempDir();
  url = `file:${join(temp.dir, 'agentd.db')}`;
  const db = await openHere();
  await db.migrate('@agentd/storage-test', [
    {
      version: 1,
      name: 'tables',
      up: [
        'CREATE TABLE counter (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)',
        'INSERT INTO counter VALUES (1, 0)',
        'CREATE TABLE events (id INTEGER PRIMARY KEY, writer TEXT NOT NULL, step INTEGER NOT NULL)',
        'CREATE TABLE held (id INTEGER PRIMARY KEY, body TEXT NOT NULL)',
      ],
    },
  ]);
});

afterEach(async () => {
  await stopFixtures();
  await Promise.all(open.splice(0).map((db) => db.close()));
  temp.remove();
});

describe('openDatabase across processes', () => {
  it('lets two other processes and this one write concurrently without losing a write or surfacing BUSY', async () => {
    // A 5 ms native busy timeout forces most conflicts through the async retry loop.
    const db = await openHere({ busyTimeoutMs: 5 });
    const perChild = 150;
    const children = ['alpha', 'beta'].map((label) =>
      startFixture('hammer.ts', [url, label, String(perChild), '5']),
    );
    await Promise.all(children.map((child) => child.waitForLine('ready')));
    for (const child of children) child.send('go');

    const local = 150;
    const ownWrites = Array.from({ length: local }, (_, index) =>
      db.transaction(async (tx) => {
        const row = await tx.get<{ value: number }>('SELECT value FROM counter WHERE id = 1');
        await tx.execute('UPDATE counter SET value = ? WHERE id = 1', [row!.value + 1]);
        await tx.execute(`INSERT INTO events (writer, step) VALUES ('parent', ?)`, [index]);
      }),
    );
    const outcomes = await Promise.allSettled(ownWrites);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    for (const child of children) {
      const status = await child.exited;
      expect({ status, output: child.output() }).toMatchObject({ status: { code: 0 } });
    }

    const total = local + 2 * perChild;
    expect(await db.get('SELECT value FROM counter WHERE id = 1')).toEqual({ value: total });
    expect(await db.get(`SELECT COUNT(*) AS n FROM events WHERE writer NOT LIKE '%-plain'`)).toEqual({
      n: total,
    });
    expect(await db.get(`SELECT COUNT(*) AS n FROM events WHERE writer LIKE '%-plain'`)).toEqual({
      n: 2 * (perChild / 10),
    });
  });

  it('leaves no partial rows when a process is killed in the middle of a transaction', async () => {
    // Enough rows to overflow the page cache, so uncommitted pages reach the WAL file.
    const child = startFixture('hold-transaction.mjs', [url, '4000']);
    await child.waitForLine('holding');
    child.process.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');

    const reopened = await openHere({ busyTimeoutMs: 1000 });
    expect(await reopened.get('SELECT COUNT(*) AS n FROM held')).toEqual({ n: 0 });
    expect(await reopened.get('PRAGMA integrity_check')).toEqual({ integrity_check: 'ok' });
    await reopened.execute(`INSERT INTO held (body) VALUES ('after the crash')`);
    expect(await reopened.get('SELECT COUNT(*) AS n FROM held')).toEqual({ n: 1 });
  });

  it('waits busy_timeout inside each attempt before reporting the lock as busy', async () => {
    const child = startFixture('hold-transaction.mjs', [url, '1']);
    await child.waitForLine('holding');
    const db = await openHere({ busyTimeoutMs: 200, busyRetryMs: 0 });
    const started = Date.now();
    const error = await db
      .execute(`INSERT INTO events (writer, step) VALUES ('parent', 1)`)
      .catch((e: unknown) => e);
    const waited = Date.now() - started;
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe('BUSY');
    // A lower bound only: the native handler must have waited before giving up.
    expect(waited).toBeGreaterThanOrEqual(150);
    child.send('rollback');
    await child.waitForLine('rolled back');
  });

  it('gives up with BUSY once the retry budget is spent, and recovers when the lock is released', async () => {
    const child = startFixture('hold-transaction.mjs', [url, '1']);
    await child.waitForLine('holding');
    const db = await openHere({ busyTimeoutMs: 10, busyRetryMs: 300 });
    const error = await db
      .transaction(async (tx) => tx.execute(`INSERT INTO events (writer, step) VALUES ('parent', 1)`))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe('BUSY');
    expect((error as StorageError).data?.attempts).toBeGreaterThan(1);
    expect((error as StorageError).data?.retryable).toBeUndefined();

    child.send('commit');
    await child.waitForLine('committed');
    await db.execute(`INSERT INTO events (writer, step) VALUES ('parent', 2)`);
    expect(await db.get('SELECT COUNT(*) AS n FROM held')).toEqual({ n: 1 });
    expect(await db.get('SELECT COUNT(*) AS n FROM events')).toEqual({ n: 1 });
  });

  it('reports BUSY for a statement that must run alone and keeps the writer usable afterwards', async () => {
    const child = startFixture('hold-transaction.mjs', [url, '1']);
    await child.waitForLine('holding');
    const db = await openHere({ busyTimeoutMs: 10, busyRetryMs: 200 });
    const error = await db.execute('VACUUM').catch((e: unknown) => e);
    expect((error as StorageError).code).toBe('BUSY');
    child.send('rollback');
    await child.waitForLine('rolled back');
    await db.execute(`INSERT INTO events (writer, step) VALUES ('after vacuum', 1)`);
    const observer = await openHere();
    expect(await observer.get('SELECT COUNT(*) AS n FROM events')).toEqual({ n: 1 });
    expect(await db.get('PRAGMA synchronous')).toEqual({ synchronous: 1 });
  });

  it('retries a write batch held off by another process, and reports BUSY once the budget is spent', async () => {
    const child = startFixture('hold-transaction.mjs', [url, '1']);
    await child.waitForLine('holding');
    const db = await openHere({ busyTimeoutMs: 10, busyRetryMs: 300 });
    const refused = await db
      .batch([`INSERT INTO events (writer, step) VALUES ('batch', 1)`])
      .catch((e: unknown) => e);
    expect((refused as StorageError).code).toBe('BUSY');
    expect((refused as StorageError).data?.attempts).toBeGreaterThan(1);
    const logger = recordingLogger();
    const patient = await openHere({ busyTimeoutMs: 10, logger });
    const write = patient.batch([`INSERT INTO events (writer, step) VALUES ('batch', 2)`]);
    while (!logger.entries.some((entry) => entry.message === 'database busy, retrying')) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.send('commit');
    await write;
    // The connection that met BUSY at BEGIN writes again, and other processes see its rows.
    await db.batch([`INSERT INTO events (writer, step) VALUES ('batch', 3)`]);
    const observer = await openHere();
    expect(await observer.query('SELECT step FROM events ORDER BY step')).toEqual([{ step: 2 }, { step: 3 }]);
    expect(await observer.get('SELECT COUNT(*) AS n FROM held')).toEqual({ n: 1 });
  });

  it('retries BUSY without surfacing it while another process holds the lock for a while', async () => {
    const child = startFixture('hold-transaction.mjs', [url, '1']);
    await child.waitForLine('holding');
    const logger = recordingLogger();
    const db = await openHere({ busyTimeoutMs: 10, logger });
    const write = db.transaction(async (tx) => {
      await tx.execute(`INSERT INTO events (writer, step) VALUES ('parent', 1)`);
      return 'written';
    });
    // Release the other process's lock only after this one has had to retry.
    while (!logger.entries.some((entry) => entry.message === 'database busy, retrying')) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.send('commit');
    expect(await write).toBe('written');
    expect(await db.get('SELECT COUNT(*) AS n FROM events')).toEqual({ n: 1 });
    expect(await db.get('SELECT COUNT(*) AS n FROM held')).toEqual({ n: 1 });
  });
});
