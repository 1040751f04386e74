import type { AgentTurnRequest } from '@agentd/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeTelegram, groupMessage, startFakeTelegram } from '../test/fake-telegram.js';
import { recordingRunner, serveChannels, telegramWebhookSection, useTestBed } from '../test/fixtures.js';
import { defaultWebhookSecret } from './adapters/telegram.js';
import { channelsSectionSchema } from './config.js';
import { type ChannelsService, createChannelsService } from './service.js';

const TOKEN = '123456:telegram-webhook-test-token-abcdef';
const bed = useTestBed('channels-tg-webhook');
let telegram: FakeTelegram;
let service: ChannelsService | undefined;
let base: string;
let closeHttp: () => Promise<void>;
const turns: AgentTurnRequest[] = [];

beforeEach(async () => {
  telegram = await startFakeTelegram({ token: TOKEN });
  turns.length = 0;
  const server = await serveChannels(() => service);
  base = server.url;
  closeHttp = server.close;
});
afterEach(async () => {
  await closeHttp();
  await service?.close();
  service = undefined;
  await telegram.close();
});

async function startService(telegramSection: Record<string, unknown>): Promise<ChannelsService> {
  service = createChannelsService({
    db: bed.db,
    section: channelsSectionSchema.parse({
      telegram: telegramWebhookSection(TOKEN, telegram.url, base, telegramSection),
      delivery: { baseDelayMs: 20, maxAttempts: 3 },
    }),
    runner: recordingRunner(turns),
    pollMs: 50,
    settleTimeoutMs: 8000,
  });
  await service.start();
  await expect
    .poll(() => telegram.webhook()?.url, { timeout: 5000 })
    .toBe(`${base}/channels/telegram/webhook`);
  return service;
}

const update = (id: number, from: number, text: string) => groupMessage(id, -42, from, text);

describe('telegram webhook mode', () => {
  it('registers the webhook with its secret and turns a posted update into a reply', async () => {
    const running = await startService({ webhookSecret: 'configured_secret-0123' });
    expect(telegram.of('setWebhook')[0]?.params).toMatchObject({
      url: `${base}/channels/telegram/webhook`,
      secret_token: 'configured_secret-0123',
      allowed_updates: ['message', 'message_reaction'],
    });
    // Webhook mode never long-polls.
    expect(telegram.of('getUpdates')).toHaveLength(0);
    expect(await telegram.postUpdate(update(7, 100, 'hi bot'))).toBe(200);
    await expect.poll(() => telegram.of('sendMessage').length, { timeout: 8000 }).toBe(1);
    expect(telegram.of('sendMessage')[0]?.params).toEqual({
      chat_id: '-42',
      text: 'answer to hi bot',
      reply_parameters: { message_id: 7 },
    });
    expect(turns[0]).toMatchObject({ agentId: 'helper', sessionKey: 'default:telegram--42:100' });
    expect(running.list()).toContainEqual({ type: 'telegram', status: 'connected', inbound: true });
  });

  it('refuses updates without the secret or with a wrong one, before any turn', async () => {
    await startService({ webhookSecret: 'right-secret' });
    expect(await telegram.postUpdate(update(1, 100, 'no secret'), null)).toBe(401);
    expect(await telegram.postUpdate(update(2, 100, 'wrong'), 'wrong-secret')).toBe(401);
    expect(await telegram.postUpdate(update(3, 100, 'longer'), 'right-secret-but-longer')).toBe(401);
    const get = await fetch(`${base}/channels/telegram/webhook`);
    expect(get.status).toBe(405);
    const other = await fetch(`${base}/channels/telegram/other`, { method: 'POST' });
    expect(other.status).toBe(404);
    const notJson = await fetch(`${base}/channels/telegram/webhook`, {
      method: 'POST',
      headers: { 'x-telegram-bot-api-secret-token': 'right-secret' },
      body: 'not json',
    });
    expect(notJson.status).toBe(400);
    // A sender outside allowFrom is accepted by the webhook (Telegram must not retry) but gets no turn.
    expect(await telegram.postUpdate(update(4, 999, 'stranger'))).toBe(200);
    // Telegram redelivers an update it thinks was lost: the inbound journal already holds it, so
    // the agent is asked once and the answer is queued once.
    const once = update(5, 100, 'once');
    expect(await telegram.postUpdate(once)).toBe(200);
    expect(await telegram.postUpdate(once)).toBe(200);
    await expect.poll(() => telegram.of('sendMessage').length, { timeout: 8000 }).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(turns.map((turn) => turn.message)).toEqual(['once']);
    expect(telegram.of('sendMessage')).toHaveLength(1);
    expect(service?.refusedCount('telegram')).toBe(1);
  });

  it('derives the secret from the bot token when none is configured, and answers 404 in polling mode', async () => {
    await startService({});
    const derived = defaultWebhookSecret(TOKEN);
    expect(derived).toMatch(/^[0-9a-f]{64}$/);
    expect(telegram.webhook()?.secretToken).toBe(derived);
    expect(await telegram.postUpdate(update(9, 100, 'derived'))).toBe(200);
    await expect.poll(() => turns.length, { timeout: 8000 }).toBe(1);

    await service?.apply(
      channelsSectionSchema.parse({
        telegram: { enabled: true, botToken: TOKEN, apiBaseUrl: telegram.url, mode: 'polling' },
      }),
    );
    const polling = await fetch(`${base}/channels/telegram/webhook`, {
      method: 'POST',
      headers: { 'x-telegram-bot-api-secret-token': derived },
      body: JSON.stringify({ update_id: 99, ...update(10, 100, 'x') }),
    });
    expect(polling.status).toBe(404);
  });

  it('refuses a webhook-mode section without its public URL, naming the field', () => {
    const parsed = channelsSectionSchema.safeParse({
      telegram: { enabled: true, botToken: TOKEN, agentId: 'helper', mode: 'webhook' },
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['telegram', 'webhookUrl']);
    const badSecret = channelsSectionSchema.safeParse({ telegram: { webhookSecret: 'has spaces' } });
    expect(badSecret.error?.issues[0]?.path).toEqual(['telegram', 'webhookSecret']);
    expect(
      channelsSectionSchema.safeParse({ telegram: { webhookSecret: '${secret:TG_HOOK}' } }).success,
    ).toBe(true);
  });
});
