import { type Database, type Dialect, openDatabase } from '@agentd/storage';
import { testDialects } from '@agentd/storage/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../test/fixtures.js';
import type { DeliveryAttempt, OutboundOperation } from './adapter.js';
import { createDeliveryQueue, type DeliveryQueue, type DeliveryQueueOptions } from './delivery-queue.js';
import { platformError } from './errors.js';
import { type ChannelsDatabase, channelsMigrations, type DeliveryEntry } from './internal/queue-store.js';

let store: TestDatabase;
let db: Database;
const queues: DeliveryQueue[] = [];

/** Each test of the calling block gets its own migrated database of `dialect`. */
function useStore(dialect: Dialect): void {
  beforeEach(async () => {
    store = await openTestDatabase('channels-queue', dialect);
    db = store.db;
  });

  afterEach(async () => {
    for (const queue of queues.splice(0)) await queue.close();
    await store.close();
  });
}

/** The platform side of a test: what was attempted, in order, and the stored row each time. */
interface Platform {
  attempts: Array<{ text: string; attempt: DeliveryAttempt; stored: DeliveryEntry | undefined }>;
  deliver: DeliveryQueueOptions['deliver'];
}

function platform(fail: (text: string) => Error | undefined = () => undefined): Platform {
  const attempts: Platform['attempts'] = [];
  return {
    attempts,
    async deliver(_type, operation, attempt) {
      const text = operation.op === 'send' ? operation.text : operation.op;
      attempts.push({ text, attempt, stored: await peek(attempt.deliveryId) });
      const error = fail(text);
      if (error) throw error;
      return { messageId: `m-${text}` };
    },
  };
}

async function peek(deliveryId: string): Promise<DeliveryEntry | undefined> {
  return createDeliveryQueue({ db, deliver: async () => ({ messageId: '' }) }).get(deliveryId);
}

async function open(options: Partial<DeliveryQueueOptions> & Pick<DeliveryQueueOptions, 'deliver'>) {
  const queue = createDeliveryQueue({ db, baseDelayMs: 10, ...options });
  queues.push(queue);
  await queue.start();
  return queue;
}

const send = (channelId: string, text: string): OutboundOperation => ({ op: 'send', channelId, text });

/** Sends and waits for the outcome, as the message methods do. */
async function deliver(queue: DeliveryQueue, channelId: string, text: string, extra = {}) {
  const { entry } = await queue.enqueue({
    channelType: 'telegram',
    operation: send(channelId, text),
    ...extra,
  });
  return queue.settled(entry.deliveryId, 5000);
}

/** A trigger failing the queue's `event` on rows matching `when`, in the dialect's own syntax. */
async function poison(dialect: Dialect, event: string, when: string, message: string): Promise<void> {
  if (dialect === 'libsql') {
    await db.execute(`CREATE TRIGGER poison BEFORE ${event} ON channel_deliveries WHEN ${when}
      BEGIN SELECT RAISE(ABORT, '${message}'); END`);
    return;
  }
  await db.execute(`CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION '${message}'; END $$`);
  await db.execute(`CREATE TRIGGER poison BEFORE ${event} ON channel_deliveries FOR EACH ROW
    WHEN (${when}) EXECUTE FUNCTION poison()`);
}

/** The database as the queue sees it, counting what it is asked. */
function counted(inner: ChannelsDatabase) {
  const calls = { execute: 0, batch: 0 };
  const wrapped: ChannelsDatabase = {
    execute: (statement, args) => {
      calls.execute++;
      return inner.execute(statement, args);
    },
    batch: (statements) => {
      calls.batch++;
      return inner.batch(statements);
    },
  };
  return { calls, db: wrapped };
}

