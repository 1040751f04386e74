import { createHmac } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startFakeDiscord } from '../../../packages/channels/test/fake-discord.js';
import { startFakeSlack } from '../../../packages/channels/test/fake-slack.js';
import { startFakeWhatsApp } from '../../../packages/channels/test/fake-whatsapp.js';
import { type FakeTelegram, startFakeTelegram } from '../../../packages/channels/test/fake-telegram.js';
import { telegramMessage } from './channel-helpers.js';
import { daemonPool, editConfigFile, eventually, openRaw, rpcClient, sessionMessages } from './helpers.js';

const TOKEN = '987654:channels-e2e-bot-token-0123456789abcdef';
const pool = daemonPool('agentd-channels-');

/** The daemon's own log lines (logs/agentd.log), parsed. */
function logLines(dataDir: string): Array<Record<string, unknown>> {
  const file = join(dataDir, 'logs', 'agentd.log');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
let fake: FakeTelegram;

beforeEach(async () => {
  fake = pool.closeAfter(await startFakeTelegram({ token: TOKEN }));
});
afterEach(() => pool.cleanup());

/** The `channels` section pointing Telegram at the fake, with fast retries. */
function channelsConfig(telegram: Record<string, unknown> = {}) {
  return {
    channels: {
      telegram: { enabled: true, botToken: '${secret:TG_TOKEN}', apiBaseUrl: fake.url, ...telegram },
      delivery: { maxAttempts: 2, baseDelayMs: 20 },
    },
    notifications: { channel: 'telegram', to: '500' },
  };
}

/** Paths of the files under `dir` (git objects skipped: compressed) whose bytes contain `secret`. */
function filesHolding(dir: string, secret: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === '.git') continue;
    if (statSync(path).isDirectory()) found.push(...filesHolding(path, secret));
    else if (readFileSync(path).includes(secret)) found.push(path);
  }
  return found;
}

async function daemonWith(config: Record<string, unknown>) {
  const daemon = await pool.start(pool.tempDir(), { config, env: { TG_TOKEN: TOKEN } });
  return { daemon, rpc: rpcClient(daemon.url) };
}

