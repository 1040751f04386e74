import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from './database.js';
import { isStorageError } from './errors.js';
import { columnTypes, type Dialect, type DialectMigrations, migration } from './migrations.js';
import { freshPgDatabaseUrl, pgSuitesEnabled } from './testing.js';

// The storage port's behaviour, run on both dialects: what a package may rely on everywhere.
const dirs: string[] = [];
const dialects: Array<{ name: string; url: () => Promise<string> }> = [
  {
    name: 'libsql',
    url: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'agentd-conformance-'));
      dirs.push(dir);
      return `file:${join(dir, 'agentd.db')}`;
    },
  },
];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
if (pgSuitesEnabled()) dialects.push({ name: 'pg', url: () => freshPgDatabaseUrl() });

// The table is written once; columnTypes gives each dialect its types.
function items(dialect: Dialect): string {
  const t = columnTypes(dialect);
  return `CREATE TABLE items (id ${t.rowKey}, name TEXT NOT NULL UNIQUE, at_ms ${t.bigint}, flag INTEGER, data ${t.bytes}, score ${t.double})`;
}

const schema: DialectMigrations = {
  libsql: [migration(1, 'items', [items('libsql')])],
  pg: [migration(1, 'items', [items('pg')])],
};

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return isStorageError(error) ? error.code : `not a StorageError: ${String(error)}`;
  }
  return 'resolved';
}

