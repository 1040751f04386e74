import { describe, expect, it } from 'vitest';
import type { ProviderEntry } from './config.js';
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

  it('resolves secret references in provider headers, and names the header of an unknown one', async () => {
    const built: Array<{ headers: ProviderEntry['headers']; apiKey: string | undefined }> = [];
    const secrets: Record<string, string> = { HDR: 'header-$&-value', KEY: 'the-key' };
    const t = await startRuntime({
      resolveSecret: (name) => (Object.hasOwn(secrets, name) ? secrets[name] : undefined),
      providers: {
        entries: {
          remote: {
            type: 'openai-compatible',
            baseUrl: 'http://127.0.0.1:9/v1',
            apiKey: '${secret:KEY}',
            headers: { 'x-auth': 'Token ${secret:HDR}', 'x-plain': 'p' },
            models: ['m'],
          },
          broken: {
            type: 'openai-compatible',
            baseUrl: 'http://127.0.0.1:9/v1',
            headers: { 'x-auth': '${secret:ABSENT}' },
            models: ['m'],
          },
        },
      },
      providerFactory: (id, entry, apiKey) => {
        built.push({ headers: entry.headers, apiKey });
        return {
          id,
          type: 'openai-compatible',
          offline: false,
          stream: async function* () {},
          probe: async () => {},
        };
      },
    });
    await t.runtime.agents.update('default', { provider: 'remote' }, { dryRun: true });
    expect(built).toEqual([
      { headers: { 'x-auth': 'Token header-$&-value', 'x-plain': 'p' }, apiKey: 'the-key' },
    ]);
    await expect(
      t.runtime.agents.update('default', { provider: 'broken' }, { dryRun: true }),
    ).rejects.toMatchObject({
      code: 'SECRET_MISSING',
      message:
        'Provider broken: secret ABSENT is not set (referenced at providers.entries.broken.headers.x-auth)',
    });
  });
});
