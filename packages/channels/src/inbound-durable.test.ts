import type { AgentTurnRequest, AgentTurnRunner } from '@agentd/contracts';
import { beforeEach, describe, expect, it } from 'vitest';
import { testDialects } from '@agentd/storage/testing';
import { type FakeSlack, startFakeSlack } from '../test/fake-slack.js';
import { type FakeTelegram, groupMessage, startFakeTelegram } from '../test/fake-telegram.js';
import { serveChannels, signedSlackPost, useTestBed } from '../test/fixtures.js';
import { channelsSectionSchema } from './config.js';
import { type ChannelsService, createChannelsService } from './service.js';

// Every test runs on both dialects (PostgreSQL when the test server is set).
describe.each(testDialects())('durable inbound on %s', (dialect) => {
  const TOKEN = '123456:fake-telegram-token-durable-inbound';
  const bed = useTestBed('channels-durable', dialect);
  let telegram: FakeTelegram;

  beforeEach(async () => {
    telegram = bed.closeAfter(await startFakeTelegram({ token: TOKEN }));
  });

  /**
   * An agent whose turns end when the test says so (`finish`), or at once when `wait` is false;
   * every turn asked for is recorded.
   */
  function heldRunner(wait: boolean) {
    const turns: AgentTurnRequest[] = [];
    const release: Array<() => void> = [];
    const runner: AgentTurnRunner = {
      async runTurn(request) {
        turns.push(request);
        // A cancelled turn ends at once, as the agent runtime's does.
        if (wait)
          await new Promise<void>((resolve, reject) => {
            release.push(resolve);
            request.signal?.addEventListener('abort', () => reject(new Error('cancelled')));
          });
        return {
          response: `answer to ${request.message}`,
          tokensUsed: { input: 1, output: 1, total: 2 },
          finishReason: 'stop',
          sessionKey: request.sessionKey ?? '',
        };
      },
    };
    const finish = () => {
      for (const resolve of release.splice(0)) resolve();
    };
    return { runner, turns, finish };
  }

  function open(runner: AgentTurnRunner, shutdownGraceMs: number): ChannelsService {
    return createChannelsService({
      db: bed.db,
      section: channelsSectionSchema.parse({
        telegram: { enabled: true, botToken: TOKEN, apiBaseUrl: telegram.url, allowFrom: ['100'] },
        delivery: { baseDelayMs: 20, maxAttempts: 3 },
      }),
      runner,
      shutdownGraceMs,
      pollMs: 50,
      settleTimeoutMs: 5000,
    });
  }

  const journal = async () =>
    (await bed.db.execute('SELECT inbound_key, stage, attempts FROM channel_inbound')).rows.map((row) => ({
      ...row,
    }));

  describe('inbound the platform considers delivered survives a stop', () => {
    it('records a polled update before confirming it, and runs a turn cut off by the stop again at the next start', async () => {
      const slow = heldRunner(true);
      const first = open(slow.runner, 100);
      await first.start();
      telegram.pushUpdate(groupMessage(7, -300, 100, 'a long question'));
      await expect.poll(() => slow.turns.length, { timeout: 10_000 }).toBe(1);
      await first.close(); // the turn outlives the 100 ms grace
      // grammy confirmed the update at its stop: Telegram will never serve it again.
      expect(telegram.pending()).toBe(0);
      expect(telegram.of('sendMessage')).toHaveLength(0);
      expect(await journal()).toEqual([{ inbound_key: 'telegram:-300:7', stage: 'pending', attempts: 1 }]);

      const quick = heldRunner(false);
      const second = bed.closeAfter(open(quick.runner, 100));
      await second.start();
      await expect.poll(() => telegram.of('sendMessage').length, { timeout: 10_000 }).toBe(1);
      expect(quick.turns).toMatchObject([{ message: 'a long question', turnKey: 'channel:telegram:-300:7' }]);
      expect(telegram.of('sendMessage')[0]?.params).toMatchObject({ text: 'answer to a long question' });
      await expect.poll(journal).toEqual([{ inbound_key: 'telegram:-300:7', stage: 'done', attempts: 2 }]);
      await second.close();

      const third = bed.closeAfter(open(quick.runner, 100));
      await third.start();
      expect(quick.turns).toHaveLength(1);
      slow.finish();
    });

    it('lets a turn that ends within the grace queue its answer before the stop completes', async () => {
      const slow = heldRunner(true);
      const service = open(slow.runner, 10_000);
      await service.start();
      telegram.pushUpdate(groupMessage(8, -301, 100, 'quick one'));
      await expect.poll(() => slow.turns.length, { timeout: 10_000 }).toBe(1);
      setTimeout(slow.finish, 200);
      await service.close();
      const { rows } = await bed.db.execute(
        "SELECT idempotency_key FROM channel_deliveries WHERE idempotency_key = 'reply:telegram:-301:8'",
      );
      expect(rows).toHaveLength(1);
      expect(await journal()).toEqual([{ inbound_key: 'telegram:-301:8', stage: 'done', attempts: 1 }]);
    });

    it('runs a cut-off turn again only once', async () => {
      for (let round = 0; round < 2; round++) {
        const slow = heldRunner(true);
        const service = open(slow.runner, 50);
        await service.start();
        if (round === 0) telegram.pushUpdate(groupMessage(9, -302, 100, 'cursed'));
        await expect.poll(() => slow.turns.length, { timeout: 10_000 }).toBe(1);
        await service.close();
        slow.finish();
      }
      const quick = heldRunner(false);
      const last = bed.closeAfter(open(quick.runner, 50));
      await last.start();
      expect(await journal()).toEqual([{ inbound_key: 'telegram:-302:9', stage: 'abandoned', attempts: 2 }]);
      expect(quick.turns).toHaveLength(0);
    });
  });

  describe('a webhook is answered 200 only once its message is recorded', () => {
    let slack: FakeSlack;
    beforeEach(async () => {
      slack = bed.closeAfter(await startFakeSlack({ token: 'xoxb-durable' }));
    });

    it('answers 503 (Slack retries) when the journal cannot take the message, 200 when it can', async () => {
      const quick = heldRunner(false);
      const service = bed.closeAfter(
        createChannelsService({
          db: bed.db,
          section: channelsSectionSchema.parse({
            slack: {
              enabled: true,
              botToken: 'xoxb-durable',
              signingSecret: 'durable-signing',
              apiBaseUrl: slack.url,
              allowFrom: ['U1'],
            },
          }),
          runner: quick.runner,
        }),
      );
      await service.start();
      const server = bed.closeAfter(await serveChannels(() => service));
      const event = (ts: string) => ({
        type: 'event_callback',
        event: { type: 'message', user: 'U1', channel: 'C1', ts, text: 'hello' },
      });
      await bed.db.execute('ALTER TABLE channel_inbound RENAME TO channel_inbound_away');
      expect((await signedSlackPost(server.url, event('1.1'), 'durable-signing')).status).toBe(503);
      expect(quick.turns).toHaveLength(0);
      await bed.db.execute('ALTER TABLE channel_inbound_away RENAME TO channel_inbound');
      expect((await signedSlackPost(server.url, event('1.1'), 'durable-signing')).status).toBe(200);
      await expect.poll(() => quick.turns.length).toBe(1);
    });
  });
});
