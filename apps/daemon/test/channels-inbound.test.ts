import { afterEach, describe, expect, it } from 'vitest';
import { startFakeDiscord } from '../../../packages/channels/test/fake-discord.js';
import { startFakeSlack } from '../../../packages/channels/test/fake-slack.js';
import { startFakeTelegram } from '../../../packages/channels/test/fake-telegram.js';
import { channelConnected, signedSlackPost, telegramMessage } from './channel-helpers.js';
import { daemonPool, eventually, rpcClient, sessionMessages } from './helpers.js';

const SLACK_TOKEN = 'xoxb-daemon-inbound-slack-token-42';
const SIGNING_SECRET = 'daemon-inbound-slack-signing-secret';
const DISCORD_TOKEN = 'daemon.inbound.discord-token-abcdef';

const pool = daemonPool('agentd-channels-inbound-');
afterEach(() => pool.cleanup());

/**
 * A daemon with the one platform enabled, its inbound messages handed to the default agent and
 * its secrets taken from `env`, and an admin client on it.
 */
async function startInbound(platform: string, section: Record<string, unknown>, env: Record<string, string>) {
  const daemon = await pool.start(pool.tempDir(), {
    config: { channels: { [platform]: { enabled: true, agentId: 'default', ...section } } },
    env,
  });
  return { daemon, rpc: rpcClient(daemon.url) };
}

describe('slack Events API inbound through a real daemon', { timeout: 60_000 }, () => {
  it('turns a signed message event into an agent turn whose answer the queue posts in the thread', async () => {
    const slack = pool.closeAfter(await startFakeSlack({ token: SLACK_TOKEN }));
    const { daemon, rpc } = await startInbound(
      'slack',
      {
        botToken: '${secret:SLACK_TOKEN}',
        signingSecret: '${secret:SLACK_SIGNING}',
        apiBaseUrl: slack.url,
        allowFrom: ['U100'],
      },
      { SLACK_TOKEN, SLACK_SIGNING: SIGNING_SECRET },
    );
    const post = (payload: unknown, secret = SIGNING_SECRET) => signedSlackPost(daemon.url, payload, secret);

    const handshake = await post({ type: 'url_verification', challenge: 'ch-1' });
    expect([handshake.status, await handshake.json()]).toEqual([200, { challenge: 'ch-1' }]);
    // A forged signature is refused before anything reaches an agent.
    const forged = await post(
      {
        type: 'event_callback',
        event: { type: 'message', user: 'U100', channel: 'C5', ts: '1.1', text: 'x' },
      },
      'not-the-secret',
    );
    expect(forged.status).toBe(401);

    const event = {
      type: 'message',
      user: 'U100',
      channel: 'C5',
      ts: '1700000100.000200',
      text: 'hello from slack',
    };
    expect((await post({ type: 'event_callback', event })).status).toBe(200);
    // Slack retries a callback it believes lost: still one turn and one answer.
    expect((await post({ type: 'event_callback', event })).status).toBe(200);
    // A sender not in allowFrom gets no turn.
    const stranger = { ...event, user: 'U999', ts: '1700000100.000300', text: 'let me in' };
    expect((await post({ type: 'event_callback', event: stranger })).status).toBe(200);

    await eventually(async () => (slack.posted('C5').length === 1 ? true : undefined));
    const reply = slack.posted('C5')[0];
    expect(reply).toMatchObject({ thread_ts: '1700000100.000200', text: expect.any(String) });
    expect(String(reply?.text).length).toBeGreaterThan(0);
    const history = await sessionMessages(rpc, 'default:slack-C5:U100');
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(history[0]?.content).toContain('hello from slack');
    expect(await rpc.call('delivery.queue.status', { channelType: 'slack' })).toMatchObject({ sent: 1 });
    const status = await rpc.call<{ channels: Array<{ refused: number; inbound: boolean }> }>(
      'channels.status',
      { channel_type: 'slack' },
    );
    expect(status.channels[0]).toMatchObject({ refused: 1, inbound: true });
    // Nothing else was posted (the stranger got no answer).
    expect(slack.of('chat.postMessage')).toHaveLength(1);
  });
});

describe('discord Gateway inbound through a real daemon', { timeout: 60_000 }, () => {
  it('identifies on the Gateway, turns MESSAGE_CREATE into an agent turn and posts the answer over REST', async () => {
    const discord = pool.closeAfter(await startFakeDiscord({ token: DISCORD_TOKEN }));
    const { rpc } = await startInbound(
      'discord',
      {
        botToken: '${secret:DISCORD_TOKEN}',
        apiBaseUrl: discord.url,
        gatewayUrl: discord.gatewayUrl,
        allowFrom: ['200'],
      },
      { DISCORD_TOKEN },
    );
    await eventually(async () => (discord.sessions() === 1 ? true : undefined));
    expect(discord.handshakes[0]).toMatchObject({ op: 2, d: { token: DISCORD_TOKEN } });
    // GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT.
    expect(Number(discord.handshakes[0]?.d.intents) & 0b1001001000000000).toBe(0b1001001000000000);
    await channelConnected(rpc, 'discord');

    const author = { id: '200', username: 'someone', discriminator: '0', avatar: null };
    discord.dispatchMessage({
      id: '5001',
      channel_id: '777',
      content: 'not me',
      author: { ...author, id: '9' },
    });
    discord.dispatchMessage({ id: '5002', channel_id: '777', content: 'hello from discord', author });
    // The bot's own messages come back on the Gateway too; they must not start a turn.
    discord.dispatchMessage({
      id: '5003',
      channel_id: '777',
      content: 'echo',
      author: { ...author, id: '1', bot: true },
    });

    await eventually(async () => (discord.created('777').length === 1 ? true : undefined));
    const reply = discord.created('777')[0];
    expect(reply).toMatchObject({ message_reference: { message_id: '5002' } });
    expect(String(reply?.content).length).toBeGreaterThan(0);
    const history = await sessionMessages(rpc, 'default:discord-777:200');
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(history[0]?.content).toContain('hello from discord');
    const status = await rpc.call<{ channels: Array<{ refused: number; inbound: boolean }> }>(
      'channels.status',
      { channel_type: 'discord' },
    );
    expect(status.channels[0]).toMatchObject({ refused: 1, inbound: true });
    expect(discord.of(/^POST \/channels\/777\/messages$/)).toHaveLength(1);
  });
});