// The queue's statements on both dialects (PostgreSQL when the test server is set).
describe.each(testDialects())('on %s', (dialect) => {
  useStore(dialect);

  describe('the delivery queue', () => {
    it('writes an idle chat’s entry already claimed and sends it with two commits and no reads', async () => {
      const target = platform();
      const { calls, db: watched } = counted(db);
      const queue = await open({ db: watched, deliver: target.deliver });
      calls.execute = 0;
      const outcome = await deliver(queue, '1', 'hello');
      expect(outcome).toMatchObject({ stage: 'sent', messageId: 'm-hello', attempts: 1 });
      // Durable as `sending`, attempt 1, before the platform was called.
      expect(target.attempts[0]?.stored).toMatchObject({ stage: 'sending', attempts: 1 });
      expect(calls).toEqual({ execute: 0, batch: 2 });
      // The answer came from memory and is exactly what was stored.
      expect(await queue.get(outcome.deliveryId)).toEqual(outcome);
    });

    it('group-commits many chats at once: far fewer transactions than entries, order kept per chat', async () => {
      const target = platform();
      const { calls, db: watched } = counted(db);
      const queue = await open({ db: watched, deliver: target.deliver, concurrency: 4 });
      calls.execute = 0;
      const texts = Array.from({ length: 60 }, (_, n) => `c${n % 6}-${Math.floor(n / 6)}`);
      const outcomes = await Promise.all(texts.map((text) => deliver(queue, text.slice(1, 2), text)));
      expect(outcomes.every((entry) => entry.stage === 'sent')).toBe(true);
      expect(calls.execute).toBe(0);
      expect(calls.batch).toBeLessThan(60);
      for (let chat = 0; chat < 6; chat++) {
        const seen = target.attempts.map((a) => a.text).filter((text) => text.startsWith(`c${chat}-`));
        expect(seen).toEqual(texts.filter((text) => text.startsWith(`c${chat}-`)));
      }
      // Entries behind a busy chat were written `queued`, then claimed before their attempt.
      expect(target.attempts.every((a) => a.stored?.stage === 'sending' && a.stored.attempts === 1)).toBe(
        true,
      );
      expect(await queue.counts()).toEqual({ queued: 0, sending: 0, sent: 60, failed: 0, deadLetter: 0 });
    });

    it('answers a key sent twice in one commit from the one entry, attempted once', async () => {
      const target = platform();
      const queue = await open({ deliver: target.deliver });
      const request = { channelType: 'telegram', operation: send('2', 'once'), idempotencyKey: 'k' };
      const [first, second] = await Promise.all([queue.enqueue(request), queue.enqueue(request)]);
      expect(first.existing).toBe(false);
      expect(second).toMatchObject({ existing: true, entry: { deliveryId: first.entry.deliveryId } });
      expect(await queue.settled(first.entry.deliveryId, 5000)).toMatchObject({ stage: 'sent' });
      expect(target.attempts).toHaveLength(1);
    });

    it('writes entries with and without a key in one commit, each answered by its own statement', async () => {
      const target = platform();
      const queue = await open({ deliver: target.deliver });
      const keyed = { channelType: 'telegram', operation: send('4', 'keyed'), idempotencyKey: 'k4' };
      const plain = (text: string) => ({ channelType: 'telegram', operation: send('5', text) });
      const outcomes = await Promise.all([
        queue.enqueue(plain('a')),
        queue.enqueue(keyed),
        queue.enqueue(plain('b')),
        queue.enqueue(keyed),
      ]);
      expect(outcomes.map((outcome) => outcome.existing)).toEqual([false, false, false, true]);
      expect(outcomes[3]?.entry.deliveryId).toBe(outcomes[1]?.entry.deliveryId);
      // Entries without a key carry their delivery id as their key, as stored.
      expect(outcomes[0]?.entry.idempotencyKey).toBe(outcomes[0]?.entry.deliveryId);
      for (const index of [0, 1, 2]) {
        const { deliveryId } = outcomes[index]!.entry;
        expect(await queue.settled(deliveryId, 5000)).toMatchObject({ deliveryId, stage: 'sent' });
      }
      expect(target.attempts.map((attempt) => attempt.text).sort()).toEqual(['a', 'b', 'keyed']);
      expect(await queue.counts()).toEqual({ queued: 0, sending: 0, sent: 3, failed: 0, deadLetter: 0 });
    });

    it('retries with backoff, records each failure, and dead-letters after the cap', async () => {
      const target = platform((text) => (text === 'flaky' ? new Error('socket hang up') : undefined));
      const queue = await open({ deliver: target.deliver, maxAttempts: 3 });
      const outcome = await deliver(queue, '3', 'flaky');
      expect(outcome).toMatchObject({
        stage: 'deadLetter',
        attempts: 3,
        lastError: expect.stringContaining('gave up after 3 attempts'),
      });
      expect(await queue.get(outcome.deliveryId)).toEqual(outcome);
      // Each retry was claimed after the failure was recorded: attempt n is stored as `sending`, n.
      expect(target.attempts.map((a) => [a.attempt.attempt, a.stored?.stage, a.stored?.attempts])).toEqual([
        [1, 'sending', 1],
        [2, 'sending', 2],
        [3, 'sending', 3],
      ]);
    });

    it('lets a permanent refusal through to deadLetter at once, and the chat goes on', async () => {
      const target = platform((text) =>
        text === 'bad'
          ? platformError('telegram', 'Bad Request: chat not found', { retryable: false, status: 400 })
          : undefined,
      );
      const queue = await open({ deliver: target.deliver });
      const [bad, good] = await Promise.all([deliver(queue, '4', 'bad'), deliver(queue, '4', 'good')]);
      expect(bad).toMatchObject({ stage: 'deadLetter', attempts: 1 });
      expect(good).toMatchObject({ stage: 'sent' });
    });
  });

  describe('the delivery queue when the database fails', () => {
    it('refuses only the entry whose write fails; the rest of its commit is written and sent', async () => {
      await poison(dialect, 'INSERT', "NEW.channel_id = 'poison'", 'poisoned row');
      const target = platform();
      const queue = await open({ deliver: target.deliver });
      const results = await Promise.allSettled(
        ['5', 'poison', '6'].map((chat) =>
          queue.enqueue({ channelType: 'telegram', operation: send(chat, `to ${chat}`) }),
        ),
      );
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      await expect.poll(() => target.attempts.map((a) => a.text).sort()).toEqual(['to 5', 'to 6']);
      await expect.poll(() => queue.counts()).toMatchObject({ sent: 2, queued: 0, sending: 0 });
    });

    it('never re-sends an acknowledged attempt whose record failed; the next start reconciles it', async () => {
      await poison(
        dialect,
        'UPDATE OF stage',
        "NEW.stage = 'sent' AND NEW.channel_id = 'unrecorded'",
        'disk full',
      );
      const target = platform();
      const queue = await open({ deliver: target.deliver });
      const { entry } = await queue.enqueue({ channelType: 'telegram', operation: send('unrecorded', 'x') });
      const other = await deliver(queue, '7', 'recorded');
      expect(other.stage).toBe('sent');
      // The waiter answers what is stored once its time is up: the attempt is still in doubt.
      expect(await queue.settled(entry.deliveryId, 300)).toMatchObject({ stage: 'sending', attempts: 1 });
      expect(target.attempts.map((a) => a.text)).toEqual(['x', 'recorded']);
      await queue.close();
      await db.execute(
        dialect === 'pg' ? 'DROP TRIGGER poison ON channel_deliveries' : 'DROP TRIGGER poison',
      );

      const asked: DeliveryAttempt[] = [];
      const restarted = await open({
        deliver: target.deliver,
        reconcile: async (_type, _operation, attempt) => {
          asked.push(attempt);
          return { messageId: 'm-x' };
        },
      });
      expect(asked).toEqual([{ deliveryId: entry.deliveryId, attempt: 1 }]);
      expect(await restarted.get(entry.deliveryId)).toMatchObject({ stage: 'sent', messageId: 'm-x' });
      expect(target.attempts).toHaveLength(2);
    });

    it('recovers entries a crash left between their group-committed write and the attempt', async () => {
      // The process "dies" right after a commit: the writes are durable, nothing after them runs.
      let crashed = false;
      const dying: ChannelsDatabase = {
        execute: (statement, args) => db.execute(statement, args),
        batch: async (statements) => {
          const results = await db.batch(statements);
          if (crashed) return new Promise<never>(() => undefined);
          return results;
        },
      };
      const first = platform();
      const doomed = createDeliveryQueue({ db: dying, deliver: first.deliver });
      await doomed.start();
      crashed = true;
      const writes = [
        doomed.enqueue({ channelType: 'telegram', operation: send('8', 'plain') }),
        doomed.enqueue({ channelType: 'telegram', operation: send('9', 'step'), rootRunId: 'run-1' }),
        doomed.enqueue({ channelType: 'telegram', operation: send('8', 'behind') }),
      ];
      await expect.poll(async () => (await doomed.counts()).sending + (await doomed.counts()).queued).toBe(3);
      expect(first.attempts).toEqual([]);
      expect(await doomed.counts()).toMatchObject({ sending: 2, queued: 1 });
      void Promise.allSettled(writes);

      const second = platform();
      const restarted = await open({ deliver: second.deliver, reconcile: async () => undefined });
      await expect.poll(() => second.attempts.map((a) => a.text)).toEqual(['plain', 'behind']);
      // A run's step cut off where the platform cannot tell is never repeated.
      await expect
        .poll(() => restarted.counts())
        .toEqual({ queued: 0, sending: 0, sent: 2, failed: 0, deadLetter: 1 });
    });
  });
});