describe.each(dialects)('storage port on $name', ({ name, url }) => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase({ url: await url(), migrations: { '@agentd/conformance': schema } });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('names its dialect', () => {
    expect(db.dialect).toBe(name);
  });

  it('binds positional and named arguments and returns plain rows', async () => {
    await db.execute('INSERT INTO items (name, at_ms, flag) VALUES (?, ?, ?)', [
      'a',
      1_764_000_000_123,
      true,
    ]);
    await db.execute('INSERT INTO items (name, at_ms, flag) VALUES (:name, :at, :flag)', {
      name: 'b',
      at: 2,
      flag: false,
    });
    const rows = await db.query<{ name: string; at_ms: number; flag: number }>(
      'SELECT name, at_ms, flag FROM items WHERE name IN (?, ?) ORDER BY name',
      ['a', 'b'],
    );
    expect(rows).toEqual([
      { name: 'a', at_ms: 1_764_000_000_123, flag: 1 },
      { name: 'b', at_ms: 2, flag: 0 },
    ]);
    const counted = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM items');
    expect(counted?.n).toBe(2);
  });

  it('gives the inserted id through RETURNING and counts changed rows', async () => {
    const inserted = await db.execute<{ id: number }>('INSERT INTO items (name) VALUES (?) RETURNING id', [
      'returning',
    ]);
    const id = inserted.rows[0]!.id;
    expect(id).toBeGreaterThan(0);
    const row = await db.get<{ name: string }>('SELECT name FROM items WHERE id = ?', [id]);
    expect(row?.name).toBe('returning');
    if (name === 'pg') expect(inserted.lastInsertRowid).toBe(BigInt(id));
    const updated = await db.execute('UPDATE items SET at_ms = ? WHERE name LIKE ?', [5, 'returning%']);
    expect(updated.rowsAffected).toBe(1);
  });

  it('round-trips bytes', async () => {
    await db.execute('INSERT INTO items (name, data) VALUES (?, ?)', ['bytes', new Uint8Array([0, 1, 255])]);
    const row = await db.get<{ data: Uint8Array }>('SELECT data FROM items WHERE name = ?', ['bytes']);
    expect([...new Uint8Array(row!.data)]).toEqual([0, 1, 255]);
  });

  it('keeps a 64-bit time past 2^31 and the fraction of a double in the columnTypes columns', async () => {
    const atMs = Date.UTC(2300, 0, 1);
    await db.execute('INSERT INTO items (name, at_ms, score) VALUES (?, ?, ?)', ['types', atMs, 0.125]);
    const row = await db.get<{ at_ms: number; score: number }>(
      'SELECT at_ms, score FROM items WHERE name = ?',
      ['types'],
    );
    expect(row).toEqual({ at_ms: atMs, score: 0.125 });
  });

  it('maps a unique violation to CONSTRAINT and bad SQL to SQL_ERROR', async () => {
    expect(await code(db.execute('INSERT INTO items (name) VALUES (?)', ['a']))).toBe('CONSTRAINT');
    expect(await code(db.execute('SELECT * FROM no_such_table'))).toBe('SQL_ERROR');
    expect(await code(db.execute('SELECT ?', [undefined as unknown as null]))).toBe('INVALID_ARGUMENT');
  });

  it('commits a transaction, rolls one back on a throw, and refuses db calls inside', async () => {
    const result = await db.transaction(async (tx) => {
      await tx.execute('INSERT INTO items (name) VALUES (?)', ['tx-1']);
      return (await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM items WHERE name = ?', ['tx-1']))?.n;
    });
    expect(result).toBe(1);
    await expect(
      db.transaction(async (tx) => {
        await tx.execute('INSERT INTO items (name) VALUES (?)', ['tx-2']);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await db.get('SELECT 1 AS present FROM items WHERE name = ?', ['tx-2'])).toBeUndefined();
    expect(await code(db.transaction(() => db.execute('SELECT 1')))).toBe('NESTED_TRANSACTION');
  });

  it('runs a batch atomically', async () => {
    expect(
      await code(
        db.batch([
          { sql: 'INSERT INTO items (name) VALUES (?)', args: ['batch-1'] },
          { sql: 'INSERT INTO items (name) VALUES (?)', args: ['a'] },
        ]),
      ),
    ).toBe('CONSTRAINT');
    expect(await db.get('SELECT 1 AS present FROM items WHERE name = ?', ['batch-1'])).toBeUndefined();
    const results = await db.batch(
      ['SELECT 1 AS one', { sql: 'SELECT CAST(? AS INTEGER) AS two', args: [2] }],
      'read',
    );
    expect(results.map((result) => result.rows[0])).toEqual([{ one: 1 }, { two: 2 }]);
  });

  it('refuses writes in a read transaction', async () => {
    expect(
      await code(
        db.transaction((tx) => tx.execute('INSERT INTO items (name) VALUES (?)', ['ro']), { mode: 'read' }),
      ),
    ).toBe('READONLY');
  });

  it('flushes a write batcher', async () => {
    const batcher = db.createWriteBatcher({ maxBatch: 10, maxDelayMs: 5 });
    await Promise.all(
      Array.from({ length: 25 }, (_, index) =>
        batcher.write('INSERT INTO items (name) VALUES (?)', [`w${index}`]),
      ),
    );
    await batcher.close();
    expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM items WHERE name LIKE 'w%'"))?.n).toBe(25);
  });

  it('applies migrations once, records them, and refuses an older build', async () => {
    const again = await db.migrate('@agentd/conformance', schema);
    expect(again.applied).toEqual([]);
    expect((await db.migrations('@agentd/conformance')).map((row) => row.version)).toEqual([1]);
    expect(await code(db.migrate('@agentd/conformance', { libsql: [], pg: [] }))).toBe('SCHEMA_TOO_NEW');
  });
});

describe.skipIf(!pgSuitesEnabled())('storage on PostgreSQL only', () => {
  let url: string;
  let db: Database;
  beforeAll(async () => {
    url = await freshPgDatabaseUrl();
    db = await openDatabase({ url });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('refuses a package with only libsql migrations', async () => {
    expect(
      await code(db.migrate('@agentd/unported', [migration(1, 'x', 'CREATE TABLE x (a INTEGER)')])),
    ).toBe('MIGRATION_INVALID');
  });

  it('migrates once when several instances start together (advisory lock)', async () => {
    const others = await Promise.all([1, 2, 3].map(() => openDatabase({ url })));
    const list = {
      libsql: [],
      pg: [
        migration(1, 'one', 'CREATE TABLE together (a BIGINT)'),
        migration(2, 'two', 'ALTER TABLE together ADD COLUMN b TEXT'),
      ],
    };
    const results = await Promise.all(others.map((other) => other.migrate('@agentd/together', list)));
    expect(results.flatMap((result) => result.applied.map((applied) => applied.version)).sort()).toEqual([
      1, 2,
    ]);
    await Promise.all(others.map((other) => other.close()));
  });

  it('parses int8 past 2^53 as a bigint and numeric as a number', async () => {
    const row = await db.get<{ big: bigint; small: number; num: number }>(
      'SELECT 9007199254740993::int8 AS big, 1764000000123::int8 AS small, 1.5::numeric AS num',
    );
    expect(row).toEqual({ big: 9007199254740993n, small: 1_764_000_000_123, num: 1.5 });
  });

  it('retries a serialization failure as BUSY and the transaction runs again', async () => {
    await db.execute('CREATE TABLE counter (id INT PRIMARY KEY, n INT NOT NULL)');
    await db.execute('INSERT INTO counter VALUES (1, 0)');
    const bump = () =>
      db.transaction(
        async (tx) => {
          const row = await tx.get<{ n: number }>('SELECT n FROM counter WHERE id = 1');
          await new Promise((resolve) => setTimeout(resolve, 20));
          await tx.execute('UPDATE counter SET n = ? WHERE id = 1', [row!.n + 1]);
        },
        { isolation: 'serializable' },
      );
    await Promise.all(Array.from({ length: 5 }, bump));
    expect((await db.get<{ n: number }>('SELECT n FROM counter WHERE id = 1'))?.n).toBe(5);
  });

  it('keeps the password out of errors and the safe URL', async () => {
    const withPassword = new URL(url);
    withPassword.password = 's3cret-pw';
    withPassword.port = '1';
    const failure = await openDatabase({ url: withPassword.toString() }).catch((error: unknown) => error);
    expect(isStorageError(failure) && failure.code).toBe('OPEN_FAILED');
    expect(
      JSON.stringify({ message: (failure as Error).message, data: (failure as { data?: unknown }).data }),
    ).not.toContain('s3cret-pw');
  });
});
