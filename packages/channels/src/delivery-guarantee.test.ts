import { describe, expect, it } from 'vitest';
import { useTestBed } from '../test/fixtures.js';
import { startFakeTelegram } from '../test/fake-telegram.js';
import { createDiscordAdapter } from './adapters/discord.js';
import { createSlackAdapter } from './adapters/slack.js';
import { createTelegramAdapter } from './adapters/telegram.js';
import { createWhatsAppAdapter } from './adapters/whatsapp.js';
import { channelsSectionSchema } from './config.js';
import { createDeliveryQueue } from './delivery-queue.js';
import { createChannelsService } from './service.js';

// The README's per-platform guarantee for a send cut off by a crash between its attempt and
// its record: exactly once where the platform gives an idempotency key or a way to check
// (Discord's enforced nonce, Slack's history; the reconcile tests in platforms.test.ts), at
// least once where it gives neither (Telegram, WhatsApp). This file tests the second half.

const TOKEN = '123456:fake-telegram-token-abcdefghijklmnop';
const bed = useTestBed('channels-guarantee');

describe('the delivery guarantee per platform', () => {
  it('reconciles only where the platform can answer: Discord and Slack, not Telegram or WhatsApp', () => {
    const discord = createDiscordAdapter({ botToken: 'discord.token-abcdef' });
    const slack = createSlackAdapter({ botToken: 'xoxb-slack-token-123456' });
    const telegram = createTelegramAdapter({ botToken: TOKEN });
    const whatsapp = createWhatsAppAdapter({ accessToken: 'wa-token', phoneNumberId: '1' });
    expect(typeof discord.reconcile).toBe('function');
    expect(typeof slack.reconcile).toBe('function');
    expect(telegram.reconcile).toBeUndefined();
    expect(whatsapp.reconcile).toBeUndefined();
  });

  it('re-sends a Telegram send that reached the platform before the crash (at least once: a duplicate), but never an autonomy run step', async () => {
    const fake = bed.closeAfter(await startFakeTelegram({ token: TOKEN }));
    const writer = createDeliveryQueue({ db: bed.db, deliver: async () => ({ messageId: 'never' }) });
    const plain = await writer.enqueue({
      channelType: 'telegram',
      operation: { op: 'send', channelId: '12', text: 'reached before the crash' },
    });
    const step = await writer.enqueue({
      channelType: 'telegram',
      rootRunId: 'run-1',
      operation: { op: 'send', channelId: '13', text: 'run step reached before the crash' },
    });
    // A killed daemon: both attempts reached Telegram, neither result was recorded.
    for (const [chat, text] of [
      ['12', 'reached before the crash'],
      ['13', 'run step reached before the crash'],
    ]) {
      const answer = await fetch(`${fake.url}/bot${TOKEN}/sendMessage`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ chat_id: chat, text }),
      });
      expect(answer.ok).toBe(true);
    }
    await bed.db.execute(
      `UPDATE channel_deliveries SET stage = 'sending', attempts = 1 WHERE delivery_id IN (?, ?)`,
      [plain.entry.deliveryId, step.entry.deliveryId],
    );
    await writer.close();

    const service = bed.closeAfter(
      createChannelsService({
        db: bed.db,
        section: channelsSectionSchema.parse({
          telegram: { enabled: true, botToken: TOKEN, apiBaseUrl: fake.url },
          delivery: { baseDelayMs: 20, maxAttempts: 3 },
        }),
        pollMs: 50,
        settleTimeoutMs: 5000,
      }),
    );
    await service.start();
    const texts = () => fake.of('sendMessage').map((call) => call.params.text);
    await expect.poll(() => texts().filter((text) => text === 'reached before the crash').length).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Telegram has no idempotency key and no history for bots: the plain send went out twice,
    // the run's step stays once and is dead-lettered as in doubt.
    expect(texts().filter((text) => text === 'reached before the crash')).toHaveLength(2);
    expect(texts().filter((text) => text === 'run step reached before the crash')).toHaveLength(1);
    const queue = createDeliveryQueue({ db: bed.db, deliver: async () => ({ messageId: 'x' }) });
    expect(await queue.get(plain.entry.deliveryId)).toMatchObject({ stage: 'sent' });
    expect(await queue.get(step.entry.deliveryId)).toMatchObject({
      stage: 'deadLetter',
      lastError: expect.stringContaining('in doubt'),
    });
  });
});