describe('channels through a real daemon and a fake Bot API', { timeout: 60_000 }, () => {
  it('serves the message methods, the telegram actions, notifications and the queue status', async () => {
    const { daemon, rpc } = await daemonWith(channelsConfig());
    const target = { channel_type: 'telegram', channel_id: '77' };
    const sent = await rpc.call<{ messageId: string; deliveryId: string; status: string }>('message.send', {
      ...target,
      text: 'hello',
    });
    expect(sent).toEqual({ messageId: expect.any(String), deliveryId: expect.any(String), status: 'sent' });
    const mid = sent.messageId;
    expect((await rpc.call('message.reply', { ...target, message_id: mid, text: 're' })).status).toBe('sent');
    expect((await rpc.call('message.edit', { ...target, message_id: mid, text: 'hello!' })).status).toBe(
      'sent',
    );
    expect((await rpc.call('message.react', { ...target, message_id: mid, emoji: '👍' })).status).toBe(
      'sent',
    );
    expect((await rpc.call('message.delete', { ...target, message_id: mid })).status).toBe('sent');
    const file = await rpc.call('message.attach', {
      ...target,
      data: Buffer.from('%PDF-1.4 fake').toString('base64'),
      mimeType: 'application/pdf',
      filename: 'a.pdf',
    });
    expect(file.status).toBe('sent');
    expect(fake.of('sendMessage').map((call) => call.params)).toEqual([
      { chat_id: '77', text: 'hello' },
      { chat_id: '77', text: 're', reply_parameters: { message_id: Number(mid) } },
    ]);
    expect(fake.of('editMessageText')).toHaveLength(1);
    expect(fake.of('setMessageReaction')).toHaveLength(1);
    expect(fake.of('deleteMessage')).toHaveLength(1);
    expect(fake.of('sendDocument')[0]?.params.document).toMatchObject({ filename: 'a.pdf' });

    const history = await rpc.fail('message.fetch', target);
    expect(history.code).toBe(-32012);
    expect(history.message).toContain('cannot read chat history');

    expect(await rpc.call('telegram.action', { action: 'pin', channel_id: '77', message_id: mid })).toEqual({
      ok: true,
    });
    expect(await rpc.call('telegram.action', { action: 'chatInfo', channel_id: '77' })).toMatchObject({
      chat: { id: 77, title: 'fake chat' },
    });
    expect(
      await rpc.call('telegram.action', {
        action: 'poll',
        channel_id: '77',
        question: 'lunch?',
        options: ['yes', 'no'],
      }),
    ).toEqual({ messageId: expect.any(String) });

    const note = await rpc.call('notification.send', { message: 'disk almost full', priority: 'high' });
    expect(note.status).toBe('sent');
    expect(fake.of('sendMessage').at(-1)?.params).toEqual({
      chat_id: '500',
      text: '[high] disk almost full',
    });

    expect(await rpc.call('delivery.queue.status', { channelType: 'telegram' })).toEqual({
      queued: 0,
      sending: 0,
      sent: 7,
      failed: 0,
      deadLetter: 0,
    });
    const list = await rpc.call<{ channels: Array<{ type: string; status: string }> }>('channels.list');
    expect(list.channels).toContainEqual({ type: 'telegram', status: 'configured', inbound: false });
    expect(list.channels).toContainEqual({ type: 'discord', status: 'unconfigured', inbound: false });
    expect(list.channels.map((channel) => channel.type)).toContain('webchat');
    const status = await rpc.call<{ channels: Array<{ queue: { sent: number } }> }>('channels.status', {
      channel_type: 'telegram',
    });
    expect(status.channels[0]?.queue.sent).toBe(7);
    const traces = await rpc.call<{ deliveries: unknown[] }>('obs.delivery.recent', {});
    expect(traces.deliveries.length).toBeGreaterThanOrEqual(7);
    // The token is a secret reference: no file of the data dir (database, logs, evidence) holds it.
    expect(filesHolding(daemon.dataDir, TOKEN)).toEqual([]);
  });

  it('answers a clear error for an unconfigured platform and -32602 naming the field, writing nothing', async () => {
    const { rpc } = await daemonWith({});
    const unconfigured = await rpc.fail('message.send', {
      channel_type: 'discord',
      channel_id: '1',
      text: 'x',
    });
    expect(unconfigured.code).toBe(-32012);
    expect(unconfigured.message).toBe(
      'discord is not configured: set channels.discord.enabled and its credentials',
    );
    expect((await rpc.fail('telegram.action', { action: 'chatInfo', channel_id: '1' })).code).toBe(-32012);
    expect((await rpc.fail('notification.send', { message: 'x' })).message).toContain(
      'notifications are not configured',
    );

    const badType = await rpc.fail('message.send', { channel_type: 'fax', channel_id: '1', text: 'x' });
    expect(badType.code).toBe(-32602);
    expect(badType.message).toContain('channel_type');
    const noText = await rpc.fail('message.send', { channel_type: 'webchat', channel_id: '1' });
    expect(noText.code).toBe(-32602);
    expect(noText.message).toContain('text');
    const badAction = await rpc.fail('telegram.action', {
      action: 'poll',
      channel_id: '1',
      question: 'q',
      options: ['one'],
    });
    expect(badAction.code).toBe(-32602);
    expect(badAction.message).toContain('options');
    const badPriority = await rpc.fail('notification.send', { message: 'x', priority: 'urgent' });
    expect(badPriority.message).toContain('priority');
    expect(await rpc.call('delivery.queue.status')).toEqual({
      queued: 0,
      sending: 0,
      sent: 0,
      failed: 0,
      deadLetter: 0,
    });
  });

  it('applies a channels change live, waits out a 429, dead-letters a 400 and the retry cap, and keeps the token out of answers', async () => {
    const { rpc } = await daemonWith({});
    await rpc.call('config.patch', {
      channels: {
        telegram: { enabled: true, botToken: TOKEN, apiBaseUrl: fake.url },
        delivery: { maxAttempts: 2, baseDelayMs: 20 },
      },
    });
    expect(
      (await rpc.call('message.send', { channel_type: 'telegram', channel_id: '9', text: 'live' })).status,
    ).toBe('sent');
    const answers = [
      await rpc.call('config.read'),
      await rpc.call('config.get', { path: 'channels.telegram' }).catch(() => ({})),
      await rpc.call('channels.status'),
      await rpc.call('channels.list'),
    ];
    for (const answer of answers) expect(JSON.stringify(answer)).not.toContain(TOKEN);

    fake.fail('sendMessage', 429, 'Too Many Requests: retry after 1', { retryAfter: 1 });
    const began = Date.now();
    expect(
      (await rpc.call('message.send', { channel_type: 'telegram', channel_id: '9', text: 'later' })).status,
    ).toBe('sent');
    expect(Date.now() - began).toBeGreaterThanOrEqual(950);
    fake.fail('sendMessage', 400, 'Bad Request: chat not found');
    const refused = await rpc.call('message.send', {
      channel_type: 'telegram',
      channel_id: '404',
      text: 'nobody',
    });
    expect(refused).toMatchObject({ status: 'deadLetter', error: 'telegram: Bad Request: chat not found' });

    fake.fail('sendMessage', 502, 'Bad Gateway', { times: 5 });
    const failed = await rpc.call('message.send', {
      channel_type: 'telegram',
      channel_id: '9',
      text: 'doomed',
    });
    expect(failed).toMatchObject({
      status: 'deadLetter',
      error: expect.stringContaining('gave up after 2 attempts'),
    });
    expect(JSON.stringify(failed)).not.toContain(TOKEN);
    expect(await rpc.call('delivery.queue.status', {})).toMatchObject({ sent: 2, deadLetter: 2 });
    const stats = await rpc.call<{ successes: number; failures: number }>('obs.delivery.stats');
    expect(stats).toMatchObject({ successes: 2 });
    expect(stats.failures).toBeGreaterThanOrEqual(3);
    const activity = await rpc.call<{ channel: { channelType: string; messagesSent: number } | null }>(
      'obs.channels.get',
      {
        channelId: '9',
      },
    );
    expect(activity.channel).toMatchObject({ channelType: 'telegram', messagesSent: 2 });
  });

  it('refuses to start on an unknown secret reference, and leaves off a platform whose secret a hand edit loses', async () => {
    const telegram = { enabled: true, botToken: '${secret:TG_TOKEN}', apiBaseUrl: fake.url };
    const unknown = { enabled: true, botToken: '${secret:NOT_SET_ANYWHERE}' };
    // A reference no store, .env or environment knows fails the start naming the key (issue #17).
    await expect(daemonWith({ channels: { telegram, discord: unknown } })).rejects.toThrow(
      /NOT_SET_ANYWHERE.*channels\.discord\.botToken/,
    );
    // A hand edit reloaded with SIGHUP is applied per platform: the lost one is left off.
    const dir = pool.tempDir();
    const daemon = await pool.start(dir, { config: { channels: { telegram } }, env: { TG_TOKEN: TOKEN } });
    const rpc = rpcClient(daemon.url);
    editConfigFile(dir, (onDisk) => ({ ...onDisk, channels: { telegram, discord: unknown } }));
    // The reload applies the rest and reports the platform whose secret failed to resolve: it
    // resolves (a lost secret does not fail the whole reload) and the log names the platform.
    await expect(daemon.reload()).resolves.toBeUndefined();
    const report = await eventually(() =>
      logLines(dir).find((line) => line.channelType === 'discord' && line.errorKind === 'config'),
    );
    expect(report).toMatchObject({
      msg: 'discord left off: a secret reference could not be resolved',
      hint: expect.stringContaining('channels.discord'),
    });
    expect(JSON.stringify(report)).not.toContain(TOKEN);
    const list = await rpc.call<{ channels: Array<{ type: string; status: string }> }>('channels.list');
    expect(list.channels).toContainEqual({ type: 'discord', status: 'disabled', inbound: false });
    expect(
      (await rpc.call('message.send', { channel_type: 'telegram', channel_id: '1', text: 'up' })).status,
    ).toBe('sent');
    expect(
      (await rpc.fail('message.send', { channel_type: 'discord', channel_id: '1', text: 'x' })).code,
    ).toBe(-32012);
  });

  it('delivers webchat messages to the WebSocket client named by channel_id', async () => {
    const { daemon, rpc } = await daemonWith({});
    const { token } = await rpc.call<{ token: string }>('tokens.create', {
      scopes: ['rpc'],
      clientId: 'web-7',
    });
    const socket = await openRaw(daemon.wsUrl, token);
    const sent = await rpc.call('message.send', {
      channel_type: 'webchat',
      channel_id: 'web-7',
      text: 'hi there',
    });
    expect(sent.status).toBe('sent');
    const notification = await eventually(async () => {
      const next = (await socket.next()) as { method?: string; params?: Record<string, unknown> };
      return next.method === 'webchat.message' ? next : undefined;
    });
    expect(notification.params).toMatchObject({
      event: 'send',
      text: 'hi there',
      deliveryId: sent.deliveryId,
    });
    const fetched = await rpc.call<{ messages: Array<{ text: string }> }>('message.fetch', {
      channel_type: 'webchat',
      channel_id: 'web-7',
    });
    expect(fetched.messages.map((message) => message.text)).toEqual(['hi there']);
    socket.close();
  });
});

