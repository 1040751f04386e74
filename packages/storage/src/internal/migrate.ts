import { StorageError } from '../errors.js';
import type { StorageLogger } from '../logger.js';
import type { AppliedMigration, Dialect, Migration, MigrationResult, MigrationSet } from '../migrations.js';
import type { Queryable, Transaction, TransactionMode } from '../types.js';
import { isBusyError } from './map-error.js';

/** The parts of a database the migration runner uses. */
export interface MigrationHost extends Queryable {
  readonly dialect: Dialect;
  transaction<T>(callback: (tx: Transaction) => Promise<T>, options?: { mode?: TransactionMode }): Promise<T>;
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS _migrations (
  package TEXT NOT NULL,
  version INTEGER NOT NULL,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL,
  PRIMARY KEY (package, version)
)`;

interface MigrationRow {
  package: string;
  version: number;
  name: string;
  applied_at: string;
}

function invalid(packageName: string, message: string, data: Record<string, unknown> = {}): StorageError {
  return new StorageError('MIGRATION_INVALID', `Migrations of ${JSON.stringify(packageName)}: ${message}`, {
    data: { package: packageName, ...data },
  });
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim().length > 0;
}

/** Checks the shape and ordering of a package's migration list before anything touches the database. */
export function validateMigrations(
  packageName: unknown,
  migrations: unknown,
): asserts migrations is Migration[] {
  if (!isNonEmptyString(packageName)) {
    throw new StorageError(
      'MIGRATION_INVALID',
      'The package name of a migration list must be a non-empty string',
    );
  }
  if (!Array.isArray(migrations)) {
    throw invalid(packageName, 'expected an array of migrations');
  }
  let previous = 0;
  migrations.forEach((candidate: unknown, index) => {
    if (typeof candidate !== 'object' || candidate === null) {
      throw invalid(packageName, `entry ${index} is not an object`, { index });
    }
    const { version, name, up } = candidate as Record<string, unknown>;
    if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1) {
      throw invalid(
        packageName,
        `entry ${index} has version ${String(version)}; versions are positive integers`,
        {
          index,
        },
      );
    }
    if (version <= previous) {
      throw invalid(
        packageName,
        `version ${version} follows version ${previous}; versions must be unique and strictly increasing`,
        { index, version, previous },
      );
    }
    if (!isNonEmptyString(name)) {
      throw invalid(packageName, `version ${version} has no name`, { index, version });
    }
    const upIsValid =
      typeof up === 'function' ||
      isNonEmptyString(up) ||
      (Array.isArray(up) && up.length > 0 && up.every((script) => isNonEmptyString(script)));
    if (!upIsValid) {
      throw invalid(
        packageName,
        `version ${version} (${name}) needs "up" as SQL text, a non-empty list of SQL texts, or a function`,
        { index, version },
      );
    }
    previous = version;
  });
}

function tooNew(packageName: string, databaseVersion: number, newestKnown: number): StorageError {
  return new StorageError(
    'SCHEMA_TOO_NEW',
    `The database schema of ${packageName} is at version ${databaseVersion}, but this build only knows ` +
      `migrations up to version ${newestKnown}. It was written by a newer agentd; upgrade agentd ` +
      'or restore a backup made by this version. Nothing was changed.',
    { data: { package: packageName, databaseVersion, newestKnownVersion: newestKnown } },
  );
}

function toApplied(row: MigrationRow): AppliedMigration {
  return { package: row.package, version: Number(row.version), name: row.name, appliedAt: row.applied_at };
}

/**
 * The list of `set` for a dialect. A plain list is libsql's; on PostgreSQL a package without a
 * `pg` list is refused by name, since its SQLite DDL would create the wrong types there.
 */
export function migrationsFor(packageName: string, set: MigrationSet, dialect: Dialect): unknown {
  if (Array.isArray(set) || typeof set !== 'object' || set === null) {
    if (dialect === 'pg' && Array.isArray(set)) {
      throw invalid(
        String(packageName),
        'has no PostgreSQL migrations; this package does not run on PostgreSQL yet',
        { dialect },
      );
    }
    return set;
  }
  const list = set[dialect];
  if (list === undefined) {
    throw invalid(String(packageName), `has no ${dialect === 'pg' ? 'PostgreSQL' : 'libsql'} migrations`, {
      dialect,
    });
  }
  return list;
}

// One key for every migration run on a PostgreSQL server, taken inside each migration's
// transaction: instances starting together apply each migration once, in order.
const PG_MIGRATION_LOCK = "SELECT pg_advisory_xact_lock(hashtext('agentd:migrations'))";

/** Lists applied migrations, of one package or of all, oldest first. */
export async function listMigrations(host: MigrationHost, packageName?: string): Promise<AppliedMigration[]> {
  const table = await host.get(
    host.dialect === 'pg'
      ? `SELECT 1 AS present WHERE to_regclass('_migrations') IS NOT NULL`
      : `SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = '_migrations'`,
  );
  if (table === undefined) {
    return [];
  }
  const rows =
    packageName === undefined
      ? await host.query<MigrationRow>('SELECT * FROM _migrations ORDER BY package, version')
      : await host.query<MigrationRow>('SELECT * FROM _migrations WHERE package = ? ORDER BY version', [
          packageName,
        ]);
  return rows.map(toApplied);
}

async function runUp(tx: Transaction, up: Migration['up']): Promise<void> {
  if (typeof up === 'function') {
    await up(tx);
    return;
  }
  for (const script of typeof up === 'string' ? [up] : up) {
    await tx.executeMultiple(script);
  }
}

/**
 * Brings one package's schema up to its newest migration. Each migration and
 * its `_migrations` row commit together, so an interrupted run leaves either
 * both or neither; the version is re-read inside each write transaction so two
 * processes migrating at once apply every migration exactly once.
 */
export async function applyMigrations(
  host: MigrationHost,
  packageName: string,
  migrations: unknown,
  now: () => number,
  logger: StorageLogger,
): Promise<MigrationResult> {
  validateMigrations(packageName, migrations);
  const newest = migrations.at(-1)?.version ?? 0;
  const recorded = await listMigrations(host, packageName);
  const current = recorded.at(-1)?.version ?? 0;
  if (current > newest) {
    throw tooNew(packageName, current, newest);
  }
  const recordedByVersion = new Map(recorded.map((migration) => [migration.version, migration]));
  for (const migration of migrations) {
    if (migration.version > current) break;
    const record = recordedByVersion.get(migration.version);
    if (record === undefined) {
      throw invalid(
        packageName,
        `version ${migration.version} (${migration.name}) was added below the database's version ${current}; ` +
          'new migrations must take a higher version',
        { version: migration.version, databaseVersion: current },
      );
    }
    if (record.name !== migration.name) {
      logger.warn(
        {
          package: packageName,
          version: migration.version,
          recordedName: record.name,
          shippedName: migration.name,
          errorKind: 'internal',
          hint: 'migrations must not be renamed once shipped; restore the recorded name in the package migration list',
        },
        'applied migration was renamed since',
      );
    }
  }

  const applied: AppliedMigration[] = [];
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    const record = await host.transaction(async (tx) => {
      if (host.dialect === 'pg') await tx.execute(PG_MIGRATION_LOCK);
      await tx.execute(CREATE_TABLE);
      const row = await tx.get<{ version: number | null }>(
        'SELECT MAX(version) AS version FROM _migrations WHERE package = ?',
        [packageName],
      );
      const latest = Number(row?.version ?? 0);
      if (latest > newest) throw tooNew(packageName, latest, newest);
      // Another process got here first; its record is already committed.
      if (latest >= migration.version) return undefined;
      try {
        await runUp(tx, migration.up);
      } catch (error) {
        if (isBusyError(error)) throw error;
        const reason = error instanceof Error ? error.message : String(error);
        throw new StorageError(
          'MIGRATION_FAILED',
          `Migration ${migration.version} (${migration.name}) of ${packageName} failed and was rolled back: ${reason}`,
          { cause: error, data: { package: packageName, version: migration.version, name: migration.name } },
        );
      }
      const appliedAt = new Date(now()).toISOString();
      await tx.execute('INSERT INTO _migrations (package, version, name, applied_at) VALUES (?, ?, ?, ?)', [
        packageName,
        migration.version,
        migration.name,
        appliedAt,
      ]);
      return { package: packageName, version: migration.version, name: migration.name, appliedAt };
    });
    if (record !== undefined) {
      applied.push(record);
      logger.info({ package: packageName, version: record.version, name: record.name }, 'migration applied');
    }
  }
  // Every shipped migration is now recorded, by this call or by a concurrent one.
  return { package: packageName, applied, version: newest };
}
