import type { Database } from '@agentd/storage';
import { pgSuitesEnabled } from '@agentd/storage/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../../../../packages/channels/test/fake-discord.js';
import { eventually, postRpc } from '../helpers.js';
import { CLUSTER_CONFIG, type ClusterHarness, type ClusterNode, clusterHarness } from './harness.js';

const TOKEN = 'cluster.lanes.discord-token-0123456789';
const CHATS = 20;
const PER_CHAT = 50;
// Discord channel ids are snowflakes.
const chatId = (c: number) => String(900_000_000_000_000_000n + BigInt(c));

let harness: ClusterHarness | undefined;
let discord: FakeDiscord | undefined;
let nodes: ClusterNode[] = [];
let db: Database | undefined;

beforeAll(async () => {
  if (!pgSuitesEnabled()) return;
  // Each message takes Discord a few ms, so a chat's messages wait in its lane.
  discord = await startFakeDiscord({ token: TOKEN, latencyMs: 5 });
  harness = await clusterHarness('agentd_cluster_lanes');
  nodes = await harness.startMany(3, {
    ...CLUSTER_CONFIG,
    channels: { discord: { enabled: true, botToken: TOKEN, apiBaseUrl: discord.url } },
  });
  db = await harness.database();
}, 180_000);
afterAll(async () => {
  await harness?.cleanup();
  await discord?.close();
});

/**
 * Sends `texts[chat][k]` with `message.send`, message k of chat c through instance
 * (c·n + k) mod 3 (round-robin over every message), as one JSON-RPC batch per instance and chat.
 * Answers when every batch was answered or refused (an instance killed meanwhile).
 */
function sendAll(texts: string[][], targets: ClusterNode[]): Promise<unknown> {
  const batches = new Map<string, { node: ClusterNode; calls: unknown[] }>();
  texts.forEach((list, c) => {
    list.forEach((text, k) => {
      const node = targets[(c * list.length + k) % targets.length]!;
      const key = `${node.name}:${c}`;
      const batch = batches.get(key) ?? { node, calls: [] };
      batches.set(key, batch);
      batch.calls.push({
        jsonrpc: '2.0',
        id: `${c}-${k}`,
        method: 'message.send',
        params: { channel_type: 'discord', channel_id: chatId(c), text },
      });
    });
  });
  return Promise.all(
    [...batches.values()].map(({ node, calls }) =>
      postRpc(node.url, JSON.stringify(calls)).catch((error: unknown) => error),
    ),
  );
}

/** Stored rows by stage, and each chat's texts in the queue's order (created_at, then insertion). */
async function stored() {
  const rows = await db!.query<{ channel_id: string; operation: string; stage: string }>(
    'SELECT channel_id, operation, stage FROM channel_deliveries ORDER BY created_at, rowid',
  );
  const byChat = new Map<string, string[]>();
  for (const row of rows) {
    const list = byChat.get(row.channel_id) ?? [];
    byChat.set(row.channel_id, list);
    list.push((JSON.parse(row.operation) as { text: string }).text);
  }
  return { total: rows.length, sent: rows.filter((row) => row.stage === 'sent').length, byChat };
}

/**
 * Waits until every stored message is sent; answers the stored rows. The bound is a hang guard,
 * not a speed check (1,000 messages over three daemons on a loaded 2-core machine took 37-58 s).
 */
async function allSent(total: number) {
  return eventually(async () => {
    const now = await stored();
    return now.sent === total ? now : undefined;
  }, 150_000).catch(async (error: unknown) => {
    const stages = await db!.query('SELECT stage, COUNT(*) AS n FROM channel_deliveries GROUP BY stage');
    const perChat = await db!.query(
      "SELECT channel_id, SUM(CASE WHEN stage = 'sent' THEN 1 ELSE 0 END) AS sent, SUM(CASE WHEN stage = 'sending' THEN 1 ELSE 0 END) AS sending FROM channel_deliveries GROUP BY channel_id",
    );
    const diag = perChat
      .filter((row) => Number(row.sending) > 0)
      .map((row) => ({
        ...row,
        created: discord!.created(String(row.channel_id)).length,
        calls: discord!.calls.filter((call) => call.path.includes(String(row.channel_id))).length,
      }));
    throw new Error(`${String(error)}: ${JSON.stringify(stages)} ${JSON.stringify(diag)}`);
  });
}