describe('slack and discord through a real daemon', { timeout: 60_000 }, () => {
  it('sends, fetches and runs platform actions against the fake Web API and REST API', async () => {
    const slack = pool.closeAfter(await startFakeSlack({ token: 'xoxb-e2e-slack-token-123456' }));
    const discord = pool.closeAfter(await startFakeDiscord({ token: 'e2e.discord.token-abcdef' }));
    const { rpc } = await daemonWith({
      channels: {
        slack: { enabled: true, botToken: 'xoxb-e2e-slack-token-123456', apiBaseUrl: slack.url },
        discord: { enabled: true, botToken: 'e2e.discord.token-abcdef', apiBaseUrl: discord.url },
      },
    });
    const toSlack = await rpc.call('message.send', {
      channel_type: 'slack',
      channel_id: 'C9',
      text: 'hi slack',
    });
    expect(toSlack).toMatchObject({ status: 'sent', messageId: expect.stringMatching(/^\d+\.\d+$/) });
    const toDiscord = await rpc.call('message.send', {
      channel_type: 'discord',
      channel_id: '999',
      text: 'hi discord',
    });
    expect(toDiscord.status).toBe('sent');
    expect(slack.posted('C9').map((message) => message.text)).toEqual(['hi slack']);
    expect(discord.created('999').map((message) => message.content)).toEqual(['hi discord']);
    const fetched = await rpc.call<{ messages: Array<{ text: string }> }>('message.fetch', {
      channel_type: 'discord',
      channel_id: '999',
      limit: 5,
    });
    expect(fetched.messages.map((message) => message.text)).toEqual(['hi discord']);
    expect(
      await rpc.call('slack.action', { action: 'topic', channel_id: 'C9', topic: 'on call' }),
    ).toMatchObject({ ok: true });
    expect(await rpc.call('discord.action', { action: 'channelInfo', channel_id: '999' })).toMatchObject({
      channel: { id: '999' },
    });
    const bad = await rpc.fail('discord.action', { action: 'channelInfo', channel_id: 'not-a-snowflake' });
    expect(bad.code).toBe(-32602);
    expect(bad.message).toContain('channel_id');
    const list = await rpc.call<{ channels: Array<{ type: string; status: string }> }>('channels.list');
    expect(list.channels).toContainEqual({ type: 'whatsapp', status: 'unconfigured', inbound: false });
    expect(JSON.stringify(await rpc.call('config.read'))).not.toMatch(/xoxb-e2e|e2e\.discord/);
  });
});

