import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentTurnRequest, AgentTurnRunner } from '@agentd/contracts';
import type { Database, Dialect } from '@agentd/storage';
import {
  openTestDatabase as openDialectDatabase,
  type TestInstance,
  type TestInstances,
} from '@agentd/storage/testing';
import { afterEach, beforeEach } from 'vitest';
import { createChannelsHttpHandler } from '../src/http-handler.js';
import { channelsMigrationSet } from '../src/internal/queue-store.js';
import type { ChannelsService, DeliveryAnswer } from '../src/service.js';
import { listenLocal } from './fake-server.js';

/** A real database (a libsql file, or PostgreSQL) with the queue's table, and a fresh temporary directory. */
export interface TestDatabase {
  dir: string;
  db: Database;
  /** Closes the database and removes its directory. */
  close(): Promise<void>;
}

/**
 * Opens a migrated database of `dialect` (a libsql file in a new temporary directory named after
 * `prefix`, or a new database on the PostgreSQL test server).
 */
export async function openTestDatabase(prefix: string, dialect: Dialect = 'libsql'): Promise<TestDatabase> {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const db = await openDialectDatabase(dialect, dir);
  await db.migrate('@agentd/channels', channelsMigrationSet());
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
 * Registers the hooks that give every test of the calling file (or `describe` block) a fresh
 * database of `dialect` and close what it tracked when it ends.
 */
export function useTestBed(prefix: string, dialect: Dialect = 'libsql'): TestBed {
  let store: TestDatabase | undefined;
  const opened: Array<{ close(): Promise<unknown> }> = [];
  beforeEach(async () => {
    store = await openTestDatabase(prefix, dialect);
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

/** The common operations a platform test delivers to one chat, in the order they run. */
export interface CommonOperations {
  /** The first message. */
  text: string;
  /** A reply to the first message. */
  reply: string;
  /** The first message's new text (no edit when absent: the platform has none). */
  edit?: string;
  /** A reaction on the first message. */
  emoji: string;
  /** Which message is deleted (none when absent). */
  remove?: 'sent' | 'reply';
  /** A file sent last; `content` is its text. */
  file: { content: string; mimeType: string; filename: string; caption?: string };
}

/**
 * Delivers `operations` to `channelId` through the service's queue, each once its predecessor
 * is sent, and answers what the send, the reply and the file were answered.
 */
export async function deliverCommon(
  service: ChannelsService,
  channelType: string,
  channelId: string,
  operations: CommonOperations,
): Promise<{ sent: DeliveryAnswer; reply: DeliveryAnswer; file: DeliveryAnswer }> {
  const { text, reply: replyText, edit, emoji, remove, file } = operations;
  const sent = await service.deliver(channelType, { op: 'send', channelId, text });
  const messageId = sent.messageId!;
  const reply = await service.deliver(channelType, {
    op: 'send',
    channelId,
    text: replyText,
    replyTo: messageId,
  });
  if (edit !== undefined)
    await service.deliver(channelType, { op: 'edit', channelId, messageId, text: edit });
  await service.deliver(channelType, { op: 'react', channelId, messageId, emoji });
  const removed = remove === 'reply' ? reply.messageId! : messageId;
  if (remove) await service.deliver(channelType, { op: 'delete', channelId, messageId: removed });
  const { content, ...attached } = file;
  const data = Buffer.from(content).toString('base64');
  return {
    sent,
    reply,
    file: await service.deliver(channelType, { op: 'attach', channelId, data, ...attached }),
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
 * One instance of a cluster test on the database at `url`: its own pool and coordinator (1 s
 * leases) from `instances`, the channels tables migrated.
 */
export function openChannelsInstance(
  instances: TestInstances,
  url: string,
  id: string,
): Promise<TestInstance> {
  return instances.open(url, id, {
    coordination: { leaseMs: 1000 },
    migrate: { packageName: '@agentd/channels', migrations: channelsMigrationSet() },
  });
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
 * A `telegram` section in webhook mode: bot `botToken` on the fake at `apiBaseUrl`, agent
 * `helper`, user 100 allowed, updates posted to the service served at `base` (see
 * {@link serveChannels}); `extra` adds or overrides fields.
 */
export function telegramWebhookSection(
  botToken: string,
  apiBaseUrl: string,
  base: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    enabled: true,
    botToken,
    apiBaseUrl,
    agentId: 'helper',
    allowFrom: ['100'],
    mode: 'webhook',
    webhookUrl: `${base}/channels/telegram/webhook`,
    ...extra,
  };
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