describe('telegram webhook mode through a real daemon', { timeout: 60_000 }, () => {
  it('calls setWebhook with its secret, serves /channels/telegram/webhook and answers through the queue', async () => {
    const token = '4242:daemon-webhook-telegram-token-0123';
    const telegram = pool.closeAfter(await startFakeTelegram({ token }));
    const daemon = await pool.start(pool.tempDir(), {
      config: {},
      env: { TG_TOKEN: token, TG_HOOK_SECRET: 'daemon_hook-secret-99' },
    });
    const rpc = rpcClient(daemon.url);
    const webhookUrl = `${daemon.url}/channels/telegram/webhook`;
    // Webhook mode without the public URL is refused naming the field, and nothing is applied.
    const incomplete = await rpc.fail('config.patch', {
      channels: {
        telegram: { enabled: true, botToken: '${secret:TG_TOKEN}', agentId: 'default', mode: 'webhook' },
      },
    });
    expect(incomplete.code).toBe(-32602);
    expect(JSON.stringify(incomplete)).toContain('webhookUrl');
    expect(telegram.calls).toHaveLength(0);
    // The public URL names the daemon's own port, known only once it listens: set live.
    await rpc.call('config.patch', {
      channels: {
        telegram: {
          enabled: true,
          botToken: '${secret:TG_TOKEN}',
          apiBaseUrl: telegram.url,
          agentId: 'default',
          allowFrom: ['100'],
          mode: 'webhook',
          webhookUrl,
          webhookSecret: '${secret:TG_HOOK_SECRET}',
        },
      },
    });
    await eventually(async () => (telegram.webhook()?.url === webhookUrl ? true : undefined));
    expect(telegram.webhook()?.secretToken).toBe('daemon_hook-secret-99');
    await channelConnected(rpc, 'telegram');

    const message = telegramMessage(31, 100, 100, 'hello over the webhook');
    expect(await telegram.postUpdate({ message }, 'not-the-secret')).toBe(401);
    expect(await telegram.postUpdate({ message }, null)).toBe(401);
    expect(await telegram.postUpdate({ message })).toBe(200);
    await eventually(async () => (telegram.of('sendMessage').length === 1 ? true : undefined));
    expect(telegram.of('sendMessage')[0]?.params).toMatchObject({
      chat_id: '100',
      reply_parameters: { message_id: 31 },
    });
    const history = await sessionMessages(rpc, 'default:telegram-100:100');
    expect(history.map((entry) => entry.role)).toEqual(['user', 'assistant']);
    // Webhook mode never long-polls, and the secret stays out of config answers.
    expect(telegram.of('getUpdates')).toHaveLength(0);
    expect(JSON.stringify(await rpc.call('config.read'))).not.toContain('daemon_hook-secret-99');
  });
});

describe('slack Socket Mode through a real daemon', { timeout: 60_000 }, () => {
  it('connects with the app token, acknowledges the envelope and answers in the thread through the queue', async () => {
    const appToken = 'xapp-1-daemon-socket-mode-token-77';
    const slack = pool.closeAfter(await startFakeSlack({ token: SLACK_TOKEN, appToken }));
    const { rpc } = await startInbound(
      'slack',
      {
        botToken: '${secret:SLACK_TOKEN}',
        appToken: '${secret:SLACK_APP_TOKEN}',
        socketMode: true,
        apiBaseUrl: slack.url,
        allowFrom: ['U100'],
      },
      { SLACK_TOKEN, SLACK_APP_TOKEN: appToken },
    );
    await channelConnected(rpc, 'slack');
    slack.socketMode.pushEvent({
      type: 'message',
      user: 'U100',
      channel: 'C8',
      ts: '1700000200.000100',
      text: 'hello over socket mode',
    });
    await eventually(async () => (slack.posted('C8').length === 1 ? true : undefined));
    expect(slack.posted('C8')[0]).toMatchObject({ thread_ts: '1700000200.000100' });
    expect(slack.socketMode.envelopes.every((item) => item.acked)).toBe(true);
    const history = await sessionMessages(rpc, 'default:slack-C8:U100');
    expect(history.map((entry) => entry.role)).toEqual(['user', 'assistant']);
    expect(JSON.stringify(await rpc.call('config.read'))).not.toContain(appToken);
  });
});