describe('inbound messages through a real daemon', { timeout: 60_000 }, () => {
  it('turns an allowed Telegram sender into an agent turn answered in the same chat, and refuses others', async () => {
    const { rpc } = await daemonWith(channelsConfig({ agentId: 'default', allowFrom: ['100'] }));
    fake.pushUpdate({ message: telegramMessage(7, -300, 999, 'let me in') });
    fake.pushUpdate({ message: telegramMessage(8, -300, 100, 'hello agent') });
    await eventually(async () => (fake.of('sendMessage').length === 1 ? true : undefined));
    const reply = fake.of('sendMessage')[0]?.params;
    expect(reply).toMatchObject({ chat_id: '-300', reply_parameters: { message_id: 8 } });
    expect(String(reply?.text).length).toBeGreaterThan(0);
    // The turn ran in the chat's session of the configured agent.
    const history = await sessionMessages(rpc, 'default:telegram--300:100');
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant']);
    const status = await rpc.call<{ channels: Array<{ refused: number }> }>('channels.status', {
      channel_type: 'telegram',
    });
    expect(status.channels[0]?.refused).toBe(1);
    const audit = await rpc.call<{ rows?: unknown[]; events?: unknown[] }>('obs.audit.query', {
      kind: 'auth',
    });
    expect(JSON.stringify(audit)).toContain('channel_sender_not_allowed');
  });

  it('serves the WhatsApp webhook under /channels/whatsapp and answers through the Cloud API', async () => {
    const wa = pool.closeAfter(
      await startFakeWhatsApp({ token: 'wa-e2e-access-token-0000', phoneNumberId: '1999' }),
    );
    const { daemon, rpc } = await daemonWith({
      channels: {
        whatsapp: {
          enabled: true,
          accessToken: 'wa-e2e-access-token-0000',
          phoneNumberId: '1999',
          appSecret: 'wa-e2e-app-secret',
          verifyToken: 'wa-verify',
          apiBaseUrl: wa.url,
          agentId: 'default',
          allowFrom: ['4930000000001'],
        },
      },
    });
    const challenge = await fetch(
      `${daemon.url}/channels/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=wa-verify&hub.challenge=777`,
    );
    expect([challenge.status, await challenge.text()]).toEqual([200, '777']);
    const body = JSON.stringify({
      entry: [
        {
          changes: [
            {
              value: {
                messages: [{ from: '4930000000001', id: 'wamid.e2e', type: 'text', text: { body: 'hi' } }],
              },
            },
          ],
        },
      ],
    });
    const signed = await fetch(`${daemon.url}/channels/whatsapp/webhook`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': `sha256=${createHmac('sha256', 'wa-e2e-app-secret').update(body).digest('hex')}`,
      },
      body,
    });
    expect(signed.status).toBe(200);
    await eventually(async () => (wa.messages().length === 1 ? true : undefined));
    expect(wa.messages()[0]).toMatchObject({
      to: '4930000000001',
      type: 'text',
      context: { message_id: 'wamid.e2e' },
    });
    const edit = await rpc.fail('message.edit', {
      channel_type: 'whatsapp',
      channel_id: '4930000000001',
      message_id: 'm',
      text: 'x',
    });
    expect(edit.code).toBe(-32012);
    expect(
      await rpc.call('whatsapp.action', {
        action: 'template',
        to: '4930000000001',
        name: 'hello_world',
        language: 'en_US',
      }),
    ).toMatchObject({ messageId: expect.any(String) });
    expect((await fetch(`${daemon.url}/channels/discord/interactions`, { method: 'POST' })).status).toBe(404);
  });
});

