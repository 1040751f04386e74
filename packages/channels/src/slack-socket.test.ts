import type { AgentTurnRequest } from '@agentd/contracts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeSlack, startFakeSlack } from '../test/fake-slack.js';
import { recordingRunner, useTestBed } from '../test/fixtures.js';
import { channelsSectionSchema } from './config.js';
import { type ChannelsService, createChannelsService } from './service.js';

const BOT_TOKEN = 'xoxb-socket-mode-bot-token-1234';
const APP_TOKEN = 'xapp-1-socket-mode-app-token-5678';
const bed = useTestBed('channels-slack-socket');
let slack: FakeSlack;
let service: ChannelsService | undefined;
const turns: AgentTurnRequest[] = [];

beforeEach(async () => {
  slack = await startFakeSlack({ token: BOT_TOKEN, appToken: APP_TOKEN });
  turns.length = 0;
});
afterEach(async () => {
  await service?.close();
  service = undefined;
  await slack.close();
});

async function startService(appToken = APP_TOKEN): Promise<ChannelsService> {
  service = createChannelsService({
    db: bed.db,
    section: channelsSectionSchema.parse({
      slack: {
        enabled: true,
        botToken: BOT_TOKEN,
        apiBaseUrl: slack.url,
        agentId: 'helper',
        allowFrom: ['U1'],
        socketMode: true,
        appToken,
      },
      delivery: { baseDelayMs: 20, maxAttempts: 3 },
    }),
    runner: recordingRunner(turns),
    pollMs: 50,
    settleTimeoutMs: 8000,
  });
  await service.start();
  return service;
}

const slackStatus = (running: ChannelsService) => running.list().find((row) => row.type === 'slack')?.status;

describe('slack socket mode', () => {
  it('opens the connection with the app token, acknowledges each envelope and answers in the thread', async () => {
    const running = await startService();
    await expect.poll(() => slackStatus(running), { timeout: 8000 }).toBe('connected');
    expect(slack.of('apps.connections.open')).toHaveLength(1);
    expect(slack.socketMode.connections()).toBe(1);

    slack.socketMode.pushEvent({
      type: 'message',
      user: 'U9',
      channel: 'C1',
      ts: '1700000000.000100',
      text: 'no',
    });
    const id = slack.socketMode.pushEvent({
      type: 'message',
      user: 'U1',
      channel: 'C1',
      ts: '1700000000.000200',
      text: 'over the socket',
    });
    // Bot messages (its own answers among them) come back as events too: acknowledged, never a turn.
    slack.socketMode.pushEvent({
      type: 'message',
      user: 'UBOT',
      bot_id: 'B1',
      channel: 'C1',
      ts: '1700000000.000300',
      text: 'echo',
    });
    await expect.poll(() => slack.posted('C1').length, { timeout: 8000 }).toBe(1);
    expect(slack.posted('C1')[0]).toMatchObject({
      text: 'answer to over the socket',
      thread_ts: '1700000000.000200',
    });
    await expect.poll(() => slack.socketMode.envelopes.every((item) => item.acked)).toBe(true);
    expect(slack.socketMode.envelopes.map((item) => item.envelope_id)).toContain(id);
    expect(turns.map((turn) => turn.sessionKey)).toEqual(['default:slack-C1:U1']);
    expect(running.refusedCount('slack')).toBe(1);
    // Stopping closes the socket; no reconnect follows.
    await running.close();
    service = undefined;
    await expect.poll(() => slack.socketMode.connections(), { timeout: 5000 }).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(slack.socketMode.opened()).toBe(1);
  });

  it('reconnects with a fresh URL when Slack sends disconnect, and keeps answering', async () => {
    const running = await startService();
    await expect.poll(() => slackStatus(running), { timeout: 8000 }).toBe('connected');
    slack.socketMode.disconnect();
    await expect.poll(() => slack.socketMode.opened(), { timeout: 15_000 }).toBe(2);
    await expect.poll(() => slack.socketMode.connections(), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => slackStatus(running), { timeout: 8000 }).toBe('connected');
    slack.socketMode.pushEvent({
      type: 'app_mention',
      user: 'U1',
      channel: 'C2',
      ts: '1700000001.000100',
      text: 'still there?',
    });
    await expect.poll(() => slack.posted('C2').length, { timeout: 8000 }).toBe(1);
  });

  it('reports a refused app token as an error without the token', async () => {
    const running = await startService('xapp-1-wrong-app-token-0000');
    await expect.poll(() => slackStatus(running), { timeout: 8000 }).toBe('error');
    const [status] = await running.status('slack');
    expect(JSON.stringify(status)).toContain('invalid_auth');
    expect(JSON.stringify(status)).not.toContain('wrong-app-token');
    expect(slack.socketMode.connections()).toBe(0);
  });

  it('requires the app token in socket mode once an agent takes messages, naming the field', () => {
    const parsed = channelsSectionSchema.safeParse({
      slack: { enabled: true, botToken: BOT_TOKEN, agentId: 'helper', socketMode: true },
    });
    expect(parsed.error?.issues[0]?.path).toEqual(['slack', 'appToken']);
  });
});
