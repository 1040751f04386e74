/**
 * A fixture for tests of this package and of its users (`@agentd/autonomy/testing`): a temp
 * data directory, real libsql databases in it, and autonomy services over them, all closed and
 * removed by `cleanup()`. Not part of the main entry point.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Coordinator, Database, Dialect } from '@agentd/storage';
import { openTestInstance } from '@agentd/storage/testing';
import {
  type AutonomyService,
  type AutonomyServiceOptions,
  createAutonomyService,
} from './autonomy-service.js';

/** What a test gives {@link AutonomyDataFixture.service}: the runner, and any option to override. */
export type FixtureServiceOptions = Partial<Omit<AutonomyServiceOptions, 'db'>> &
  Pick<AutonomyServiceOptions, 'runner'>;

/** The fixture made by {@link autonomyDataFixture}. */
export interface AutonomyDataFixture {
  /** The data directory. */
  readonly dir: string;
  /** Opens (another) database over the data directory. */
  open(): Promise<Database>;
  /** A started autonomy service over `db`, with the fixture's `toolsOf` unless `options` has one. */
  service(db: Database, options: FixtureServiceOptions): Promise<AutonomyService>;
  /** Closes every service, then every database, then removes the directory. */
  cleanup(): Promise<void>;
}

/**
 * A temp data dir named `prefix` and a random suffix; its services answer tools by `toolsOf`.
 * With `dialect: 'pg'` (the PostgreSQL suites; `AGENTD_TEST_PG_URL` set) the databases are one
 * fresh PostgreSQL database instead, each handle with its own started cluster coordinator.
 */
export function autonomyDataFixture(
  prefix: string,
  toolsOf: AutonomyServiceOptions['toolsOf'],
  dialect: Dialect = 'libsql',
): AutonomyDataFixture {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const databases: Database[] = [];
  const services: AutonomyService[] = [];
  const coordinators = new WeakMap<Database, Coordinator>();
  return {
    dir,
    async open() {
      const { db, coordinator } = await openTestInstance(dialect, dir);
      databases.push(db);
      if (coordinator !== undefined) coordinators.set(db, coordinator);
      return db;
    },
    async service(db, options) {
      const service = createAutonomyService({ db, toolsOf, coordinator: coordinators.get(db), ...options });
      services.push(service);
      await service.start();
      return service;
    },
    async cleanup() {
      for (const service of services.splice(0)) await service.close();
      for (const db of databases.splice(0)) await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
