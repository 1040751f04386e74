import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordingLogger } from '@agentd/test-support';
import { errorOf, makeTempDir } from '../test/helpers.js';
import { type Database, openDatabase, storageSectionSchema } from './index.js';

let temp: ReturnType<typeof makeTempDir>;
const open: Database[] = [];

async function openInTemp(extra: Parameters<typeof openDatabase>[0] = {}): Promise<Database> {
  const db = await openDatabase({ dataDir: temp.dir, ...extra });
  open.push(db);
  return db;
}

/** A database in the temp dir with the tables `ddl` creates, one statement each, in order. */
async function openWithTables(...ddl: string[]): Promise<Database> {
  const db = await openInTemp();
  for (const statement of ddl) await db.execute(statement);
  return db;
}

beforeEach(() => {
  temp = makeTempDir();
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.close()));
  temp.remove();
});

describe('storageSectionSchema', () => {
  it('fills the documented defaults', () => {
    expect(storageSectionSchema.parse({})).toEqual({
      busyTimeoutMs: 5000,
      busyRetryMs: 30_000,
      synchronous: 'normal',
    });
  });

  it('rejects unknown keys and unknown synchronous levels', () => {
    expect(storageSectionSchema.safeParse({ urll: 'file:x.db' }).success).toBe(false);
    expect(storageSectionSchema.safeParse({ synchronous: 'off' }).success).toBe(false);
  });
});