/** Each chat's texts as Discord created them. */
const createdTexts = (c: number) => discord!.created(chatId(c)).map((message) => String(message.content));

describe.skipIf(!pgSuitesEnabled())('channel delivery lanes on three instances', { timeout: 300_000 }, () => {
  it('sends 20 chats × 50 messages enqueued round-robin on every instance once each, one sender per chat, in order', async () => {
    const texts = Array.from({ length: CHATS }, (_, c) =>
      Array.from({ length: PER_CHAT }, (_, k) => `c${c} m${k}`),
    );
    await sendAll(texts, nodes);
    await allSent(CHATS * PER_CHAT);
    for (let c = 0; c < CHATS; c += 1) {
      const created = createdTexts(c);
      // Each message once, none lost.
      expect([...created].sort()).toEqual([...texts[c]!].sort());
      // The messages each instance queued for a chat went out in the order it queued them (a
      // chat's messages on three instances have no order between them but the queue's own).
      for (let node = 0; node < 3; node += 1) {
        const mine = texts[c]!.filter((_, k) => (c * PER_CHAT + k) % 3 === node);
        expect(created.filter((text) => mine.includes(text))).toEqual(mine);
      }
    }
    // One sender per chat at a time: the lane's holder.
    expect(discord!.overlaps()).toBe(0);
  });

  it('loses and repeats nothing when the instance holding lanes is killed -9 while sending (Discord: exactly once by nonce)', async () => {
    const before = (await stored()).total;
    const texts = Array.from({ length: CHATS }, (_, c) =>
      Array.from({ length: 5 }, (_, k) => `c${c} late${k}`),
    );
    discord!.stall();
    const answered = sendAll(texts, nodes);
    await eventually(async () => ((await stored()).total === before + CHATS * 5 ? true : undefined), 60_000);
    // The lane holders' first messages reach Discord, but no answer gets back before the kill.
    await eventually(async () => (discord!.stalled() > 0 ? true : undefined), 30_000);
    discord!.carryOutStalled();
    const holders = await db!.query<{ owner: string; n: number }>(
      `SELECT owner, COUNT(*) AS n FROM cluster_singletons
        WHERE name LIKE 'channels:lane:%' AND lease_until > (extract(epoch from now()) * 1000)::bigint
        GROUP BY owner ORDER BY n DESC`,
    );
    const statuses = await Promise.all(nodes.map((node) => harness!.status(node)));
    const victim = nodes[statuses.findIndex((status) => status.instanceId === holders[0]?.owner)]!;
    expect(victim).toBeDefined();
    const inDoubt = await db!.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM channel_deliveries WHERE stage = 'sending'",
    );
    expect(Number(inDoubt[0]?.n)).toBeGreaterThan(0);
    await harness!.kill(victim);
    discord!.unstall();
    await answered;
    // The survivors take the victim's lanes once their leases lapse, post its in-doubt messages
    // again with the same nonce (Discord answers the message already created) and go on in order.
    const rows = await allSent(before + CHATS * 5);
    // Every message stored before Discord answered again went out once, each chat in the queue's order.
    for (let c = 0; c < CHATS; c += 1) expect(createdTexts(c)).toEqual(rows.byChat.get(chatId(c)));
    const contents = Array.from({ length: CHATS }, (_, c) => discord!.created(chatId(c))).flat();
    expect(new Set(contents.map((message) => message.content)).size).toBe(contents.length);
  });
});
