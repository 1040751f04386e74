import type { AgentTurnRequest } from '@agentd/contracts';
import { Api, GrammyError } from 'grammy';
import { beforeEach, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../test/fake-discord.js';
import { type FakeSlack, startFakeSlack } from '../test/fake-slack.js';
import { type FakeTelegram, groupMessage, startFakeTelegram } from '../test/fake-telegram.js';
import { type FakeWhatsApp, startFakeWhatsApp } from '../test/fake-whatsapp.js';
import { recordingRunner, useTestBed } from '../test/fixtures.js';
import { channelsSectionSchema } from './config.js';
import { createDeliveryQueue } from './delivery-queue.js';
import { platformError } from './errors.js';
import { createChannelsService, type ChannelsService, type ChannelsServiceOptions } from './service.js';

const TG = '123456:fake-telegram-token-long-messages';
const DC = 'fake.discord.token-long-messages-0123';
const SL = 'xoxb-fake-slack-token-long-messages';
const WA = 'EAAG-fake-whatsapp-token-long-messages';
const bed = useTestBed('channels-long');
let telegram: FakeTelegram;
let discord: FakeDiscord;
let slack: FakeSlack;
let whatsapp: FakeWhatsApp;

beforeEach(async () => {
  telegram = bed.closeAfter(await startFakeTelegram({ token: TG }));
  discord = bed.closeAfter(await startFakeDiscord({ token: DC }));
  slack = bed.closeAfter(await startFakeSlack({ token: SL }));
  whatsapp = bed.closeAfter(await startFakeWhatsApp({ token: WA, phoneNumberId: '1555' }));
});

async function open(
  options: Partial<ChannelsServiceOptions> = {},
  telegramExtra = {},
): Promise<ChannelsService> {
  const service = createChannelsService({
    db: bed.db,
    section: channelsSectionSchema.parse({
      telegram: { enabled: true, botToken: TG, apiBaseUrl: telegram.url, ...telegramExtra },
      discord: { enabled: true, botToken: DC, apiBaseUrl: discord.url },
      slack: { enabled: true, botToken: SL, apiBaseUrl: slack.url },
      whatsapp: { enabled: true, accessToken: WA, phoneNumberId: '1555', apiBaseUrl: whatsapp.url },
      delivery: { baseDelayMs: 20, maxAttempts: 3 },
    }),
    pollMs: 50,
    settleTimeoutMs: 8000,
    ...options,
  });
  bed.closeAfter(service);
  await service.start();
  return service;
}

/**
 * A 10,000-character answer as a model writes one: numbered paragraphs of plain words (no
 * characters any platform's markup changes), a code block in the middle, emoji.
 */
function longReply(): string {
  const paragraph = (index: number) =>
    `Paragraph ${index} 🙂 ${Array.from({ length: 40 }, (_, word) => `word${word}`).join(' ')}`;
  const head = Array.from({ length: 10 }, (_, index) => paragraph(index)).join('\n\n');
  const code = Array.from({ length: 60 }, (_, line) => `let v${line} = ${line}`).join('\n');
  const tail = Array.from({ length: 10 }, (_, index) => paragraph(10 + index)).join('\n\n');
  const text = `${head}\n\n\`\`\`js\n${code}\n\`\`\`\n\n${tail}`;
  return text.padEnd(10_000, ' end');
}

/** The words of `text` in order, fence lines left out: what a reader must see, whatever the cuts. */
const contentLines = (text: string) =>
  text.split(/\s+/).filter((word) => word !== '' && !word.startsWith('```'));

describe('a reply longer than the platform takes', () => {
  it('reaches every platform as ordered parts, each within its limit, none refused', async () => {
    const service = await open();
    const text = longReply();
    expect(text.length).toBe(10_000);
    const sent = {
      telegram: await service.deliver('telegram', { op: 'send', channelId: '-100', text }),
      discord: await service.deliver('discord', { op: 'send', channelId: '200', text }),
      slack: await service.deliver('slack', { op: 'send', channelId: 'C300', text }),
      whatsapp: await service.deliver('whatsapp', { op: 'send', channelId: '4915100000009', text }),
    };
    const received = {
      telegram: telegram.of('sendMessage').map((call) => String(call.params.text)),
      discord: discord.created('200').map((message) => String(message.content)),
      slack: slack.of('chat.postMessage').map((call) => String(call.params.text)),
      whatsapp: whatsapp.messages().map((body) => String((body.text as { body: string }).body)),
    };
    const limits = { telegram: 4096, discord: 2000, slack: 4000, whatsapp: 4096 };
    for (const platform of ['telegram', 'discord', 'slack', 'whatsapp'] as const) {
      const answer = sent[platform];
      const parts = received[platform];
      expect(answer.parts?.length, platform).toBe(parts.length);
      expect(parts.length, platform).toBeGreaterThanOrEqual(Math.ceil(10_000 / limits[platform]));
      // Every part was sent (none dead-lettered by a platform refusal), the answer is the first.
      expect(answer.parts?.every((part) => part.status === 'sent')).toBe(true);
      expect(answer).toMatchObject({ status: 'sent', messageId: answer.parts?.[0]?.messageId });
      for (const part of parts) expect(part.length, platform).toBeLessThanOrEqual(limits[platform]);
      // In order, nothing lost or repeated.
      expect(contentLines(parts.join('\n')), platform).toEqual(contentLines(text));
    }
  });

  it('repeats no part when the caller repeats its idempotency key', async () => {
    const service = await open();
    const text = longReply();
    const first = await service.deliver(
      'discord',
      { op: 'send', channelId: '201', text },
      { idempotencyKey: 'k1' },
    );
    const again = await service.deliver(
      'discord',
      { op: 'send', channelId: '201', text },
      { idempotencyKey: 'k1' },
    );
    expect(again.parts?.map((part) => part.deliveryId)).toEqual(first.parts?.map((part) => part.deliveryId));
    expect(discord.created('201')).toHaveLength(first.parts?.length ?? 0);
  });

  it('keeps the parts in order when an early part has to wait for a retry', async () => {
    const service = await open();
    // The first part's first attempt fails (grammy does not retry): it waits for its backoff.
    telegram.fail('sendMessage', 502, 'Bad Gateway', { times: 1 });
    const answer = await service.deliver('telegram', { op: 'send', channelId: '202', text: longReply() });
    expect(answer.parts?.every((part) => part.status === 'sent')).toBe(true);
    const texts = telegram.of('sendMessage').map((call) => String(call.params.text));
    expect(texts).toHaveLength(answer.parts!.length + 1);
    expect(texts[1]).toBe(texts[0]);
    expect(contentLines(texts.slice(1).join('\n'))).toEqual(contentLines(longReply()));
  });

  it('keeps the parts of a message queued before a restart in order, retries included', async () => {
    const sent: string[] = [];
    let failFirst = true;
    const queue = createDeliveryQueue({
      db: bed.db,
      baseDelayMs: 20,
      deliver: async (_type, operation) => {
        const text = operation.op === 'send' ? operation.text : '';
        if (text === 'part 0' && failFirst) {
          failFirst = false;
          throw platformError('telegram', 'Bad Gateway', { retryable: true, status: 502 });
        }
        sent.push(text);
        return { messageId: String(sent.length) };
      },
    });
    // Written while the queue is not running: as a restart finds them, in creation order.
    await queue.enqueueAll(
      [0, 1, 2].map((index) => ({
        channelType: 'telegram',
        idempotencyKey: `split:base#${index}`,
        operation: { op: 'send' as const, channelId: '7', text: `part ${index}` },
      })),
    );
    await queue.start();
    await expect.poll(() => sent.length, { timeout: 5000 }).toBe(3);
    expect(sent).toEqual(['part 0', 'part 1', 'part 2']);
    await queue.close();
  });

  it("answers an agent's long reply to an inbound message in parts, each a reply", async () => {
    const turns: AgentTurnRequest[] = [];
    await open(
      { runner: recordingRunner(turns, () => longReply()) },
      { agentId: 'helper', allowFrom: ['100'] },
    );
    telegram.pushUpdate(groupMessage(7, -300, 100, 'tell me everything'));
    await expect.poll(() => telegram.of('sendMessage').length, { timeout: 10_000 }).toBe(3);
    const calls = telegram.of('sendMessage');
    expect(contentLines(calls.map((call) => String(call.params.text)).join('\n'))).toEqual(
      contentLines(longReply()),
    );
    for (const call of calls) expect(call.params.reply_parameters).toEqual({ message_id: 7 });
  });
});

describe('the fake platforms refuse what the real ones refuse', () => {
  it('Telegram: over 4,096 UTF-16 code units, and MarkdownV2 that does not parse', async () => {
    const api = new Api(TG, { apiRoot: telegram.url });
    await expect(api.sendMessage('1', '😀'.repeat(2049))).rejects.toMatchObject({
      error_code: 400,
      description: 'Bad Request: message is too long',
    });
    await expect(api.sendMessage('1', '😀'.repeat(2048))).resolves.toMatchObject({
      message_id: expect.any(Number),
    });
    const refused = await api
      .sendMessage('1', 'Done. See *this*', { parse_mode: 'MarkdownV2' })
      .catch((e) => e);
    expect(refused).toBeInstanceOf(GrammyError);
    expect(refused.description).toMatch(/^Bad Request: can't parse entities/);
    await expect(
      api.sendMessage('1', 'Done\\. See *this*', { parse_mode: 'MarkdownV2' }),
    ).resolves.toBeTruthy();
  });

  it('the adapters send Markdown without a parse mode Telegram could refuse, and as mrkdwn to Slack', async () => {
    const service = await open();
    const text = '## Result\nDone. **Bold** and 1-2-3 (see [docs](https://example.com/a?x=1&y=2)) <b>!';
    expect(await service.deliver('telegram', { op: 'send', channelId: '5', text })).toMatchObject({
      status: 'sent',
    });
    expect(telegram.of('sendMessage')[0]?.params).toEqual({ chat_id: '5', text });
    expect(await service.deliver('slack', { op: 'send', channelId: 'C5', text })).toMatchObject({
      status: 'sent',
    });
    expect(slack.of('chat.postMessage')[0]?.params.text).toBe(
      '*Result*\nDone. *Bold* and 1-2-3 (see <https://example.com/a?x=1&amp;y=2|docs>) &lt;b&gt;!',
    );
  });

  it('Discord and WhatsApp: a text over their limit is dead-lettered when sent unsplit', async () => {
    const { createDiscordAdapter } = await import('./adapters/discord.js');
    const { createWhatsAppAdapter } = await import('./adapters/whatsapp.js');
    const discordAdapter = createDiscordAdapter({ botToken: DC, apiBaseUrl: discord.url });
    const whatsappAdapter = createWhatsAppAdapter({
      accessToken: WA,
      phoneNumberId: '1555',
      apiBaseUrl: whatsapp.url,
    });
    const attempt = { deliveryId: 'd1', attempt: 1 };
    await expect(
      discordAdapter.deliver({ op: 'send', channelId: '9', text: 'x'.repeat(2001) }, attempt),
    ).rejects.toMatchObject({ code: 'PLATFORM_ERROR', data: { status: 400, retryable: false } });
    await expect(
      whatsappAdapter.deliver({ op: 'send', channelId: '49', text: 'x'.repeat(4097) }, attempt),
    ).rejects.toMatchObject({ code: 'PLATFORM_ERROR', data: { status: 400, retryable: false } });
    await discordAdapter.stop();
  });
});
