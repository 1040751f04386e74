import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Database, openDatabase } from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled } from '@agentd/storage/testing';
import { afterAll, afterEach } from 'vitest';
import { webhookMigrations } from '../src/store.js';

/** Loopback HTTP servers a test file starts; see {@link testServers}. */
export interface TestServers {
  /** Serves `listener` on a free loopback port and returns its base URL. */
  listen(listener: RequestListener): Promise<string>;
  /** Closes every server started so far, dropping open connections. */
  stop(): Promise<void>;
}

/**
 * Registers an `afterEach` that stops the servers a test started, so a failing test
 * cannot leave a port or a keep-alive connection behind for the next one.
 */
export function testServers(): TestServers {
  const servers: Server[] = [];
  const stop = async (): Promise<void> => {
    for (const server of servers.splice(0)) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  };
  afterEach(stop);
  return {
    async listen(listener) {
      const server = createServer(listener);
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    stop,
  };
}

/** POSTs `body` as JSON and returns the status and the parsed JSON answer. */
export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Opens a database in `dataDir` with this package's schema applied (for `databasePerTest`). */
export async function openMigrated(dataDir: string): Promise<Database> {
  const db = await openDatabase({ dataDir });
  await db.migrate('@agentd/webhooks-hmac', [...webhookMigrations]);
  return db;
}

/** A dialect the conformance suites run on: libsql always, PostgreSQL when its suites are enabled. */
export interface TestDialect {
  name: 'libsql' | 'pg';
  /** A URL of an empty database of that dialect. */
  url(): Promise<string>;
}

/**
 * The dialects of the package's conformance suites: the same test body runs on a libsql file
 * and, with `AGENTD_TEST_PG_URL` set (or under CI), on a fresh PostgreSQL database.
 */
export function testDialects(): TestDialect[] {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const list: TestDialect[] = [
    {
      name: 'libsql',
      url: async () => {
        const dir = mkdtempSync(join(tmpdir(), 'agentd-webhooks-'));
        dirs.push(dir);
        return `file:${join(dir, 'agentd.db')}`;
      },
    },
  ];
  if (pgSuitesEnabled()) list.push({ name: 'pg', url: () => freshPgDatabaseUrl('agentd_webhooks') });
  return list;
}
