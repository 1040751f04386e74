import type { AgentTurnRequest } from '@agentd/contracts';
import { beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '@agentd/storage/testing';
import { deliverCommon, recordingRunner, useTestBed } from '../test/fixtures.js';
import { type FakeTelegram, groupMessage, startFakeTelegram } from '../test/fake-telegram.js';
import type { InboundReaction } from './adapter.js';
import { channelsSectionSchema } from './config.js';
import { createDeliveryQueue } from './delivery-queue.js';
import { isChannelsError } from './errors.js';
import { noopLogger } from './logger.js';
import { type ChannelsService, type ChannelsServiceOptions, createChannelsService } from './service.js';

// Every test runs on both dialects (PostgreSQL when the test server is set).
describe.each(testDialects())('channels service on %s', (dialect) => {
  const TOKEN = '123456:fake-telegram-token-abcdefghijklmnop';
  const bed = useTestBed('channels-service', dialect);
  let fake: FakeTelegram;

  beforeEach(async () => {
    fake = bed.closeAfter(await startFakeTelegram({ token: TOKEN }));
  });

  function section(telegram: Record<string, unknown> = {}, delivery: Record<string, unknown> = {}) {
    return channelsSectionSchema.parse({
      telegram: { enabled: true, botToken: TOKEN, apiBaseUrl: fake.url, ...telegram },
      delivery: { baseDelayMs: 20, maxAttempts: 3, ...delivery },
    });
  }

  async function open(options: Partial<ChannelsServiceOptions> = {}, start = true): Promise<ChannelsService> {
    const service = createChannelsService({
      db: bed.db,
      section: section(),
      pollMs: 50,
      settleTimeoutMs: 5000,
      ...options,
    });
    bed.closeAfter(service);
    if (start) await service.start();
    return service;
  }

  describe('channels service over the Telegram Bot API', () => {
    it('carries the common operations to the Bot API and answers the message ids', async () => {
      const service = await open();
      const { sent, reply, file } = await deliverCommon(service, 'telegram', '77', {
        text: 'hello',
        reply: 'again',
        edit: 'hello!',
        emoji: '👍',
        remove: 'reply',
        file: { content: 'report', mimeType: 'text/plain', filename: 'report.txt', caption: 'the report' },
      });
      expect(sent).toMatchObject({ status: 'sent', messageId: expect.any(String) });
      expect(file).toMatchObject({ status: 'sent' });
      expect(fake.of('sendMessage').map((call) => call.params)).toEqual([
        { chat_id: '77', text: 'hello' },
        { chat_id: '77', text: 'again', reply_parameters: { message_id: Number(sent.messageId) } },
      ]);
      expect(fake.of('editMessageText')[0]?.params).toMatchObject({
        message_id: Number(sent.messageId),
        text: 'hello!',
      });
      expect(fake.of('setMessageReaction')[0]?.params).toMatchObject({
        reaction: [{ type: 'emoji', emoji: '👍' }],
      });
      expect(fake.of('deleteMessage')[0]?.params).toMatchObject({ message_id: Number(reply.messageId) });
      expect(fake.of('sendDocument')[0]?.params).toMatchObject({
        caption: 'the report',
        document: { filename: 'report.txt', size: 6 },
      });
      expect(await service.queueStatus('telegram')).toEqual({
        queued: 0,
        sending: 0,
        sent: 6,
        failed: 0,
        deadLetter: 0,
      });
    });

    it('waits out a 429 retry_after, then delivers once', async () => {
      const service = await open();
      fake.fail('sendMessage', 429, 'Too Many Requests: retry after 1', { retryAfter: 1 });
      const began = Date.now();
      const answer = await service.deliver('telegram', { op: 'send', channelId: '5', text: 'later' });
      expect(answer.status).toBe('sent');
      expect(Date.now() - began).toBeGreaterThanOrEqual(950);
      expect(fake.of('sendMessage')).toHaveLength(2);
    });

    it('dead-letters a permanent 400 at once and a repeated 5xx after the retry cap', async () => {
      const service = await open();
      fake.fail('sendMessage', 400, 'Bad Request: chat not found');
      const refused = await service.deliver('telegram', { op: 'send', channelId: '9', text: 'x' });
      expect(refused).toMatchObject({
        status: 'deadLetter',
        error: expect.stringContaining('chat not found'),
      });
      expect(fake.of('sendMessage')).toHaveLength(1);

      fake.fail('sendMessage', 502, 'Bad Gateway', { times: 10 });
      const capped = await service.deliver('telegram', { op: 'send', channelId: '9', text: 'y' });
      expect(capped).toMatchObject({
        status: 'deadLetter',
        error: expect.stringContaining('gave up after 3 attempts'),
      });
      expect(fake.of('sendMessage')).toHaveLength(4);
      expect(await service.queueStatus()).toMatchObject({ deadLetter: 2, sent: 0 });
    });

    it('keeps the bot token out of every answer and error', async () => {
      const service = await open({ section: section({ botToken: `${TOKEN}-wrong` }) });
      const answer = await service.deliver('telegram', { op: 'send', channelId: '1', text: 'x' });
      expect(answer.status).toBe('deadLetter');
      expect(JSON.stringify(answer)).not.toContain(TOKEN);
      expect(JSON.stringify(await service.status('telegram'))).not.toContain(TOKEN);
    });

    it('refuses an unconfigured platform before writing anything', async () => {
      const service = await open({ section: channelsSectionSchema.parse({}) });
      const error = await service
        .deliver('telegram', { op: 'send', channelId: '1', text: 'x' })
        .catch((e: unknown) => e);
      expect(isChannelsError(error, 'UNCONFIGURED')).toBe(true);
      expect((error as Error).message).toBe(
        'telegram is not configured: set channels.telegram.enabled and its credentials',
      );
      expect(service.list()).toContainEqual({ type: 'telegram', status: 'unconfigured', inbound: false });
      expect(await service.queueStatus()).toEqual({
        queued: 0,
        sending: 0,
        sent: 0,
        failed: 0,
        deadLetter: 0,
      });
    });

    it('keeps other chats flowing while one chat waits on a platform call that hangs', async () => {
      const service = await open();
      fake.hold((call) => call.params.chat_id === '13');
      const stuck = service.deliver('telegram', { op: 'send', channelId: '13', text: 'hangs' });
      await expect.poll(() => fake.of('sendMessage').length).toBe(1);
      const free = await service.deliver('telegram', { op: 'send', channelId: '14', text: 'flows' });
      expect(free.status).toBe('sent');
      expect(await service.queueStatus()).toMatchObject({ sending: 1, sent: 1 });
      void stuck.catch(() => undefined);
    });

    it('settles an entry whose chat id the database cannot store as given (NUL, lone surrogate)', async () => {
      const service = await open();
      const answer = await service.deliver('webchat', { op: 'send', channelId: 'a\u0000\udfffb', text: 'x' });
      expect(answer).toMatchObject({
        status: 'deadLetter',
        error: expect.stringContaining('webchat: client a'),
      });
      expect(await service.queueStatus('webchat')).toMatchObject({ queued: 0, deadLetter: 1 });
    });

    it('sends a repeated idempotency key once and answers the first result', async () => {
      const service = await open();
      const first = await service.deliver(
        'telegram',
        { op: 'send', channelId: '3', text: 'once' },
        { idempotencyKey: 'k1' },
      );
      const again = await service.deliver(
        'telegram',
        { op: 'send', channelId: '3', text: 'once' },
        { idempotencyKey: 'k1' },
      );
      expect(again).toEqual(first);
      expect(fake.of('sendMessage')).toHaveLength(1);
    });

    it('applies a changed section live: the new base URL is used at once', async () => {
      const service = await open({ section: channelsSectionSchema.parse({}) });
      await service.apply(section());
      expect((await service.deliver('telegram', { op: 'send', channelId: '8', text: 'live' })).status).toBe(
        'sent',
      );
    });
  });

  describe('delivery recovery at start', () => {
    it('sends entries queued before a stop exactly once, and settles in-doubt ones by their guarantee', async () => {
      // Rows as a killed daemon leaves them: three written and never attempted, two claimed
      // (`sending`) whose attempt was cut off, one of them an autonomy run's.
      const writer = createDeliveryQueue({ db: bed.db, deliver: async () => ({ messageId: 'never' }) });
      for (const n of [1, 2, 3])
        await writer.enqueue({
          channelType: 'telegram',
          operation: { op: 'send', channelId: '11', text: `m${n}` },
        });
      const plain = await writer.enqueue({
        channelType: 'telegram',
        operation: { op: 'send', channelId: '12', text: 'doubt' },
      });
      const run = await writer.enqueue({
        channelType: 'telegram',
        rootRunId: 'run-1',
        operation: { op: 'send', channelId: '13', text: 'run step' },
      });
      await bed.db.execute(
        `UPDATE channel_deliveries SET stage = 'sending', attempts = 1 WHERE delivery_id IN (?, ?)`,
        [plain.entry.deliveryId, run.entry.deliveryId],
      );
      await writer.close();

      await open();
      await expect.poll(() => fake.of('sendMessage').length, { timeout: 10_000 }).toBe(4);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(
        fake
          .of('sendMessage')
          .map((call) => call.params.text)
          .sort(),
      ).toEqual(['doubt', 'm1', 'm2', 'm3']);
      const runEntry = await createDeliveryQueue({
        db: bed.db,
        deliver: async () => ({ messageId: 'x' }),
      }).get(run.entry.deliveryId);
      expect(runEntry).toMatchObject({ stage: 'deadLetter', lastError: expect.stringContaining('in doubt') });
    });
  });

  describe('inbound messages', () => {
    it('turns an allowed sender into an agent turn and answers in the same chat; refuses others', async () => {
      const turns: AgentTurnRequest[] = [];
      const refusals: string[] = [];
      await open({
        section: section({ agentId: 'helper', allowFrom: ['100'] }),
        runner: recordingRunner(turns, (message) => `echo: ${message}`),
        onRefused: (message) => refusals.push(message.userId),
      });
      fake.pushUpdate(groupMessage(5, -200, 999, 'let me in'));
      fake.pushUpdate(groupMessage(6, -200, 100, 'hi bot'));
      await expect.poll(() => fake.of('sendMessage').length, { timeout: 10_000 }).toBe(1);
      expect(refusals).toEqual(['999']);
      expect(turns).toMatchObject([
        { agentId: 'helper', message: 'hi bot', sessionKey: 'default:telegram--200:100' },
      ]);
      expect(fake.of('sendMessage')[0]?.params).toEqual({
        chat_id: '-200',
        text: 'echo: hi bot',
        reply_parameters: { message_id: 6 },
      });
    });

    it('sends the turns of a platform with allowFrom but no agentId to the default agent, and says so at start', async () => {
      const turns: AgentTurnRequest[] = [];
      const said: string[] = [];
      const logger = {
        ...noopLogger,
        info: (_fields: unknown, message?: string) => void said.push(String(message)),
      };
      const service = await open({
        section: section({ allowFrom: ['100'] }),
        runner: recordingRunner(turns),
        defaultAgentId: 'main',
        logger,
      });
      expect(said).toContain('telegram inbound reaches agent main (the default agent: no agentId set)');
      expect(service.list().find((row) => row.type === 'telegram')?.inbound).toBe(true);
      fake.pushUpdate(groupMessage(8, -201, 100, 'anyone there?'));
      await expect.poll(() => fake.of('sendMessage').length, { timeout: 10_000 }).toBe(1);
      expect(turns).toMatchObject([{ agentId: 'main', message: 'anyone there?' }]);
    });

    it('says at start that a platform without allowFrom takes no inbound', async () => {
      const said: string[] = [];
      const logger = {
        ...noopLogger,
        info: (_fields: unknown, message?: string) => void said.push(String(message)),
      };
      const service = await open({ logger });
      expect(said).toContain('telegram inbound off: allowFrom admits nobody (sending only)');
      expect(service.list().find((row) => row.type === 'telegram')?.inbound).toBe(false);
    });

    it('asks Telegram for reactions and hands each emoji an admitted user adds to onReaction', async () => {
      const reactions: InboundReaction[] = [];
      await open({
        section: section({ agentId: 'helper', allowFrom: ['100'] }),
        onReaction: (reaction) => reactions.push(reaction),
      });
      const reaction = (userId: number, old: string[], added: string[]) => ({
        message_reaction: {
          chat: { id: -200, type: 'group' },
          message_id: 41,
          user: { id: userId, is_bot: false, first_name: 'u' },
          date: 1,
          old_reaction: old.map((emoji) => ({ type: 'emoji', emoji })),
          new_reaction: added.map((emoji) => ({ type: 'emoji', emoji })),
        },
      });
      fake.pushUpdate(reaction(999, [], ['👍']));
      fake.pushUpdate(reaction(100, [], ['👍']));
      fake.pushUpdate(reaction(100, ['👍'], ['👍', '👎']));
      await expect.poll(() => reactions.length, { timeout: 10_000 }).toBe(2);
      expect(reactions).toEqual([
        { channelType: 'telegram', channelId: '-200', userId: '100', messageId: '41', emoji: '👍' },
        { channelType: 'telegram', channelId: '-200', userId: '100', messageId: '41', emoji: '👎' },
      ]);
      // The fake, like Telegram, sends reactions only to a poller that asked for them.
      expect(fake.allowedUpdates()).toEqual(['message', 'message_reaction']);
    });
  });
});
