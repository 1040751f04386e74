import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentTurnRequest, AgentTurnRunner } from '@agentd/contracts';
import { type Database, openDatabase } from '@agentd/storage';
import { afterEach, beforeEach } from 'vitest';
import { createChannelsHttpHandler } from '../src/http-handler.js';
import { channelsMigrations } from '../src/internal/queue-store.js';
import type { ChannelsService } from '../src/service.js';
import { listenLocal } from './fake-server.js';

/** A real libsql file with the queue's table, in a fresh temporary directory. */
export interface TestDatabase {
  dir: string;
  db: Database;
  /** Closes the database and removes its directory. */
  close(): Promise<void>;
}

/** Opens a migrated database in a new temporary directory named after `prefix`. */
export async function openTestDatabase(prefix: string): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const db = await openDatabase({ dataDir: dir });
  await db.migrate('@agentd/channels', [...channelsMigrations]);
  return {
    dir,
    db,
    async close() {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What each test of a file gets from `useTestBed`: its own database and what it opened, closed after it. */
export interface TestBed {
  /** This test's migrated database (a fresh one per test). */
  readonly db: Database;
  /** Closes `resource` after this test, latest first, the database last. */
  closeAfter<T extends { close(): Promise<unknown> }>(resource: T): T;
}

/**
 * Registers the hooks that give every test of the calling file a fresh database (in a
 * temporary directory named after `prefix`) and close what it tracked when it ends.
 */
export function useTestBed(prefix: string): TestBed {
  let store: TestDatabase | undefined;
  const opened: Array<{ close(): Promise<unknown> }> = [];
  beforeEach(async () => {
    store = await openTestDatabase(prefix);
  });
  afterEach(async () => {
    for (const resource of opened.splice(0).reverse()) await resource.close();
    await store?.close();
    store = undefined;
  });
  return {
    get db() {
      if (!store) throw new Error('the test bed is open only inside a test');
      return store.db;
    },
    closeAfter(resource) {
      opened.push(resource);
      return resource;
    },
  };
}

/** An agent that records every turn it is asked for and answers `answer to <message>`. */
export function recordingRunner(
  turns: AgentTurnRequest[],
  answer: (message: string) => string = (message) => `answer to ${message}`,
): AgentTurnRunner {
  return {
    runTurn: async (request) => {
      turns.push(request);
      return {
        response: answer(request.message),
        tokensUsed: { input: 1, output: 1, total: 2 },
        finishReason: 'stop',
        sessionKey: request.sessionKey ?? '',
      };
    },
  };
}

/**
 * A local HTTP server routing `/channels/…` to the service `current()` answers at each request
 * (a test may replace its service), 404 for anything else, as the daemon's routes do.
 */
export async function serveChannels(
  current: () => ChannelsService | undefined,
): Promise<{ url: string; close(): Promise<void> }> {
  const { url, close } = await listenLocal((req, res) => {
    const service = current();
    if (service) {
      const http = createChannelsHttpHandler({ service });
      if (http.matches(req.url ?? '')) return void http.handle(req, res);
    }
    res.writeHead(404).end();
  });
  return { url, close };
}

/**
 * Posts `payload` to `<url>/channels/slack/events` signed as Slack signs its Events API
 * callbacks (`v0=` HMAC-SHA256 of `v0:<timestamp>:<body>` with the signing secret); `ts`
 * (seconds) defaults to now, an old one tests the replay window.
 */
export function signedSlackPost(
  url: string,
  payload: unknown,
  secret: string,
  ts?: number,
): Promise<Response> {
  const body = JSON.stringify(payload);
  const stamp = String(ts ?? Math.floor(Date.now() / 1000));
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${stamp}:${body}`).digest('hex')}`;
  return fetch(`${url}/channels/slack/events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-slack-request-timestamp': stamp,
      'x-slack-signature': signature,
    },
    body,
  });
}
