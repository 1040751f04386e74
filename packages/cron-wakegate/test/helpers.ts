import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, openDatabase } from '@agentd/storage';
import { afterEach, beforeEach, vi } from 'vitest';
import {
  type AgentTurnRequest,
  type AgentTurnResult,
  type AgentTurnRunner,
  type CronService,
  type CronServiceOptions,
  createCronService,
} from '../src/index.js';

/** A temp data dir with a real libsql file. */
export interface TempDatabase {
  db: Database;
  dir: string;
  reopen(): Promise<Database>;
  cleanup(): Promise<void>;
}

/** A temp data dir with a real libsql file. */
export async function tempDatabase(): Promise<TempDatabase> {
  const dir = mkdtempSync(join(tmpdir(), 'agentd-cron-'));
  const opened: Database[] = [];
  const open = async () => {
    const db = await openDatabase({ dataDir: dir });
    opened.push(db);
    return db;
  };
  const db = await open();
  return {
    db,
    dir,
    reopen: open,
    cleanup: async () => {
      for (const handle of opened) await handle.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A runner whose behaviour each test scripts; it keeps every request it got. */
export interface ScriptedRunner extends AgentTurnRunner {
  requests: AgentTurnRequest[];
  /** Replaces the behaviour of later turns. */
  respond(behaviour: (request: AgentTurnRequest) => Promise<AgentTurnResult>): void;
}

export function scriptedRunner(): ScriptedRunner {
  let behaviour = async (request: AgentTurnRequest): Promise<AgentTurnResult> =>
    ok(`done: ${request.message.length}`);
  const requests: AgentTurnRequest[] = [];
  return {
    requests,
    respond(next) {
      behaviour = next;
    },
    runTurn(request) {
      requests.push(request);
      return behaviour(request);
    },
  };
}

export function ok(response: string, sessionKey = 'cron:x'): AgentTurnResult {
  return { response, tokensUsed: { input: 3, output: 4, total: 7 }, finishReason: 'stop', sessionKey };
}

/** Fakes only the timer functions and Date; setImmediate stays real so libsql I/O and idle() settle. */
export const FAKE_TIMERS: {
  toFake: Array<'setTimeout' | 'clearTimeout' | 'setInterval' | 'clearInterval' | 'Date'>;
} = { toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] };

/** What every service test of this package starts from; `env` and `runner` are new for each test. */
export interface ServiceFixture {
  readonly env: TempDatabase;
  readonly runner: ScriptedRunner;
  /** Closes `service` after the test, before the database goes. */
  track<S extends { close(): Promise<void> }>(service: S): S;
}

/**
 * Registers the per-test set-up of a service test file: a temp database and a scripted runner
 * before each test; after it, every tracked service closed, real timers back and the directory
 * removed (so a test that fakes timers cannot leak them into the next).
 */
export function serviceFixture(): ServiceFixture {
  let env: TempDatabase | undefined;
  let runner: ScriptedRunner | undefined;
  const services: Array<{ close(): Promise<void> }> = [];
  beforeEach(async () => {
    env = await tempDatabase();
    runner = scriptedRunner();
  });
  afterEach(async () => {
    vi.useRealTimers();
    for (const service of services.splice(0)) await service.close();
    await env?.cleanup();
  });
  return {
    get env() {
      if (env === undefined) throw new Error('serviceFixture: env is made before each test');
      return env;
    },
    get runner() {
      if (runner === undefined) throw new Error('serviceFixture: runner is made before each test');
      return runner;
    },
    track(service) {
      services.push(service);
      return service;
    },
  };
}

/** A {@link serviceFixture} that also makes cron services over its database and runner. */
export interface CronFixture extends ServiceFixture {
  /** A cron service (UTC, workspaces under the temp dir), closed after the test. */
  make(db?: Database, overrides?: Partial<CronServiceOptions>): CronService;
  /** {@link CronFixture.make} on the fixture's database, started. */
  started(overrides?: Partial<CronServiceOptions>): Promise<CronService>;
}

/** Registers a {@link serviceFixture} and returns it with cron service factories. */
export function cronFixture(): CronFixture {
  const fixture = serviceFixture();
  const make = (db: Database = fixture.env.db, overrides: Partial<CronServiceOptions> = {}) =>
    fixture.track(
      createCronService({
        db,
        runner: fixture.runner,
        workspaceDir: (agentId) => join(fixture.env.dir, 'workspaces', agentId),
        defaultTimeZone: 'UTC',
        ...overrides,
      }),
    );
  return Object.assign(fixture, {
    make,
    started: async (overrides: Partial<CronServiceOptions> = {}) => {
      const service = make(fixture.env.db, overrides);
      await service.start();
      return service;
    },
  });
}
