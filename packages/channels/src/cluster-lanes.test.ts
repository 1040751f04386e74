import type { Database } from '@agentd/storage';
import { freshPgDatabaseUrl, pgSuitesEnabled, testInstances } from '@agentd/storage/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeliveryAttempt, OutboundOperation, OutboundResult } from './adapter.js';
import { createDeliveryQueue, type DeliveryQueue } from './delivery-queue.js';
import { openChannelsInstance } from '../test/fixtures.js';

const instances = testInstances();
afterEach(() => instances.closeAll());

/**
 * A recording chat platform shared by every instance: the texts each chat received in order,
 * which instance sent each, overlapping calls of one chat, and calls a test holds open.
 * `check` makes it a platform that can say whether a send happened (Discord's nonce, Slack's
 * history); without it a cut-off send can only be sent again.
 */
function platform() {
  const chats = new Map<string, string[]>();
  const byDelivery = new Map<string, string>();
  const senders: string[] = [];
  const inFlight = new Set<string>();
  let overlaps = 0;
  let holds: Array<{ match: (text: string) => boolean; release: Promise<void>; entered: () => void }> = [];
  return {
    chats,
    senders,
    overlaps: () => overlaps,
    /** The next send of a text `match` accepts is carried out, then answered only after `release`. */
    hold(match: (text: string) => boolean, release: Promise<void>): Promise<void> {
      return new Promise((entered) => holds.push({ match, release, entered }));
    },
    deliverAs(instance: string) {
      return async (_type: string, operation: OutboundOperation, attempt: DeliveryAttempt) => {
        if (operation.op !== 'send') throw new Error('only sends here');
        const chat = operation.channelId;
        if (inFlight.has(chat)) overlaps += 1;
        inFlight.add(chat);
        try {
          // Slower than an enqueue, so a chat's entries wait in its lane.
          await new Promise((resolve) => setTimeout(resolve, 15));
          const list = chats.get(chat) ?? [];
          chats.set(chat, list);
          list.push(operation.text);
          senders.push(instance);
          const messageId = `${instance}:${list.length}`;
          byDelivery.set(attempt.deliveryId, messageId);
          const hold = holds.find((candidate) => candidate.match(operation.text));
          if (hold) {
            holds = holds.filter((candidate) => candidate !== hold);
            hold.entered();
            await hold.release;
          }
          return { messageId } satisfies OutboundResult;
        } finally {
          inFlight.delete(chat);
        }
      };
    },
    async check(_type: string, _operation: OutboundOperation, attempt: DeliveryAttempt) {
      const found = byDelivery.get(attempt.deliveryId);
      return found === undefined ? null : { messageId: `found:${found}` };
    },
  };
}
type Platform = ReturnType<typeof platform>;

/** One instance: its own pool and coordinator (1 s leases), and a delivery queue in cluster mode. */
async function instance(
  url: string,
  id: string,
  chat: Platform,
  options: { check?: boolean; now?: () => number } = {},
) {
  const { db, coordinator, track } = await openChannelsInstance(instances, url, id);
  const queue: DeliveryQueue = track(
    createDeliveryQueue({
      db,
      deliver: chat.deliverAs(id),
      ...(options.check ? { reconcile: chat.check } : {}),
      baseDelayMs: 10,
      cluster: { coordinator, renewMs: 100, scanMs: 200 },
      ...(options.now ? { now: options.now } : {}),
    }),
  );
  await queue.start();
  return { id, db, queue };
}

const send = (channelId: string, text: string) => ({
  channelType: 'telegram',
  operation: { op: 'send' as const, channelId, text },
});

async function stages(db: Database): Promise<Record<string, number>> {
  const rows = await db.query<{ stage: string; n: number }>(
    'SELECT stage, COUNT(*) AS n FROM channel_deliveries GROUP BY stage',
  );
  return Object.fromEntries(rows.map((row) => [row.stage, Number(row.n)]));
}