// The upgrade path of the libsql schema.
describe('libsql', () => {
  useStore('libsql');

  describe('the delivery queue table', () => {
    it('upgrades a version-1 table in place: waiting rows survive and are sent after the index change', async () => {
      const old = await openDatabase({ dataDir: `${store.dir}/v1` });
      try {
        await old.migrate('@agentd/channels', channelsMigrations.slice(0, 1));
        const writer = createDeliveryQueue({ db: old, deliver: async () => ({ messageId: 'never' }) });
        await writer.enqueue({ channelType: 'telegram', operation: send('10', 'waited') });
        await writer.close();
        await old.migrate('@agentd/channels', [...channelsMigrations]);
        const indexes = await old.execute(
          `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'channel_deliveries'
          AND name NOT LIKE 'sqlite_autoindex%' ORDER BY name`,
        );
        expect(indexes.rows.map((row) => row.name)).toEqual([
          'channel_deliveries_stage',
          'channel_deliveries_webchat',
        ]);
        const target = platform();
        const queue = createDeliveryQueue({ db: old, deliver: target.deliver });
        await queue.start();
        await expect.poll(() => target.attempts.map((a) => a.text)).toEqual(['waited']);
        await expect.poll(() => queue.counts()).toMatchObject({ queued: 0, sent: 1 });
        await queue.close();
      } finally {
        await old.close();
      }
    });
  });
});