describe('openDatabase', () => {
  it('creates the data directory and sets WAL, busy_timeout, synchronous and foreign keys', async () => {
    const dataDir = join(temp.dir, 'nested', 'data');
    const db = await openInTemp({ dataDir, busyTimeoutMs: 1234 });
    expect(existsSync(join(dataDir, 'agentd.db'))).toBe(true);
    expect(db.kind).toBe('file');
    expect(db.url).toBe(`file:${join(dataDir, 'agentd.db')}`);
    expect(await db.get('PRAGMA journal_mode')).toEqual({ journal_mode: 'wal' });
    expect(await db.get('PRAGMA busy_timeout')).toEqual({ timeout: 1234 });
    expect(await db.get('PRAGMA synchronous')).toEqual({ synchronous: 1 });
    expect(await db.get('PRAGMA foreign_keys')).toEqual({ foreign_keys: 1 });
  });

  it('applies synchronous=full when asked', async () => {
    const db = await openInTemp({ synchronous: 'full' });
    expect(await db.get('PRAGMA synchronous')).toEqual({ synchronous: 2 });
  });

  it('enforces foreign keys on writes', async () => {
    const db = await openWithTables(
      'CREATE TABLE parent (id INTEGER PRIMARY KEY)',
      'CREATE TABLE child (parent_id INTEGER NOT NULL REFERENCES parent (id))',
    );
    const error = await errorOf(db.execute('INSERT INTO child (parent_id) VALUES (42)'));
    expect(error.code).toBe('CONSTRAINT');
  });

  it('opens a file URL and a memory database', async () => {
    const fileDb = await openInTemp({ url: `file:${join(temp.dir, 'other.db')}` });
    expect(fileDb.kind).toBe('file');
    expect(existsSync(join(temp.dir, 'other.db'))).toBe(true);
    const memory = await openInTemp({ url: ':memory:' });
    expect(memory.kind).toBe('memory');
    await memory.execute('CREATE TABLE t (v TEXT)');
    await memory.execute('INSERT INTO t VALUES (?)', ['x']);
    expect(await memory.query('SELECT v FROM t')).toEqual([{ v: 'x' }]);
  });

  it('handles data directories whose names contain URL metacharacters', async () => {
    const dataDir = join(temp.dir, 'odd #name? 100%');
    const db = await openInTemp({ dataDir });
    await db.execute('CREATE TABLE t (v TEXT)');
    expect(existsSync(join(dataDir, 'agentd.db'))).toBe(true);
  });

  it('rejects missing locations, bad values and unresolved secret references', async () => {
    expect((await errorOf(openDatabase({}))).code).toBe('INVALID_OPTIONS');
    expect((await errorOf(openDatabase({ dataDir: temp.dir, busyTimeoutMs: -1 }))).code).toBe(
      'INVALID_OPTIONS',
    );
    expect((await errorOf(openDatabase({ url: 'ftp://example.com/db' }))).code).toBe('INVALID_OPTIONS');
    const unresolved = await errorOf(
      openDatabase({ url: 'libsql://db.example.com', authToken: '${secret:TURSO}' }),
    );
    expect(unresolved.code).toBe('INVALID_OPTIONS');
  });

  describe('with a remote URL', () => {
    let server: Server;
    let seenAuthorization: string | undefined;

    beforeEach(async () => {
      seenAuthorization = undefined;
      server = createServer((request, response) => {
        seenAuthorization = request.headers.authorization;
        response.writeHead(401, { 'content-type': 'text/plain' });
        response.end('token rejected');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });

    afterEach(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('sends the token to the server but keeps it out of the error, its data and its cause', async () => {
      const { port } = server.address() as AddressInfo;
      const token = 'sekrit-token-value-123';
      const error = await errorOf(
        openDatabase({ url: `http://127.0.0.1:${port}`, authToken: token, busyRetryMs: 0 }),
      );
      expect(seenAuthorization).toBe(`Bearer ${token}`);
      expect(error.code).toBe('OPEN_FAILED');
      const everything = JSON.stringify({ message: error.message, data: error.data, stack: error.stack });
      const causes: string[] = [];
      for (let cause: unknown = error.cause; cause instanceof Error; cause = cause.cause) {
        causes.push(cause.message, String(cause.stack));
      }
      expect(everything).not.toContain(token);
      expect(causes.join('\n')).not.toContain(token);
      expect(error.data?.url).toBe(`http://127.0.0.1:${port}`);
    });

    it('strips credentials embedded in the URL', async () => {
      const { port } = server.address() as AddressInfo;
      const logger = recordingLogger();
      const error = await errorOf(
        openDatabase({
          url: `http://user:pa55word@127.0.0.1:${port}/?authToken=in-url-token`,
          logger,
          busyRetryMs: 0,
        }),
      );
      const text = JSON.stringify({ message: error.message, data: error.data, logs: logger.entries });
      expect(text).not.toContain('pa55word');
      expect(text).not.toContain('in-url-token');
      expect(error.data?.url).toBe(`http://127.0.0.1:${port}/`);
    });
  });
});

describe('Database', () => {
  it('returns rows as plain objects from query, get and execute', async () => {
    const db = await openWithTables('CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, data BLOB)');
    const inserted = await db.execute('INSERT INTO t (name) VALUES (:name)', { name: 'alpha' });
    expect(inserted.rowsAffected).toBe(1);
    expect(inserted.lastInsertRowid).toBe(1n);
    await db.execute({ sql: 'INSERT INTO t (name) VALUES (?)', args: ['beta'] });
    const rows = await db.query<{ id: number; name: string }>('SELECT id, name FROM t ORDER BY id');
    expect(rows).toEqual([
      { id: 1, name: 'alpha' },
      { id: 2, name: 'beta' },
    ]);
    expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
    expect(Object.keys(rows[0]!)).toEqual(['id', 'name']);
    expect(await db.get('SELECT name FROM t WHERE id = ?', [2])).toEqual({ name: 'beta' });
    expect(await db.get('SELECT name FROM t WHERE id = ?', [99])).toBeUndefined();
  });

  it('maps SQL errors to StorageError codes with the statement in data', async () => {
    const db = await openWithTables('CREATE TABLE t (id INTEGER PRIMARY KEY)');
    await db.execute('INSERT INTO t VALUES (1)');
    const duplicate = await errorOf(db.execute('INSERT INTO t VALUES (1)'));
    expect(duplicate.code).toBe('CONSTRAINT');
    expect(duplicate.data?.sql).toBe('INSERT INTO t VALUES (1)');
    expect((await errorOf(db.query('SELECT * FROM missing'))).code).toBe('SQL_ERROR');
    expect((await errorOf(db.execute('INSERT INTO t VALUES (?)', [undefined as unknown as null]))).code).toBe(
      'INVALID_ARGUMENT',
    );
  });

  describe('transaction', () => {
    it('commits when the callback resolves and returns its result', async () => {
      const db = await openWithTables('CREATE TABLE t (v INTEGER)');
      const result = await db.transaction(async (tx) => {
        await tx.execute('INSERT INTO t VALUES (1)');
        await tx.execute('INSERT INTO t VALUES (2)');
        return (await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM t'))?.n;
      });
      expect(result).toBe(2);
      expect(await db.get('SELECT COUNT(*) AS n FROM t')).toEqual({ n: 2 });
    });

    it('rolls back everything when the callback throws and rethrows the same error', async () => {
      const db = await openWithTables('CREATE TABLE t (v INTEGER)');
      const failure = new Error('changed my mind');
      await expect(
        db.transaction(async (tx) => {
          await tx.execute('INSERT INTO t VALUES (1)');
          await tx.execute('CREATE TABLE made_inside (v INTEGER)');
          throw failure;
        }),
      ).rejects.toBe(failure);
      expect(await db.get('SELECT COUNT(*) AS n FROM t')).toEqual({ n: 0 });
      expect(await db.get(`SELECT name FROM sqlite_master WHERE name = 'made_inside'`)).toBeUndefined();
    });

    it('refuses writes in a read transaction and sees a stable snapshot', async () => {
      for (const url of [undefined, ':memory:']) {
        const db = await openInTemp(url === undefined ? {} : { url });
        await db.execute('CREATE TABLE t (v INTEGER)');
        await db.execute('INSERT INTO t VALUES (1)');
        const error = await errorOf(
          db.transaction(async (tx) => tx.execute('INSERT INTO t VALUES (2)'), { mode: 'read' }),
        );
        expect(error.code).toBe('READONLY');
        const seen = await db.transaction(async (tx) => tx.query('SELECT v FROM t'), { mode: 'read' });
        expect(seen).toEqual([{ v: 1 }]);
        // The guard of a read transaction must not leak into later writes.
        await db.execute('INSERT INTO t VALUES (3)');
        expect(await db.get('SELECT COUNT(*) AS n FROM t')).toEqual({ n: 2 });
      }
    });

    it('throws NESTED_TRANSACTION when the database itself is used inside the callback', async () => {
      const db = await openWithTables('CREATE TABLE t (v INTEGER)');
      const error = await errorOf(db.transaction(async () => db.execute('INSERT INTO t VALUES (1)')));
      expect(error.code).toBe('NESTED_TRANSACTION');
      await db.transaction(async (tx) => {
        await tx.execute('INSERT INTO t VALUES (1)');
      });
      // After the transaction, the same async context may use the database again.
      expect(await db.get('SELECT COUNT(*) AS n FROM t')).toEqual({ n: 1 });
    });

    it('shares one write lock between two handles on the same file in one process', async () => {
      // With no native wait and no retry budget, any lock conflict between the handles would surface.
      const first = await openInTemp({ busyTimeoutMs: 0, busyRetryMs: 0 });
      const second = await openInTemp({ busyTimeoutMs: 0, busyRetryMs: 0 });
      await first.execute('CREATE TABLE t (v INTEGER)');
      const writes = Array.from({ length: 40 }, (_, index) =>
        (index % 2 === 0 ? first : second).transaction(async (tx) => {
          await tx.execute('INSERT INTO t VALUES (?)', [index]);
          await new Promise((resolve) => setImmediate(resolve));
          await tx.execute('INSERT INTO t VALUES (?)', [index]);
        }),
      );
      await Promise.all(writes);
      expect(await second.get('SELECT COUNT(*) AS n FROM t')).toEqual({ n: 80 });
      const nested = await errorOf(first.transaction(async () => second.execute('INSERT INTO t VALUES (0)')));
      expect(nested.code).toBe('NESTED_TRANSACTION');
    });

    it('serialises 200 concurrent writers without surfacing BUSY or losing an update', async () => {
      const db = await openInTemp({ busyTimeoutMs: 100 });
      await db.execute('CREATE TABLE counter (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)');
      await db.execute('INSERT INTO counter VALUES (1, 0)');
      await db.execute('CREATE TABLE events (task INTEGER NOT NULL, step INTEGER NOT NULL)');
      const tasks = Array.from({ length: 200 }, (_, task) =>
        db.transaction(async (tx) => {
          const row = await tx.get<{ value: number }>('SELECT value FROM counter WHERE id = 1');
          // Yield between read and write so a missing lock would lose updates.
          await new Promise((resolve) => setImmediate(resolve));
          await tx.execute('UPDATE counter SET value = ? WHERE id = 1', [row!.value + 1]);
          await tx.batch([
            { sql: 'INSERT INTO events VALUES (?, 1)', args: [task] },
            { sql: 'INSERT INTO events VALUES (?, 2)', args: [task] },
          ]);
        }),
      );
      const plainWrites = Array.from({ length: 50 }, (_, index) =>
        db.execute('INSERT INTO events VALUES (?, 0)', [1000 + index]),
      );
      const reads = Array.from({ length: 50 }, () => db.query('SELECT COUNT(*) AS n FROM events'));
      const outcomes = await Promise.allSettled([...tasks, ...plainWrites, ...reads]);
      expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
      expect(await db.get('SELECT value FROM counter')).toEqual({ value: 200 });
      expect(await db.get('SELECT COUNT(*) AS n FROM events')).toEqual({ n: 450 });
    });
  });

  describe('batch', () => {
    it('runs a read batch on an in-memory database (its reads share the one connection)', async () => {
      const db = await openDatabase({ url: ':memory:' });
      try {
        const results = await db.batch(['SELECT 1 AS one', 'SELECT 2 AS two'], 'read');
        expect(results.map((result) => result.rows[0])).toEqual([{ one: 1 }, { two: 2 }]);
      } finally {
        await db.close();
      }
    });

    it('applies all statements or none', async () => {
      const db = await openWithTables('CREATE TABLE t (id INTEGER PRIMARY KEY)');
      const results = await db.batch([
        'INSERT INTO t VALUES (1)',
        { sql: 'INSERT INTO t VALUES (?)', args: [2] },
      ]);
      expect(results.map((result) => result.rowsAffected)).toEqual([1, 1]);
      const error = await errorOf(db.batch(['INSERT INTO t VALUES (3)', 'INSERT INTO t VALUES (1)']));
      expect(error.code).toBe('CONSTRAINT');
      expect(error.data?.statementIndex).toBe(1);
      expect(await db.query('SELECT id FROM t ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
      expect(await db.batch(['SELECT COUNT(*) AS n FROM t'], 'read')).toMatchObject([{ rows: [{ n: 2 }] }]);
      expect((await errorOf(db.batch(['INSERT INTO t VALUES (5)'], 'read'))).code).toBe('READONLY');
    });

    // A file's write batches run on a connection of their own with statements prepared once.
    it('answers the same shapes as execute, with statements reused across batches', async () => {
      const db = await openInTemp();
      await db.execute('CREATE TABLE v (id INTEGER PRIMARY KEY, name TEXT, data BLOB, big INTEGER)');
      const insert =
        'INSERT INTO v (id, name, data, big) VALUES (:id, :name, :data, :big) RETURNING id, name';
      for (const id of [1, 2]) {
        const [returned, plain] = await db.batch([
          {
            sql: insert,
            args: { ':id': id, ':name': `n${id}`, ':data': new Uint8Array([id, 9]), ':big': true },
          },
          { sql: 'UPDATE v SET big = ? WHERE id = ?', args: [2 ** 53 - 1, id] },
        ]);
        expect(returned).toEqual({
          rows: [{ id, name: `n${id}` }],
          columns: ['id', 'name'],
          rowsAffected: 0,
          lastInsertRowid: undefined,
        });
        expect(plain).toEqual({ rows: [], columns: [], rowsAffected: 1, lastInsertRowid: BigInt(id) });
      }
      const [selected] = await db.batch(['SELECT id, data, big, id AS id FROM v WHERE id = 2']);
      expect(selected?.rows).toEqual([{ id: 2, data: new Uint8Array([2, 9]).buffer, big: 2 ** 53 - 1 }]);
      expect(selected?.rows).toEqual(await db.query('SELECT id, data, big, id AS id FROM v WHERE id = 2'));
      const tooBig = await errorOf(db.batch(['SELECT 9007199254740993 AS n']));
      expect(tooBig.code).toBe('INVALID_ARGUMENT');
      const badArg = await errorOf(db.batch([{ sql: 'SELECT ? AS n', args: [Number.NaN] }]));
      expect(badArg.code).toBe('INVALID_ARGUMENT');
    });

    it('runs on a connection set up like the writer, checkpointing every 4000 WAL frames', async () => {
      const db = await openInTemp({ busyTimeoutMs: 1234, synchronous: 'full' });
      const results = await db.batch([
        'PRAGMA journal_mode',
        'PRAGMA busy_timeout',
        'PRAGMA synchronous',
        'PRAGMA foreign_keys',
        'PRAGMA wal_autocheckpoint',
      ]);
      expect(results.map((result) => result.rows[0])).toEqual([
        { journal_mode: 'wal' },
        { timeout: 1234 },
        { synchronous: 2 },
        { foreign_keys: 1 },
        { wal_autocheckpoint: 4000 },
      ]);
    });

    it('sees schema changes made on the other connections', async () => {
      const db = await openInTemp();
      await db.execute('CREATE TABLE s (a INTEGER)');
      await db.batch(['INSERT INTO s VALUES (1)']);
      expect((await db.batch(['SELECT * FROM s']))[0]?.rows).toEqual([{ a: 1 }]);
      await db.execute('ALTER TABLE s ADD COLUMN b TEXT');
      const [after] = await db.batch(['SELECT * FROM s']);
      expect(after?.columns).toEqual(['a', 'b']);
      expect(after?.rows).toEqual([{ a: 1, b: null }]);
    });

    it('keeps foreign keys on, and leaves no transaction open after a failed batch', async () => {
      const db = await openInTemp();
      await db.batch([
        'CREATE TABLE parent (id INTEGER PRIMARY KEY)',
        'CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent (id))',
      ]);
      const insertChild = { sql: 'INSERT INTO child VALUES (?, ?)', args: [1, 7] };
      const refused = await errorOf(db.batch(['INSERT INTO parent VALUES (1)', insertChild]));
      expect(refused.code).toBe('CONSTRAINT');
      expect(refused.data?.statementIndex).toBe(1);
      // Neither the rollback nor the dropped statement holds the write lock: every path writes.
      await db.execute('INSERT INTO parent VALUES (7)');
      await db.transaction(async (tx) => {
        await tx.execute('INSERT INTO parent VALUES (8)');
      });
      await db.batch([insertChild]);
      expect(await db.query('SELECT id FROM parent ORDER BY id')).toEqual([{ id: 7 }, { id: 8 }]);
      expect(await db.query('SELECT id, parent FROM child')).toEqual([{ id: 1, parent: 7 }]);
    });

    it('interleaves with transactions and plain writes without losing one', async () => {
      const db = await openInTemp();
      await db.execute('CREATE TABLE w (n INTEGER)');
      const work = Array.from({ length: 60 }, (_, n) => {
        if (n % 3 === 0) return db.batch([{ sql: 'INSERT INTO w VALUES (?)', args: [n] }]);
        if (n % 3 === 1) return db.execute('INSERT INTO w VALUES (?)', [n]);
        return db.transaction(async (tx) => {
          await new Promise((resolve) => setTimeout(resolve, 1));
          await tx.execute('INSERT INTO w VALUES (?)', [n]);
        });
      });
      await Promise.all(work);
      expect(await db.get('SELECT COUNT(*) AS n, SUM(n) AS total FROM w')).toEqual({ n: 60, total: 1770 });
    });
  });

  describe('close', () => {
    it('is idempotent and makes later calls fail with CLOSED', async () => {
      const db = await openDatabase({ dataDir: temp.dir });
      await db.execute('CREATE TABLE t (v INTEGER)');
      await Promise.all([db.close(), db.close()]);
      await db.close();
      expect(db.closed).toBe(true);
      expect((await errorOf(db.query('SELECT 1'))).code).toBe('CLOSED');
      expect((await errorOf(db.transaction(async () => undefined))).code).toBe('CLOSED');
      expect((await errorOf(db.batch(['INSERT INTO t VALUES (1)']))).code).toBe('CLOSED');
    });

    it('runs write batches queued before close, then refuses them', async () => {
      const db = await openDatabase({ dataDir: temp.dir });
      await db.execute('CREATE TABLE t (v INTEGER)');
      const batches = Array.from({ length: 5 }, (_, index) =>
        db.batch([{ sql: 'INSERT INTO t VALUES (?)', args: [index] }]),
      );
      await db.close();
      await Promise.all(batches);
      const reopened = await openInTemp();
      expect(await reopened.get('SELECT COUNT(*) AS n FROM t')).toEqual({ n: 5 });
    });

    it('lets writes queued before close finish', async () => {
      const db = await openDatabase({ dataDir: temp.dir });
      await db.execute('CREATE TABLE t (v INTEGER)');
      const writes = Array.from({ length: 20 }, (_, index) =>
        db.execute('INSERT INTO t VALUES (?)', [index]),
      );
      await db.close();
      await Promise.all(writes);
      const reopened = await openInTemp();
      expect(await reopened.get('SELECT COUNT(*) AS n FROM t')).toEqual({ n: 20 });
    });
  });
});