describe('webhook answers delivered to a channel', { timeout: 60_000 }, () => {
  it('sends a deliver: true mapping answer through the delivery queue to the chat it names', async () => {
    const hookToken = 'hook-secret-for-channels-0123456789abcdef';
    const { daemon, rpc } = await daemonWith({
      ...channelsConfig(),
      webhooks: {
        enabled: true,
        token: hookToken,
        mappings: [
          { id: 'alerts', match: { path: 'alerts' }, deliver: true, channel: 'telegram', to: '4242' },
        ],
      },
    });
    const body = JSON.stringify({ alert: 'disk full' });
    const posted = await fetch(`${daemon.url}/hooks/alerts`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-webhook-signature': createHmac('sha256', hookToken).update(body).digest('hex'),
      },
      body,
    });
    expect(posted.status).toBeLessThan(300);
    await eventually(async () => (fake.of('sendMessage').length === 1 ? true : undefined));
    expect(fake.of('sendMessage')[0]?.params).toMatchObject({ chat_id: '4242', text: expect.any(String) });
    // The platform has the message once the send returns; the queue records it as sent at its next commit.
    const status = await eventually(async () => {
      const counts = await rpc.call<{ sent: number }>('delivery.queue.status', { channelType: 'telegram' });
      return counts.sent === 1 ? counts : undefined;
    });
    expect(status).toMatchObject({ sent: 1, queued: 0, sending: 0 });
  });
});

