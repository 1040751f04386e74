import { beforeEach, describe, expect, it } from 'vitest';
import { deliverCommon, useTestBed } from '../test/fixtures.js';
import { type FakeDiscord, startFakeDiscord } from '../test/fake-discord.js';
import { type FakeSlack, startFakeSlack } from '../test/fake-slack.js';
import type { ChannelAdapter, InboundReaction } from './adapter.js';
import { createDiscordAdapter } from './adapters/discord.js';
import { createSlackAdapter } from './adapters/slack.js';
import { channelsSectionSchema } from './config.js';
import { createDeliveryQueue } from './delivery-queue.js';
import { type ChannelsService, type ChannelsServiceOptions, createChannelsService } from './service.js';

const SLACK_TOKEN = 'xoxb-fake-slack-token-0123456789';
const DISCORD_TOKEN = 'fake.discord.token-0123456789abcdef';
const bed = useTestBed('channels-platforms');
let slack: FakeSlack;
let discord: FakeDiscord;

beforeEach(async () => {
  slack = bed.closeAfter(await startFakeSlack({ token: SLACK_TOKEN }));
  discord = bed.closeAfter(await startFakeDiscord({ token: DISCORD_TOKEN }));
});

const section = () =>
  channelsSectionSchema.parse({
    slack: { enabled: true, botToken: SLACK_TOKEN, apiBaseUrl: slack.url },
    discord: { enabled: true, botToken: DISCORD_TOKEN, apiBaseUrl: discord.url },
    delivery: { baseDelayMs: 20, maxAttempts: 3 },
  });

async function open(): Promise<ChannelsService> {
  const service = createChannelsService({
    db: bed.db,
    section: section(),
    pollMs: 50,
    settleTimeoutMs: 8000,
  });
  bed.closeAfter(service);
  await service.start();
  return service;
}

/** Rows a crash left behind: an entry claimed (`sending`) whose attempt may or may not have reached the platform. */
async function inDoubt(channelType: string, channelId: string, text: string, attempt?: ChannelAdapter) {
  const writer = createDeliveryQueue({ db: bed.db, deliver: async () => ({ messageId: 'never' }) });
  const { entry } = await writer.enqueue({
    channelType,
    rootRunId: 'run-9',
    operation: { op: 'send', channelId, text },
  });
  if (attempt) await attempt.deliver(entry.operation, { deliveryId: entry.deliveryId, attempt: 1 });
  await bed.db.execute(
    `UPDATE channel_deliveries SET stage = 'sending', attempts = 1 WHERE delivery_id = ?`,
    [entry.deliveryId],
  );
  await writer.close();
  return entry.deliveryId;
}

/**
 * Two posts a crash left in doubt, one that reached the platform (through `adapter`) and one that
 * did not, then a start: the chat shows each once, in order, and both are recorded as sent, the
 * one that landed with the platform's own id. Answers the two entries.
 */
async function expectReconciled(
  channelType: string,
  channelId: string,
  adapter: ChannelAdapter,
  posted: () => Array<{ id: unknown; text: unknown }>,
) {
  const landed = await inDoubt(channelType, channelId, 'landed', adapter);
  const lost = await inDoubt(channelType, channelId, 'lost');
  await open();
  await expect.poll(() => posted().length, { timeout: 8000 }).toBe(2);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(posted().map((message) => message.text)).toEqual(['landed', 'lost']);
  const queue = createDeliveryQueue({ db: bed.db, deliver: async () => ({ messageId: 'x' }) });
  const entries = { landed: await queue.get(landed), lost: await queue.get(lost) };
  expect(entries.landed).toMatchObject({ stage: 'sent', messageId: posted()[0]?.id });
  expect(entries.lost).toMatchObject({ stage: 'sent' });
  return entries;
}

/** Sends 60 messages at once, each to its own channel from `firstChannel` on; the failures. */
async function sendBurst(adapter: ChannelAdapter, firstChannel: number, label: string): Promise<unknown[]> {
  const results = await Promise.allSettled(
    Array.from({ length: 60 }, (_, i) =>
      adapter.deliver(
        { op: 'send', channelId: String(firstChannel + i), text: `${label} ${i}` },
        { deliveryId: `${label}-${i}`, attempt: 1 },
      ),
    ),
  );
  return results.filter((result) => result.status === 'rejected');
}

