import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAi } from '../../../packages/agent-runtime/test/fake-providers.js';
import { startFakeTelegram } from '../../../packages/channels/test/fake-telegram.js';
import { telegramMessage } from './channel-helpers.js';
import { startFakeDiscord } from '../../../packages/channels/test/fake-discord.js';
import { daemonPool, eventually, openAiProviders, rpcClient } from './helpers.js';

const TOKEN = '5151:daemon-shutdown-telegram-token-0123';
const pool = daemonPool('agentd-channels-lifecycle-');
afterEach(() => pool.cleanup());

/**
 * A daemon whose Telegram polls the fake with `allowFrom` and no `agentId` (so its inbound goes
 * to the default agent), the default agent answering through the fake model at `modelUrl`.
 */
function config(telegramUrl: string, modelUrl: string, shutdownGraceMs?: number) {
  return {
    ...(shutdownGraceMs === undefined ? {} : { gateway: { shutdownGraceMs } }),
    providers: openAiProviders('model', modelUrl, 'K', ['m']),
    agents: { entries: { default: { name: 'Default', provider: 'model' } } },
    channels: {
      telegram: { enabled: true, botToken: '${secret:TG}', apiBaseUrl: telegramUrl, allowFrom: ['100'] },
    },
  };
}

describe('channel turns across a daemon stop', { timeout: 90_000 }, () => {
  it('lets a turn running at the stop finish within gateway.shutdownGraceMs and delivers its answer', async () => {
    const telegram = pool.closeAfter(await startFakeTelegram({ token: TOKEN }));
    const model = pool.closeAfter(
      await startFakeOpenAi({
        apiKey: 'k',
        respond: () => ({ text: 'the considered answer', hangMs: 1500 }),
      }),
    );
    const daemon = await pool.start(pool.tempDir(), {
      config: config(telegram.url, model.url),
      env: { K: 'k', TG: TOKEN },
    });
    telegram.pushUpdate({ message: telegramMessage(41, 100, 100, 'think first') });
    await eventually(async () => (model.requests.length > 0 ? true : undefined));
    await daemon.stop();
    // The default grace (10 s) covered the 1.5 s turn: its answer was queued and sent before the stop ended.
    expect(telegram.of('sendMessage').map((call) => call.params.text)).toEqual(['the considered answer']);
    expect(telegram.pending()).toBe(0);
  });

  it('runs a turn cut off past the grace again at the next start, from the journal', async () => {
    const telegram = pool.closeAfter(await startFakeTelegram({ token: TOKEN }));
    const stuck = pool.closeAfter(
      await startFakeOpenAi({ apiKey: 'k', respond: () => ({ text: 'too late', hangMs: 60_000 }) }),
    );
    const dataDir = pool.tempDir();
    const first = await pool.start(dataDir, {
      config: config(telegram.url, stuck.url, 300),
      env: { K: 'k', TG: TOKEN },
    });
    telegram.pushUpdate({ message: telegramMessage(42, 100, 100, 'are you there?') });
    await eventually(async () => (stuck.requests.length > 0 ? true : undefined));
    await first.stop();
    expect(telegram.of('sendMessage')).toHaveLength(0);
    // Telegram was told the update arrived (the offset moved past it): it will not serve it again.
    expect(telegram.pending()).toBe(0);

    const quick = pool.closeAfter(
      await startFakeOpenAi({ apiKey: 'k', respond: () => ({ text: 'here now' }) }),
    );
    await pool.start(dataDir, { config: config(telegram.url, quick.url, 300), env: { K: 'k', TG: TOKEN } });
    await eventually(async () => (telegram.of('sendMessage').length === 1 ? true : undefined));
    expect(telegram.of('sendMessage')[0]?.params).toMatchObject({
      text: 'here now',
      reply_parameters: { message_id: 42 },
    });
    expect(quick.requests).toHaveLength(1);
  });
});

describe('a long message.send through a real daemon', { timeout: 60_000 }, () => {
  it('reaches Discord as ordered parts of at most 2,000 characters and answers parts', async () => {
    const token = 'daemon.long.discord-token-abcdef';
    const discord = pool.closeAfter(await startFakeDiscord({ token }));
    const daemon = await pool.start(pool.tempDir(), {
      config: { channels: { discord: { enabled: true, botToken: '${secret:DC}', apiBaseUrl: discord.url } } },
      env: { DC: token },
    });
    const words = Array.from({ length: 1000 }, (_, index) => `w${index}`);
    const answer = await rpcClient(daemon.url).call<{
      messageId: string;
      status: string;
      parts: Array<{ messageId: string; status: string }>;
    }>('message.send', {
      channel_type: 'discord',
      channel_id: '901',
      text: words.join(' '),
      idempotencyKey: 'long-1',
    });
    const created = discord.created('901').map((message) => String(message.content));
    expect(answer.parts.map((part) => part.status)).toEqual(created.map(() => 'sent'));
    expect(answer.messageId).toBe(answer.parts[0]?.messageId);
    expect(created.length).toBeGreaterThan(2);
    for (const part of created) expect(part.length).toBeLessThanOrEqual(2000);
    expect(created.join(' ').split(' ')).toEqual(words);
  });
});