describe('a daemon killed with SIGKILL while deliveries wait', { timeout: 180_000 }, () => {
  it('sends every queued entry exactly once after the restart and never repeats an in-doubt run step', async () => {
    const dataDir = pool.tempDir();
    writeFileSync(
      join(dataDir, 'config.yaml'),
      stringify({
        channels: { telegram: { enabled: true, botToken: '${secret:TG_TOKEN}', apiBaseUrl: fake.url } },
      }),
    );
    const env = { AGENTD_ADMIN_TOKEN: 'test-admin-token-0123456789abcdef0123456789', TG_TOKEN: TOKEN };
    // The first attempt to chat 1 is received and never answered: the daemon dies in it.
    let heldOnce = false;
    fake.hold((call) => {
      if (call.method !== 'sendMessage' || call.params.chat_id !== '1' || heldOnce) return false;
      heldOnce = true;
      return true;
    });
    const first = await pool.startProcess(dataDir, env);
    const rpc = rpcClient(first.url);
    // A run's step, then five more behind it in the same chat (one chat is delivered in order).
    void rpc
      .call('message.send', {
        channel_type: 'telegram',
        channel_id: '1',
        text: 'step',
        rootRunId: 'run-1',
        idempotencyKey: 'run-1:step-1',
      })
      .catch(() => undefined);
    await eventually(async () => (fake.of('sendMessage').length === 1 ? true : undefined));
    for (const n of [1, 2, 3, 4, 5])
      void rpc
        .call('message.send', { channel_type: 'telegram', channel_id: '1', text: `m${n}` })
        .catch(() => undefined);
    await eventually(async () => {
      const counts = await rpc.call<{ queued: number; sending: number }>('delivery.queue.status');
      return counts.queued === 5 && counts.sending === 1 ? true : undefined;
    });
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;
    expect(fake.of('sendMessage')).toHaveLength(1);

    const second = await pool.startProcess(dataDir, env);
    const after = rpcClient(second.url);
    await eventually(async () => {
      const counts = await after.call<{ sent: number; deadLetter: number }>('delivery.queue.status');
      return counts.sent === 5 && counts.deadLetter === 1 ? counts : undefined;
    });
    const texts = fake.of('sendMessage').map((call) => call.params.text);
    // Each queued entry exactly once, in order; the in-doubt run step was not sent again.
    expect(texts).toEqual(['step', 'm1', 'm2', 'm3', 'm4', 'm5']);
    // The step repeated by its run answers the recorded outcome instead of sending.
    const replay = await after.call('message.send', {
      channel_type: 'telegram',
      channel_id: '1',
      text: 'step',
      rootRunId: 'run-1',
      idempotencyKey: 'run-1:step-1',
    });
    expect(replay).toMatchObject({ status: 'deadLetter', error: expect.stringContaining('in doubt') });
    expect(fake.of('sendMessage')).toHaveLength(6);
  });

  it('never posts twice on Discord or Slack when the daemon dies after the platform committed a post', async () => {
    const slack = await startFakeSlack({ token: 'xoxb-kill-slack-token-123456' });
    const discord = await startFakeDiscord({ token: 'kill.discord.token-abcdef' });
    try {
      const dataDir = pool.tempDir();
      writeFileSync(
        join(dataDir, 'config.yaml'),
        stringify({
          channels: {
            slack: { enabled: true, botToken: '${secret:SLACK_TOKEN}', apiBaseUrl: slack.url },
            discord: { enabled: true, botToken: '${secret:DISCORD_TOKEN}', apiBaseUrl: discord.url },
          },
        }),
      );
      const env = {
        AGENTD_ADMIN_TOKEN: 'test-admin-token-0123456789abcdef0123456789',
        SLACK_TOKEN: 'xoxb-kill-slack-token-123456',
        DISCORD_TOKEN: 'kill.discord.token-abcdef',
      };
      // Each platform stores the first post and never answers it: the daemon dies before the record.
      slack.holdOnce('chat.postMessage');
      discord.holdOnce(/^POST \/channels\/555\/messages$/);
      const first = await pool.startProcess(dataDir, env);
      const rpc = rpcClient(first.url);
      for (const [type, id] of [
        ['slack', 'C5'],
        ['discord', '555'],
      ])
        void rpc
          .call('message.send', { channel_type: type, channel_id: id, text: `once on ${type}` })
          .catch(() => undefined);
      await eventually(async () =>
        slack.posted('C5').length === 1 && discord.created('555').length === 1 ? true : undefined,
      );
      await eventually(async () =>
        (await rpc.call<{ sending: number }>('delivery.queue.status')).sending === 2 ? true : undefined,
      );
      const exited = new Promise((resolve) => first.child.once('exit', resolve));
      first.child.kill('SIGKILL');
      await exited;

      const second = await pool.startProcess(dataDir, env);
      const after = rpcClient(second.url);
      await eventually(async () => {
        const counts = await after.call<{ sent: number }>('delivery.queue.status');
        return counts.sent === 2 ? counts : undefined;
      });
      expect(slack.posted('C5').map((message) => message.text)).toEqual(['once on slack']);
      expect(discord.created('555').map((message) => message.content)).toEqual(['once on discord']);
    } finally {
      await slack.close();
      await discord.close();
    }
  });
});