describe('slack over the Web API', () => {
  it('carries the common operations, the actions and history to the Web API', async () => {
    const service = await open();
    const { sent, file } = await deliverCommon(service, 'slack', 'C1', {
      text: 'hello',
      reply: 'in thread',
      edit: 'hello!',
      emoji: ':thumbsup:',
      remove: 'sent',
      file: { content: 'col1,col2', mimeType: 'text/csv', filename: 'data.csv' },
    });
    expect(sent).toMatchObject({ status: 'sent', messageId: expect.stringMatching(/^\d+\.\d+$/) });
    const ts = sent.messageId!;
    expect(file.status).toBe('sent');
    const posts = slack.of('chat.postMessage').map((call) => call.params);
    expect(posts[0]).toMatchObject({
      channel: 'C1',
      text: 'hello',
      metadata: { event_type: 'agentd_delivery', event_payload: { deliveryId: sent.deliveryId } },
    });
    expect(posts[1]).toMatchObject({ thread_ts: ts });
    expect(slack.of('chat.update')[0]?.params).toMatchObject({ ts, text: 'hello!' });
    expect(slack.of('reactions.add')[0]?.params).toMatchObject({ timestamp: ts, name: 'thumbsup' });
    expect(slack.of('chat.delete')).toHaveLength(1);
    expect(slack.of('files.getUploadURLExternal')[0]?.params).toMatchObject({
      filename: 'data.csv',
      length: '9',
    });
    expect(slack.of('upload')[0]?.params.body).toContain('col1,col2');
    expect(slack.of('files.completeUploadExternal')[0]?.params).toMatchObject({ channel_id: 'C1' });

    const history = await service.fetch('slack', 'C1', 10);
    expect(history.map((message) => message.text)).toEqual(['in thread', 'hello']);
    expect(await service.action('slack', { action: 'topic', channel_id: 'C1', topic: 'ops' })).toMatchObject({
      ok: true,
    });
    expect(await service.action('slack', { action: 'pin', channel_id: 'C1', message_id: ts })).toEqual({
      ok: true,
    });
    expect(await service.action('slack', { action: 'userInfo', user: 'U1' })).toMatchObject({
      user: { id: 'U1' },
    });
  });

  it('honours a 429 Retry-After and dead-letters a permanent error', async () => {
    const service = await open();
    slack.fail('chat.postMessage', 'ratelimited', { retryAfter: 1 });
    const began = Date.now();
    expect((await service.deliver('slack', { op: 'send', channelId: 'C2', text: 'x' })).status).toBe('sent');
    expect(Date.now() - began).toBeGreaterThanOrEqual(950);
    slack.fail('chat.postMessage', 'channel_not_found');
    const refused = await service.deliver('slack', { op: 'send', channelId: 'C2', text: 'y' });
    expect(refused).toMatchObject({ status: 'deadLetter', error: 'slack: channel_not_found' });
    expect(slack.of('chat.postMessage')).toHaveLength(3);
  });

  it('reconciles an in-doubt post by its metadata: found is recorded, missing is posted once', async () => {
    const adapter = createSlackAdapter({ botToken: SLACK_TOKEN, apiBaseUrl: slack.url });
    const { lost } = await expectReconciled('slack', 'C3', adapter, () =>
      slack.posted('C3').map((message) => ({ id: message.ts, text: message.text })),
    );
    expect(lost).toMatchObject({ attempts: 2 });
  });
});

describe('discord over the REST API', () => {
  it('carries the common operations, the actions and history to the REST API', async () => {
    const service = await open();
    const { sent, file } = await deliverCommon(service, 'discord', '111', {
      text: 'hello',
      reply: 'reply',
      edit: 'hello!',
      emoji: '👍',
      remove: 'sent',
      file: { content: 'png?', mimeType: 'image/png', filename: 'a.png', caption: 'look' },
    });
    expect(sent.status).toBe('sent');
    const id = sent.messageId!;
    expect(file.status).toBe('sent');
    const posts = discord.of(/^POST \/channels\/111\/messages$/).map((call) => call.body);
    expect(posts[0]).toMatchObject({
      content: 'hello',
      enforce_nonce: true,
      nonce: expect.stringMatching(/^[0-9a-f]{25}$/),
    });
    expect(posts[1]).toMatchObject({ message_reference: { message_id: id } });
    expect(posts[2]).toMatchObject({
      content: 'look',
      attachments: [{ id: 0, filename: 'a.png' }],
      files: [{ filename: 'a.png', size: 4 }],
    });
    expect(discord.of(/^PATCH /)[0]?.body).toEqual({ content: 'hello!' });
    expect(discord.of(/reactions\/%F0%9F%91%8D\/@me$/)).toHaveLength(1);
    expect(discord.of(/^DELETE /)).toHaveLength(1);

    expect((await service.fetch('discord', '111', 5)).map((message) => message.text)).toEqual([
      'look',
      'reply',
      'hello',
    ]);
    expect(
      await service.action('discord', { action: 'threadCreate', channel_id: '111', name: 'topic' }),
    ).toMatchObject({
      threadId: expect.any(String),
      name: 'topic',
    });
    expect(await service.action('discord', { action: 'channelInfo', channel_id: '111' })).toMatchObject({
      channel: { id: '111', name: 'general' },
    });
  });

  it('waits out a 429 retry_after and dead-letters a 400', async () => {
    const service = await open();
    discord.fail(/^POST \/channels\/222\/messages$/, 429, { retryAfter: 1 });
    const began = Date.now();
    expect((await service.deliver('discord', { op: 'send', channelId: '222', text: 'x' })).status).toBe(
      'sent',
    );
    expect(Date.now() - began).toBeGreaterThanOrEqual(950);
    discord.fail(/^POST \/channels\/222\/messages$/, 400);
    expect((await service.deliver('discord', { op: 'send', channelId: '222', text: 'y' })).status).toBe(
      'deadLetter',
    );
    expect(discord.created('222')).toHaveLength(1);
  });

  it("sits out its own count of Discord's global 50 requests per second instead of failing the sends over it", async () => {
    const adapter = createDiscordAdapter({ botToken: DISCORD_TOKEN, apiBaseUrl: discord.url });
    // 60 messages at once, each to its own channel: more than the second's global budget.
    expect(await sendBurst(adapter, 500, 'burst')).toEqual([]);
    expect(discord.of(/^POST \/channels\/5\d\d\/messages$/)).toHaveLength(60);
  });

  it("keeps to its share of Discord's global limit when several instances send for one bot", async () => {
    const adapter = createDiscordAdapter({ botToken: DISCORD_TOKEN, apiBaseUrl: discord.url });
    // Two instances: 25 requests a second each. 60 at once fill three of the client's seconds,
    // so the 51st goes out two seconds after the first (one second, at the whole budget of 50).
    adapter.shareRateLimit?.(2);
    expect(await sendBurst(adapter, 700, 'shared')).toEqual([]);
    const arrivals = discord.of(/^POST \/channels\/7\d\d\/messages$/).map((call) => call.at);
    expect(arrivals).toHaveLength(60);
    expect(arrivals[50]! - arrivals[0]!).toBeGreaterThanOrEqual(1900);
  });

  it('reconciles an in-doubt post through its enforced nonce: never created twice', async () => {
    const adapter = createDiscordAdapter({ botToken: DISCORD_TOKEN, apiBaseUrl: discord.url });
    await expectReconciled('discord', '333', adapter, () =>
      discord.created('333').map((message) => ({ id: message.id, text: message.content })),
    );
  });
});

