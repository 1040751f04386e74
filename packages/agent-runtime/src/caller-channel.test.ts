import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startRuntime } from '../test/helpers.js';

describe('the caller channel of a turn', () => {
  it('reaches the tools of a turn that answers a chat, and only that turn; a malformed one is refused', async () => {
    const contexts: unknown[] = [];
    const t = await startRuntime({
      agents: { entries: { bot: { name: 'Bot', systemPrompt: 'Be brief.', tools: ['where'] } } },
      tools: [
        {
          name: 'where',
          description: 'records the chat its turn answers',
          params: z.object({}),
          handler: async (_params, context) => {
            contexts.push(context.callerChannel);
            return 'ok';
          },
        },
      ],
      offline: {
        script: (request) =>
          request.messages.some((message) => message.role === 'tool')
            ? { text: 'done' }
            : { toolCalls: [{ toolName: 'where', input: {} }] },
      },
    });
    await t.runtime.runTurn({
      agentId: 'bot',
      message: 'hi',
      sessionKey: 'default:telegram-5:5',
      callerChannel: { channelType: 'telegram', channelId: '5' },
    });
    await t.runtime.runTurn({ agentId: 'bot', message: 'hi', sessionKey: 'default:rpc:x' });
    expect(contexts).toEqual([{ channelType: 'telegram', channelId: '5' }, undefined]);
    await expect(
      t.runtime.runTurn({
        agentId: 'bot',
        message: 'hi',
        callerChannel: { channelType: '', channelId: '5' },
      }),
    ).rejects.toThrow(/callerChannel/);
  });
});
