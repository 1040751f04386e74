import { describe, expect, it } from 'vitest';
import { startRuntime } from '../test/helpers.js';
import { AgentRuntimeError } from './errors.js';

describe('AgentRuntime.agents', () => {
  it('has a built-in default agent and creates, updates and deletes others, persisting patches', async () => {
    const patches: unknown[] = [];
    const t = await startRuntime({ persistAgents: async (entries) => void patches.push(entries) });
    expect(t.runtime.agents.list()).toEqual(['default']);
    const created = await t.runtime.agents.create({ name: 'Support Bot', systemPrompt: 'help' });
    expect(created).toMatchObject({
      agentId: 'support-bot',
      name: 'Support Bot',
      provider: 'offline',
      builtIn: false,
    });
    expect(t.runtime.agents.list()).toEqual(['default', 'support-bot']);
    await expect(t.runtime.agents.create({ name: 'Support Bot' })).rejects.toMatchObject({
      code: 'AGENT_EXISTS',
    });
    await expect(t.runtime.agents.create({ name: 'x', provider: 'ghost' })).rejects.toMatchObject({
      code: 'PROVIDER_NOT_FOUND',
    });
    await expect(t.runtime.agents.create({ name: 'y', maxSteps: 0 })).rejects.toMatchObject({
      code: 'INVALID_OPTIONS',
    });

    const updated = await t.runtime.agents.update('support-bot', { maxSteps: 3 });
    expect(updated).toMatchObject({
      agentId: 'support-bot',
      updated: true,
      agent: { maxSteps: 3, systemPrompt: 'help' },
    });
    const dry = await t.runtime.agents.update('support-bot', { systemPrompt: 'changed' }, { dryRun: true });
    expect(dry).toMatchObject({ updated: false, dryRun: true, agent: { systemPrompt: 'changed' } });
    expect(t.runtime.agents.get('support-bot').systemPrompt).toBe('help');

    await t.runtime.runTurn({ agentId: 'support-bot', message: 'hi', sessionKey: 'sb' });
    expect(await t.runtime.agents.delete('support-bot')).toEqual({ agentId: 'support-bot', deleted: true });
    await expect(t.runtime.runTurn({ message: 'again', sessionKey: 'sb' })).rejects.toMatchObject({
      code: 'AGENT_DELETED',
    });
    expect((await t.runtime.sessions.history('sb')).messages).toHaveLength(2);
    expect(() => t.runtime.agents.get('support-bot')).toThrow(/Agent not found: support-bot/);
    await expect(t.runtime.agents.delete('default')).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });

    expect(patches).toEqual([
      { 'support-bot': { name: 'Support Bot', systemPrompt: 'help' } },
      { 'support-bot': { maxSteps: 3 } },
      { 'support-bot': null },
    ]);
  });

  it('finds no agent or provider under the name of an object built-in', async () => {
    const t = await startRuntime({ persistAgents: async () => {} });
    await t.runtime.agents.create({ name: 'Alpha' });
    for (const agentId of [
      'toString',
      'valueOf',
      'hasOwnProperty',
      'constructor',
      'isPrototypeOf',
      '__proto__',
    ]) {
      expect(() => t.runtime.agents.get(agentId), agentId).toThrow(
        expect.objectContaining({ code: 'AGENT_NOT_FOUND' }),
      );
      await expect(t.runtime.agents.delete(agentId), agentId).rejects.toMatchObject({
        code: 'AGENT_NOT_FOUND',
      });
      await expect(t.runtime.agents.suspend(agentId), agentId).rejects.toMatchObject({
        code: 'AGENT_NOT_FOUND',
      });
    }
    await expect(t.runtime.agents.create({ name: 'x', provider: 'toString' })).rejects.toMatchObject({
      code: 'PROVIDER_NOT_FOUND',
    });
    expect(t.runtime.agents.list()).toEqual(['alpha', 'default']);
  });

  it('refuses new messages while suspended, lets in-flight turns finish, and resumes', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const t = await startRuntime({
      offline: {
        script: async (request) => {
          const last = request.messages.at(-1);
          if (last?.role !== 'user' || last.content !== 'slow') return { text: 'ok' };
          await gate;
          return { text: 'finished' };
        },
      },
    });
    const inFlight = t.runtime.runTurn({ message: 'slow', sessionKey: 'sus' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const suspended = await t.runtime.agents.suspend('default');
    expect(suspended).toEqual({ agentId: 'default', suspended: true, inFlight: 1 });
    await expect(t.runtime.runTurn({ message: 'new', sessionKey: 'other' })).rejects.toMatchObject({
      code: 'AGENT_SUSPENDED',
      message: expect.stringContaining('Agent suspended: default'),
    });
    release();
    expect((await inFlight).response).toBe('finished');
    expect(await t.runtime.agents.resume('default')).toEqual({ agentId: 'default', resumed: true });
    expect((await t.runtime.runTurn({ message: 'new', sessionKey: 'other' })).response).toBe('ok');
  });

  it('probes the provider on a dry-run provider change and reports a refused credential', async () => {
    const probed: string[] = [];
    const t = await startRuntime({
      providers: {
        entries: { remote: { type: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', models: ['m'] } },
      },
      providerFactory: (id) => ({
        id,
        type: 'openai-compatible',
        offline: false,
        stream: async function* () {},
        probe: async () => {
          probed.push(id);
          throw new AgentRuntimeError('PROVIDER_AUTH', `Provider ${id}: credential refused (HTTP 401)`);
        },
      }),
    });
    await expect(
      t.runtime.agents.update('default', { provider: 'remote' }, { dryRun: true }),
    ).rejects.toMatchObject({
      code: 'PROVIDER_AUTH',
    });
    expect(probed).toEqual(['remote']);
    expect(t.runtime.agents.get('default').provider).toBe('offline');
  });

  it('describes the operation models of an agent', async () => {
    const t = await startRuntime({
      providers: { entries: { cheap: { type: 'offline', models: ['tiny'] } } },
      agents: {
        entries: { ops: { name: 'Ops', operations: { compaction: { provider: 'cheap', timeoutMs: 5000 } } } },
      },
    });
    expect(t.runtime.agents.operationModels('ops')).toEqual({
      agentId: 'ops',
      primaryModel: 'offline',
      providerFamily: 'offline',
      tieringActive: false,
      operations: [
        {
          operationType: 'chat',
          model: 'offline',
          provider: 'offline',
          source: 'default',
          tieringActive: false,
          timeoutMs: 120_000,
          crossProvider: false,
          apiKeyConfigured: true,
        },
        {
          operationType: 'compaction',
          model: 'tiny',
          provider: 'cheap',
          source: 'config',
          tieringActive: false,
          timeoutMs: 5000,
          crossProvider: true,
          apiKeyConfigured: true,
        },
      ],
    });
  });
});