describe('discord gateway', () => {
  /** A service with Discord inbound on the fake Gateway, started and identified. */
  async function gatewayService(extra: Partial<ChannelsServiceOptions>): Promise<ChannelsService> {
    const service = createChannelsService({
      db: bed.db,
      section: channelsSectionSchema.parse({
        discord: {
          enabled: true,
          botToken: DISCORD_TOKEN,
          apiBaseUrl: discord.url,
          gatewayUrl: discord.gatewayUrl,
          agentId: 'helper',
          allowFrom: ['42'],
        },
      }),
      pollMs: 50,
      ...extra,
    });
    bed.closeAfter(service);
    await service.start();
    await expect.poll(() => discord.sessions(), { timeout: 10_000 }).toBe(1);
    return service;
  }

  it('identifies with the message intents, routes MESSAGE_CREATE to a turn and reconnects after an outage', async () => {
    const turns: string[] = [];
    const service = await gatewayService({
      runner: {
        runTurn: async (request) => {
          turns.push(request.message);
          return {
            response: `re: ${request.message}`,
            tokensUsed: { input: 1, output: 1, total: 2 },
            finishReason: 'stop',
            sessionKey: '',
          };
        },
      },
    });
    expect(discord.handshakes[0]).toMatchObject({
      op: 2,
      d: { token: DISCORD_TOKEN, intents: (1 << 9) | (1 << 12) | (1 << 15) | (1 << 10) | (1 << 13) },
    });
    expect(service.list()).toContainEqual({ type: 'discord', status: 'connected', inbound: true });

    discord.dispatchMessage({
      id: '900',
      channel_id: '444',
      content: 'from a bot',
      author: { id: '42', bot: true },
    });
    discord.dispatchMessage({ id: '901', channel_id: '444', content: 'hi', author: { id: '42' } });
    await expect.poll(() => discord.created('444').length, { timeout: 10_000 }).toBe(1);
    expect(discord.created('444')[0]).toMatchObject({
      content: 're: hi',
      message_reference: { message_id: '901' },
    });

    discord.dropConnections();
    await expect.poll(() => discord.handshakes.length, { timeout: 15_000 }).toBe(2);
    await expect.poll(() => discord.sessions(), { timeout: 10_000 }).toBe(1);
    discord.dispatchMessage({ id: '902', channel_id: '444', content: 'still there?', author: { id: '42' } });
    await expect.poll(() => discord.created('444').length, { timeout: 10_000 }).toBe(2);
    expect(turns).toEqual(['hi', 'still there?']);
  });

  it("asks for the reaction intents and hands a person's unicode reaction to onReaction", async () => {
    const reactions: InboundReaction[] = [];
    await gatewayService({ onReaction: (reaction) => reactions.push(reaction) });
    const base = { channel_id: '444', message_id: '901' };
    discord.dispatchReaction({ ...base, user_id: '7', emoji: { id: null, name: '👍' } }); // not admitted
    discord.dispatchReaction({ ...base, user_id: '42', emoji: { id: '123', name: 'party' } }); // custom
    discord.dispatchReaction({ ...base, user_id: '42', emoji: { id: null, name: '👎' } });
    await expect.poll(() => reactions.length, { timeout: 10_000 }).toBe(1);
    expect(reactions).toEqual([
      { channelType: 'discord', channelId: '444', userId: '42', messageId: '901', emoji: '👎' },
    ]);
  });
});