describe.skipIf(!pgSuitesEnabled())('delivery lanes of three instances on one PostgreSQL', () => {
  it('sends every entry once and each chat in order when the instances take turns enqueuing its entries', async () => {
    const url = await freshPgDatabaseUrl('agentd_channels_lanes');
    const chat = platform();
    const nodes = [
      await instance(url, 'a', chat),
      await instance(url, 'b', chat),
      await instance(url, 'c', chat),
    ];
    const CHATS = 6;
    const PER_CHAT = 25;
    // Each chat's entries are enqueued one after another, each by the next instance, while the
    // chats run side by side: a lane always has entries from several instances waiting.
    await Promise.all(
      Array.from({ length: CHATS }, async (_, c) => {
        for (let k = 0; k < PER_CHAT; k += 1)
          await nodes[(c + k) % 3]!.queue.enqueue(send(`chat-${c}`, `c${c}-${k}`));
      }),
    );
    await expect.poll(() => stages(nodes[0]!.db), { timeout: 30_000 }).toEqual({ sent: CHATS * PER_CHAT });
    for (let c = 0; c < CHATS; c += 1)
      expect(chat.chats.get(`chat-${c}`)).toEqual(Array.from({ length: PER_CHAT }, (_, k) => `c${c}-${k}`));
    // One sender per chat at a time, although every instance sent some.
    expect(chat.overlaps()).toBe(0);
    expect(new Set(chat.senders).size).toBeGreaterThan(1);
  });

  it("keeps each chat's stored order the order its entries became visible in, whatever the enqueuing instance's clock says", async () => {
    const url = await freshPgDatabaseUrl('agentd_channels_lanes_order');
    const chat = platform();
    const a = await instance(url, 'a', chat);
    // B's clock is behind: the entry it writes after A's first was sent carries an earlier time.
    const b = await instance(url, 'b', chat, { now: () => Date.now() - 1500 });
    await a.queue.enqueue(send('chat', 'one'));
    await expect.poll(() => stages(a.db), { timeout: 10_000 }).toEqual({ sent: 1 });
    await b.queue.enqueue(send('chat', 'two'));
    await a.queue.enqueue(send('chat', 'three'));
    await expect.poll(() => stages(a.db), { timeout: 10_000 }).toEqual({ sent: 3 });
    expect(chat.chats.get('chat')).toEqual(['one', 'two', 'three']);
    // The queue's order (the order a new owner would work the chat in) is the order sent.
    const rows = await a.db.query<{ operation: string }>(
      'SELECT operation FROM channel_deliveries ORDER BY created_at, rowid',
    );
    expect(rows.map((row) => (JSON.parse(row.operation) as { text: string }).text)).toEqual([
      'one',
      'two',
      'three',
    ]);
  });

  it("refuses a stalled owner's record once another instance took its lane and re-sent the in-doubt entry (at least once)", async () => {
    const url = await freshPgDatabaseUrl('agentd_channels_lanes_fence');
    const chat = platform();
    let releaseFirst = () => {};
    let releaseSecond = () => {};
    const first = chat.hold(
      (text) => text === 'one',
      new Promise<void>((resolve) => (releaseFirst = resolve)),
    );
    const a = await instance(url, 'a', chat);
    const b = await instance(url, 'b', chat);
    await a.queue.enqueue(send('chat', 'one'));
    await first;
    const stalled = chat.senders[0] === 'a' ? a : b;
    const other = stalled === a ? b : a;
    // The next attempt of "one" (by the other instance) is held too, so its row stays `sending`.
    const second = chat.hold(
      (text) => text === 'one',
      new Promise<void>((resolve) => (releaseSecond = resolve)),
    );
    // The owner stalls past its lease: the other instance takes the lane, finds the row in doubt
    // and, as the platform cannot say whether it was sent, sends it again.
    await stalled.db.execute(
      "UPDATE cluster_singletons SET lease_until = 0 WHERE name LIKE 'channels:lane:%'",
    );
    await second;
    expect(chat.senders).toEqual([stalled.id, other.id]);
    // The stalled owner wakes up with its answer: its `sent` record carries its old fence and
    // matches nothing, though the row is `sending` again (claimed by the new owner).
    releaseFirst();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const row = await other.db.get<{ stage: string; message_id: string | null }>(
      'SELECT stage, message_id FROM channel_deliveries',
    );
    expect(row).toEqual({ stage: 'sending', message_id: null });
    releaseSecond();
    await expect
      .poll(() => other.db.get<{ message_id: string }>('SELECT message_id FROM channel_deliveries'), {
        timeout: 10_000,
      })
      .toEqual({ message_id: `${other.id}:2` });
    // The stalled instance goes on as a peer: a later entry is sent once, after the first.
    await other.queue.enqueue(send('chat', 'two'));
    await expect.poll(() => stages(other.db), { timeout: 10_000 }).toEqual({ sent: 2 });
    expect(chat.chats.get('chat')).toEqual(['one', 'one', 'two']);
  });

  it('settles an in-doubt entry of a stalled owner without sending again where the platform can say it was sent', async () => {
    const url = await freshPgDatabaseUrl('agentd_channels_lanes_check');
    const chat = platform();
    let release = () => {};
    const held = chat.hold((text) => text === 'one', new Promise<void>((resolve) => (release = resolve)));
    const a = await instance(url, 'a', chat, { check: true });
    const b = await instance(url, 'b', chat, { check: true });
    await b.queue.enqueue(send('chat', 'one'));
    await held;
    const stalled = chat.senders[0] === 'a' ? a : b;
    const other = stalled === a ? b : a;
    await other.db.execute("UPDATE cluster_singletons SET lease_until = 0 WHERE name LIKE 'channels:lane:%'");
    await expect
      .poll(() => other.db.get<{ message_id: string | null }>('SELECT message_id FROM channel_deliveries'), {
        timeout: 10_000,
      })
      .toEqual({ message_id: `found:${stalled.id}:1` });
    release();
    await other.queue.enqueue(send('chat', 'two'));
    await expect.poll(() => stages(other.db), { timeout: 10_000 }).toEqual({ sent: 2 });
    expect(chat.chats.get('chat')).toEqual(['one', 'two']);
    // The stalled owner's late record changed nothing.
    expect(
      await other.db.get<{ message_id: string }>(
        'SELECT message_id FROM channel_deliveries WHERE operation LIKE \'%"one"%\'',
      ),
    ).toEqual({ message_id: `found:${stalled.id}:1` });
  });
});
