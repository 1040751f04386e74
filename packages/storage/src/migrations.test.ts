import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { errorOf, makeTempDir } from '../test/helpers.js';
import { type Database, type Migration, migration, openDatabase, StorageError } from './index.js';

let temp: ReturnType<typeof makeTempDir>;
let db: Database;
let clock: number;

async function tableNames(database: Database): Promise<string[]> {
  const rows = await database.query<{ name: string }>(
    `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
  );
  return rows.map((row) => row.name);
}

const memoryMigrations: Migration[] = [
  {
    version: 1,
    name: 'create entries',
    up: `CREATE TABLE entries (id TEXT PRIMARY KEY, body TEXT NOT NULL);
         CREATE INDEX entries_body ON entries (body);`,
  },
  {
    version: 2,
    name: 'add tags',
    up: ['ALTER TABLE entries ADD COLUMN tags TEXT', 'CREATE TABLE tags (name TEXT)'],
  },
  {
    version: 5,
    name: 'seed',
    up: async (tx) => {
      await tx.execute(`INSERT INTO tags (name) VALUES ('default')`);
    },
  },
];

beforeEach(async () => {
  temp = makeTempDir();
  clock = Date.UTC(2025, 0, 2, 3, 4, 5);
  db = await openDatabase({ dataDir: temp.dir, now: () => clock });
});

afterEach(async () => {
  await db.close();
  temp.remove();
});

describe('migration', () => {
  it('is the migration object written as a call, checked by migrate like any other', async () => {
    const up = ['CREATE TABLE written (id TEXT)'];
    expect(migration(3, 'written as a call', up)).toEqual({ version: 3, name: 'written as a call', up });
    await db.migrate('@agentd/calls', [migration(1, 'written', up)]);
    expect(await tableNames(db)).toContain('written');
    const bad = await errorOf(db.migrate('@agentd/calls', [migration(0, 'zero', up)]));
    expect(bad.code).toBe('MIGRATION_INVALID');
  });
});

describe('Database.migrate', () => {
  it('applies every migration once and records it with its time', async () => {
    const result = await db.migrate('@agentd/memory-store', memoryMigrations);
    expect(result.version).toBe(5);
    expect(result.applied.map((migration) => migration.version)).toEqual([1, 2, 5]);
    expect(await tableNames(db)).toEqual(['_migrations', 'entries', 'tags']);
    expect(await db.query('SELECT name FROM tags')).toEqual([{ name: 'default' }]);
    expect(await db.migrations('@agentd/memory-store')).toEqual([
      {
        package: '@agentd/memory-store',
        version: 1,
        name: 'create entries',
        appliedAt: '2025-01-02T03:04:05.000Z',
      },
      {
        package: '@agentd/memory-store',
        version: 2,
        name: 'add tags',
        appliedAt: '2025-01-02T03:04:05.000Z',
      },
      { package: '@agentd/memory-store', version: 5, name: 'seed', appliedAt: '2025-01-02T03:04:05.000Z' },
    ]);
  });

  it('applies nothing when run a second time', async () => {
    await db.migrate('@agentd/memory-store', memoryMigrations);
    clock += 60_000;
    const again = await db.migrate('@agentd/memory-store', memoryMigrations);
    expect(again).toEqual({ package: '@agentd/memory-store', applied: [], version: 5 });
    expect(await db.query('SELECT name FROM tags')).toEqual([{ name: 'default' }]);
    expect(
      (await db.migrations()).every((migration) => migration.appliedAt === '2025-01-02T03:04:05.000Z'),
    ).toBe(true);
  });

  it('applies only the migrations added since the last run', async () => {
    await db.migrate('@agentd/memory-store', memoryMigrations.slice(0, 2));
    const later = await db.migrate('@agentd/memory-store', memoryMigrations);
    expect(later.applied.map((migration) => migration.version)).toEqual([5]);
  });

  it('keeps the versions of each package independent', async () => {
    await db.migrate('@agentd/memory-store', memoryMigrations);
    const cron = await db.migrate('@agentd/cron-wakegate', [
      { version: 1, name: 'jobs', up: 'CREATE TABLE jobs (id TEXT PRIMARY KEY)' },
    ]);
    expect(cron.applied.map((migration) => migration.version)).toEqual([1]);
    expect((await db.migrations()).map((migration) => `${migration.package}@${migration.version}`)).toEqual([
      '@agentd/cron-wakegate@1',
      '@agentd/memory-store@1',
      '@agentd/memory-store@2',
      '@agentd/memory-store@5',
    ]);
    expect(await db.migrations('@agentd/unknown')).toEqual([]);
  });

  it('refuses a database migrated by a newer build and changes nothing', async () => {
    await db.migrate('@agentd/memory-store', memoryMigrations);
    const before = JSON.stringify([await db.migrations(), await tableNames(db)]);
    const error = await errorOf(
      db.migrate('@agentd/memory-store', [
        ...memoryMigrations.slice(0, 2),
        { version: 3, name: 'would run', up: 'CREATE TABLE should_not_exist (v TEXT)' },
      ]),
    );
    expect(error.code).toBe('SCHEMA_TOO_NEW');
    expect(error.message).toContain('@agentd/memory-store');
    expect(error.message).toContain('version 5');
    expect(error.message).toContain('version 3');
    expect(error.data).toEqual({
      package: '@agentd/memory-store',
      databaseVersion: 5,
      newestKnownVersion: 3,
    });
    expect(JSON.stringify([await db.migrations(), await tableNames(db)])).toBe(before);
  });

  it('lists nothing before any migration and leaves the database untouched', async () => {
    expect(await db.migrations()).toEqual([]);
    expect(await tableNames(db)).toEqual([]);
  });

  it.each([
    [
      'a duplicate version',
      [
        { version: 1, name: 'a', up: 'SELECT 1' },
        { version: 1, name: 'b', up: 'SELECT 1' },
      ],
    ],
    [
      'a decreasing version',
      [
        { version: 2, name: 'a', up: 'SELECT 1' },
        { version: 1, name: 'b', up: 'SELECT 1' },
      ],
    ],
    ['a zero version', [{ version: 0, name: 'a', up: 'SELECT 1' }]],
    ['a fractional version', [{ version: 1.5, name: 'a', up: 'SELECT 1' }]],
    ['an empty name', [{ version: 1, name: ' ', up: 'SELECT 1' }]],
    ['an empty script list', [{ version: 1, name: 'a', up: [] }]],
    ['a missing up', [{ version: 1, name: 'a' }]],
  ])('rejects %s with MIGRATION_INVALID before touching the database', async (_label, migrations) => {
    const error = await errorOf(db.migrate('@agentd/x', migrations as unknown as Migration[]));
    expect(error.code).toBe('MIGRATION_INVALID');
    expect(await tableNames(db)).toEqual([]);
  });

  it('rejects a migration inserted below the recorded version', async () => {
    await db.migrate('@agentd/x', [
      { version: 1, name: 'one', up: 'CREATE TABLE one (v TEXT)' },
      { version: 3, name: 'three', up: 'CREATE TABLE three (v TEXT)' },
    ]);
    const error = await errorOf(
      db.migrate('@agentd/x', [
        { version: 1, name: 'one', up: 'CREATE TABLE one (v TEXT)' },
        { version: 2, name: 'late', up: 'CREATE TABLE late (v TEXT)' },
        { version: 3, name: 'three', up: 'CREATE TABLE three (v TEXT)' },
      ]),
    );
    expect(error.code).toBe('MIGRATION_INVALID');
    expect(await tableNames(db)).not.toContain('late');
  });

  it('rolls a failed migration back completely, record included, and keeps earlier ones', async () => {
    const error = await errorOf(
      db.migrate('@agentd/x', [
        { version: 1, name: 'good', up: 'CREATE TABLE good (v TEXT)' },
        {
          version: 2,
          name: 'bad',
          up: [
            'CREATE TABLE half_done (v TEXT)',
            `INSERT INTO good VALUES ('row')`,
            'INSERT INTO missing VALUES (1)',
          ],
        },
      ]),
    );
    expect(error.code).toBe('MIGRATION_FAILED');
    expect(error.data).toMatchObject({ package: '@agentd/x', version: 2, name: 'bad' });
    expect(error.cause).toBeInstanceOf(StorageError);
    expect(await tableNames(db)).toEqual(['_migrations', 'good']);
    expect(await db.query('SELECT * FROM good')).toEqual([]);
    expect((await db.migrations('@agentd/x')).map((migration) => migration.version)).toEqual([1]);
  });

  it('rolls back a function migration that throws', async () => {
    const error = await errorOf(
      db.migrate('@agentd/x', [
        {
          version: 1,
          name: 'throws',
          up: async (tx) => {
            await tx.execute('CREATE TABLE from_function (v TEXT)');
            throw new Error('backfill failed');
          },
        },
      ]),
    );
    expect(error.code).toBe('MIGRATION_FAILED');
    expect(error.message).toContain('backfill failed');
    expect(await tableNames(db)).toEqual([]);
    expect(await db.migrations('@agentd/x')).toEqual([]);
  });

  it('applies each migration exactly once when two connections migrate at the same time', async () => {
    const second = await openDatabase({ dataDir: temp.dir });
    try {
      const migrations: Migration[] = [
        { version: 1, name: 'one', up: 'CREATE TABLE counted (v INTEGER)' },
        { version: 2, name: 'two', up: 'INSERT INTO counted VALUES (1)' },
      ];
      const [first, other] = await Promise.all([
        db.migrate('@agentd/x', migrations),
        second.migrate('@agentd/x', migrations),
      ]);
      expect(first.applied.length + other.applied.length).toBe(2);
      expect(await db.get('SELECT COUNT(*) AS n FROM counted')).toEqual({ n: 1 });
    } finally {
      await second.close();
    }
  });
});

describe('openDatabase migrations option', () => {
  it('runs each package migrations at open, and again at the next open changes nothing', async () => {
    await db.close();
    db = await openDatabase({ dataDir: temp.dir, migrations: { '@agentd/memory-store': memoryMigrations } });
    expect(await tableNames(db)).toEqual(['_migrations', 'entries', 'tags']);
    await db.close();
    db = await openDatabase({ dataDir: temp.dir, migrations: { '@agentd/memory-store': memoryMigrations } });
    expect((await db.migrations('@agentd/memory-store')).map((m) => m.version)).toEqual([1, 2, 5]);
    expect(await db.query('SELECT name FROM tags')).toEqual([{ name: 'default' }]);
  });

  it('rejects the open and leaves no handle when a shipped migration list is older than the database', async () => {
    await db.migrate('@agentd/memory-store', memoryMigrations);
    await db.close();
    const error = await errorOf(
      openDatabase({
        dataDir: temp.dir,
        migrations: { '@agentd/memory-store': memoryMigrations.slice(0, 2) },
      }),
    );
    expect(error.code).toBe('SCHEMA_TOO_NEW');
    db = await openDatabase({ dataDir: temp.dir });
    expect(await tableNames(db)).toEqual(['_migrations', 'entries', 'tags']);
  });
});
