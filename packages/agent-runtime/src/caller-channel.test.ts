import { describe, expect, it } from 'vitest';
import { contextProbe, startRuntime } from '../test/helpers.js';

describe('the caller channel of a turn', () => {
  it('reaches the tools of a turn that answers a chat, and only that turn; a malformed one is refused', async () => {
    const probe = contextProbe(
      'where',
      'records the chat its turn answers',
      (context) => context.callerChannel,
    );
    const t = await startRuntime({
      agents: { entries: { bot: { name: 'Bot', systemPrompt: 'Be brief.', tools: ['where'] } } },
      tools: [probe.tool],
      offline: probe.offline,
    });
    await t.runtime.runTurn({
      agentId: 'bot',
      message: 'hi',
      sessionKey: 'default:telegram-5:5',
      callerChannel: { channelType: 'telegram', channelId: '5' },
    });
    await t.runtime.runTurn({ agentId: 'bot', message: 'hi', sessionKey: 'default:rpc:x' });
    expect(probe.seen).toEqual([{ channelType: 'telegram', channelId: '5' }, undefined]);
    await expect(
      t.runtime.runTurn({
        agentId: 'bot',
        message: 'hi',
        callerChannel: { channelType: '', channelId: '5' },
      }),
    ).rejects.toThrow(/callerChannel/);
  });
});
