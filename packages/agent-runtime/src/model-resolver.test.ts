import { describe, expect, it } from 'vitest';
import { startRuntime } from '../test/helpers.js';

describe('AgentRuntime.agents', () => {
  it('lists models without keys and resolves a secret reference only when a turn needs it', async () => {
    const t = await startRuntime({
      resolveSecret: () => undefined,
      providers: {
        entries: {
          openai: {
            type: 'openai-compatible',
            baseUrl: 'https://user:pw@api.example.com/v1?key=abc',
            apiKey: '${secret:OPENAI_KEY}',
            headers: { authorization: 'Bearer sk-header' },
            models: ['gpt-x', { id: 'gpt-y', contextWindow: 1000 }],
            capabilities: { capabilityClass: 'frontier' },
          },
        },
      },
      agents: { entries: { o: { name: 'O', provider: 'openai' } } },
    });
    const listed = t.runtime.models();
    expect(JSON.stringify(listed)).not.toMatch(/secret|sk-header|pw@|key=abc/);
    expect(listed.providers.map((provider) => provider.id)).toEqual(['offline', 'openai']);
    expect(listed.providers[1]).toMatchObject({
      apiKeyConfigured: true,
      baseUrl: 'https://api.example.com/v1',
      capabilityClass: 'frontier',
    });
    expect(listed.models.map((model) => [model.id, model.contextWindow])).toEqual([
      ['offline/offline', 8192],
      ['openai/gpt-x', 128_000],
      ['openai/gpt-y', 1000],
    ]);
    await expect(t.runtime.runTurn({ agentId: 'o', message: 'hi', sessionKey: 'sec' })).rejects.toMatchObject(
      {
        code: 'SECRET_MISSING',
        message: expect.stringContaining('OPENAI_KEY'),
      },
    );
  });
});
