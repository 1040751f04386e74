import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  readSessionIndex,
  readTrajectory,
  recordingLogger,
  startRuntime,
  type TestRuntime,
} from '../test/helpers.js';
import { AgentRuntimeError } from './errors.js';
import { createAgentRuntime } from './runtime.js';
import type { OfflineScript } from './offline-provider.js';
import type { ModelRequest } from './provider.js';
import type { AgentTool } from './types.js';

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const addTool: AgentTool<{ a: number; b: number }> = {
  name: 'add',
  description: 'Adds two numbers',
  params: z.object({ a: z.number(), b: z.number() }),
  handler: async ({ a, b }) => ({ sum: a + b }),
};

const failingTool: AgentTool<{ reason: string }> = {
  name: 'explode',
  description: 'Always fails',
  params: z.object({ reason: z.string() }),
  handler: async ({ reason }) => {
    throw new Error(`exploded: ${reason}`);
  },
};

describe('createAgentRuntime', () => {
  it('runs a turn through the offline provider and returns the contract result', async () => {
    t = await startRuntime();
    const result = await t.runtime.runTurn({ message: 'hello agent', sessionKey: 't1:webchat:u1' });
    expect(result.response).toContain('[offline]');
    expect(result.response).toContain('hello agent');
    expect(result.finishReason).toBe('stop');
    expect(result.endReason).toBe('completed');
    expect(result.sessionKey).toBe('t1:webchat:u1');
    expect(result.tokensUsed.input).toBeGreaterThan(0);
    expect(result.tokensUsed.output).toBeGreaterThan(0);
    expect(result.tokensUsed.total).toBe(result.tokensUsed.input + result.tokensUsed.output);
  });

  it('creates the session implicitly and persists both messages in order', async () => {
    t = await startRuntime();
    await t.runtime.runTurn({ message: 'first', sessionKey: 's' });
    await t.runtime.runTurn({ message: 'second', sessionKey: 's' });
    const { messages } = await t.runtime.sessions.history('s');
    expect(messages.map((message) => [message.seq, message.role])).toEqual([
      [1, 'user'],
      [2, 'assistant'],
      [3, 'user'],
      [4, 'assistant'],
    ]);
    expect(messages[2]?.content).toBe('second');
  });

  it('sends the stored history to the model on the next turn', async () => {
    const seen: ModelRequest[] = [];
    t = await startRuntime({
      offline: {
        script: (request) => {
          seen.push(request);
          return { text: 'ok' };
        },
      },
    });
    await t.runtime.runTurn({ message: 'remember the word kiwi', sessionKey: 'h' });
    await t.runtime.runTurn({ message: 'what was the word?', sessionKey: 'h' });
    expect(seen[1]?.messages).toEqual([
      { role: 'user', content: 'remember the word kiwi' },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'what was the word?' },
    ]);
  });

  it('reads history back from the database when the session is not cached', async () => {
    t = await startRuntime();
    for (let index = 0; index < 150; index++)
      await t.runtime.runTurn({ message: `turn ${index}`, sessionKey: 'cold' });
    const seen: ModelRequest[] = [];
    for (const sessionCacheSize of [0, 64]) {
      const fresh = createAgentRuntime({
        db: t.db,
        dataDir: t.dir,
        sessionCacheSize,
        offline: {
          script: (request) => {
            seen.push(request);
            return { text: 'ok' };
          },
        },
      });
      await fresh.runTurn({ message: 'after restart', sessionKey: 'cold' });
      await fresh.close();
    }
    const [uncached, paged] = seen;
    if (!uncached || !paged) throw new Error('no requests');
    expect(uncached.messages.length).toBeGreaterThan(100);
    expect(uncached.messages.at(-1)).toEqual({ role: 'user', content: 'after restart' });
    expect(uncached.messages.at(-3)).toEqual({ role: 'user', content: 'turn 149' });
    expect(paged.messages.slice(-3)).toEqual([
      { role: 'user', content: 'after restart' },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'after restart' },
    ]);
    const older = paged.messages.slice(0, -3);
    expect(older.length).toBeGreaterThan(100);
    expect(older).toEqual(uncached.messages.slice(0, -1).slice(-older.length));
  });

  it('runs allowed tools, feeds results back and records trajectory evidence', async () => {
    t = await startRuntime({
      tools: [addTool],
      agents: { entries: { calc: { name: 'Calc', tools: ['add'] } } },
    });
    const result = await t.runtime.runTurn({
      agentId: 'calc',
      message: '/tool add {"a":2,"b":3}',
      sessionKey: 'c',
    });
    expect(result.steps).toBe(2);
    expect(result.response).toContain('{"sum":5}');
    const { messages } = await t.runtime.sessions.history('c');
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(messages[1]?.toolCalls?.[0]).toMatchObject({ toolName: 'add', input: { a: 2, b: 3 } });
    expect(messages[2]).toMatchObject({ toolName: 'add', content: '{"sum":5}' });

    const trajectory = readTrajectory(t.dir, 'c');
    expect(trajectory.map((record) => record.type)).toEqual([
      'turn_start',
      'context_budget',
      'tool_call',
      'context_budget',
      'turn_end',
    ]);
    const call = trajectory.find((record) => record.type === 'tool_call');
    expect(call).toMatchObject({ toolName: 'add', ok: true, resultBytes: 9 });
    expect(JSON.stringify(trajectory)).not.toContain('"sum"');
  });

  it('refuses denylisted, unknown and badly-called tools with error results the model sees', async () => {
    const requests: ModelRequest[] = [];
    const script: OfflineScript = (request, { call }) => {
      requests.push(request);
      if (call === 0) {
        return {
          toolCalls: [
            { toolName: 'add', input: { a: 1, b: 1 } },
            { toolName: 'nope', input: {} },
            { toolName: 'explode', input: { reason: 7 } },
            { toolName: 'explode', input: { reason: 'why' } },
          ],
        };
      }
      return { text: 'done' };
    };
    t = await startRuntime({
      tools: [addTool, failingTool],
      offline: { script },
      agents: { toolDenylist: ['add'], entries: { a: { name: 'A', tools: ['*'] } } },
    });
    const result = await t.runtime.runTurn({ agentId: 'a', message: 'go', sessionKey: 'tools' });
    expect(result.endReason).toBe('completed_with_tool_errors');
    expect(result.finishReason).toBe('stop');
    // The denied tool is not even offered ('*' also allows the built-in offload_read).
    expect(requests[0]?.tools.map((tool) => tool.name)).toEqual(['offload_read', 'explode']);
    const kinds = readTrajectory(t.dir, 'tools')
      .filter((record) => record.type === 'tool_call')
      .map((record) => (record.type === 'tool_call' ? [record.toolName, record.ok, record.errorKind] : []));
    expect(kinds).toEqual([
      ['add', false, 'denied'],
      ['nope', false, 'unknown_tool'],
      ['explode', false, 'invalid_input'],
      ['explode', false, 'tool_error'],
    ]);
    const toolMessages = requests[1]?.messages.filter((message) => message.role === 'tool') ?? [];
    expect(toolMessages).toHaveLength(4);
    expect(toolMessages.every((message) => message.role === 'tool' && message.isError)).toBe(true);
    expect(toolMessages[3]?.content).toContain('exploded: why');
    const [index] = readSessionIndex(t.dir);
    expect(index?.toolCalls).toEqual({ ok: 0, failed: 4 });
    expect(index?.outcome).toEqual({
      endReason: 'completed_with_tool_errors',
      degraded: true,
      severity: 'warning',
    });
  });

  it('stops at max steps and still answers every tool call', async () => {
    t = await startRuntime({
      tools: [addTool],
      offline: { script: () => ({ toolCalls: [{ toolName: 'add', input: { a: 1, b: 2 } }] }) },
      agents: { entries: { loop: { name: 'Loop', tools: ['add'], maxSteps: 3 } } },
    });
    const result = await t.runtime.runTurn({ agentId: 'loop', message: 'loop', sessionKey: 'l' });
    expect(result.steps).toBe(3);
    expect(result.endReason).toBe('max_steps');
    expect(result.finishReason).toBe('tool_calls');
    const { messages } = await t.runtime.sessions.history('l');
    expect(messages.filter((message) => message.role === 'tool')).toHaveLength(3);
  });

  it('ends a turn that cannot fit the window as context_exhausted and records the budget', async () => {
    let calls = 0;
    t = await startRuntime({
      offline: {
        script: () => {
          calls++;
          return { text: 'never' };
        },
      },
      agents: { entries: { big: { name: 'Big', systemPrompt: 'x'.repeat(40_000) } } },
    });
    const result = await t.runtime.runTurn({ agentId: 'big', message: 'hi', sessionKey: 'big' });
    expect(calls).toBe(0);
    expect(result.endReason).toBe('context_exhausted');
    expect(result.finishReason).toBe('length');
    expect(result.response).toBe('');
    const budget = readTrajectory(t.dir, 'big').find((record) => record.type === 'context_budget');
    expect(budget?.type === 'context_budget' && budget.budget).toMatchObject({
      windowTokens: 8192,
      rawContextWindowTokens: 8192,
      windowCapSource: 'none',
      systemTokens: 10_000,
      verdict: 'exhausted',
    });
    expect(readSessionIndex(t.dir)[0]?.outcome.endReason).toBe('context_exhausted');
  });

  it('keeps only the newest history that fits the budget', async () => {
    const seen: ModelRequest[] = [];
    t = await startRuntime({
      offline: {
        script: (request) => {
          seen.push(request);
          return { text: 'ok' };
        },
      },
      agents: {
        entries: {
          small: {
            name: 'Small',
            systemPrompt: 'be brief',
            contextBudget: { maxWindowTokens: 1400, minOutputTokens: 64 },
          },
        },
      },
    });
    for (let index = 0; index < 20; index++) {
      await t.runtime.runTurn({
        agentId: 'small',
        message: `message ${index} ${'y'.repeat(160)}`,
        sessionKey: 'w',
      });
    }
    const last = seen.at(-1);
    const users = last?.messages.filter((message) => message.role === 'user') ?? [];
    expect(users.length).toBeGreaterThan(1);
    expect(users.length).toBeLessThan(20);
    expect(users.at(-1)?.content).toContain('message 19');
    expect(users.at(-2)?.content).toContain('message 18');
    const budgets = readTrajectory(t.dir, 'w').filter((record) => record.type === 'context_budget');
    const lastBudget = budgets.at(-1);
    if (lastBudget?.type !== 'context_budget') throw new Error('no budget');
    expect(lastBudget.budget.windowTokens).toBe(1400);
    expect(lastBudget.budget.windowCapSource).toBe('capabilityClass');
    expect(lastBudget.budget.assembledInputTokens + lastBudget.budget.outputHeadroom).toBeLessThanOrEqual(
      1400,
    );
    expect(lastBudget.budget.keptCount).toBe((last?.messages.length ?? 0) - 1);
  });

  it('reports a reply cut at the output limit as output_starved', async () => {
    t = await startRuntime({
      offline: { script: () => ({ text: 'word '.repeat(500) }) },
      agents: { entries: { short: { name: 'Short', maxOutputTokens: 300 } } },
    });
    const result = await t.runtime.runTurn({ agentId: 'short', message: 'talk', sessionKey: 'o' });
    expect(result.endReason).toBe('output_starved');
    expect(result.finishReason).toBe('length');
    expect(result.response.length).toBe(1200);
  });

  it('ends a stalled model as timeout and keeps the partial reply', async () => {
    t = await startRuntime({
      offline: { script: () => ({ text: 'partial answer', delayMs: 5000 }) },
      agents: { entries: { slow: { name: 'Slow', timeouts: { stallMs: 50 } } } },
    });
    const result = await t.runtime.runTurn({ agentId: 'slow', message: 'hurry', sessionKey: 'slow' });
    expect(result.endReason).toBe('timeout');
    expect(result.finishReason).toBe('timeout');
    expect(readSessionIndex(t.dir)[0]?.outcome).toMatchObject({ endReason: 'timeout', degraded: true });
  });

  it('ends a turn at its makespan and stores what was streamed before', async () => {
    t = await startRuntime({
      offline: {
        chunkDelayMs: 30,
        script: () => ({ text: 'one two three four five six seven eight nine ten' }),
      },
    });
    const result = await t.runtime.runTurn({ message: 'go', sessionKey: 'mk', timeoutMs: 100 });
    expect(result.endReason).toBe('timeout');
    expect(result.response.length).toBeGreaterThan(0);
    expect(result.response.length).toBeLessThan('one two three four five six seven eight nine ten'.length);
    const { messages } = await t.runtime.sessions.history('mk');
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(messages[1]?.content).toBe(result.response);
  });

  it('cancels a turn when its signal aborts', async () => {
    t = await startRuntime({ offline: { script: () => ({ text: 'late', delayMs: 5000 }) } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const result = await t.runtime.runTurn({
      message: 'go',
      sessionKey: 'cancel',
      signal: controller.signal,
    });
    expect(result.finishReason).toBe('cancelled');
    expect(result.endReason).toBe('cancelled');
  });

  it('streams deltas and tool progress through onEvent', async () => {
    t = await startRuntime({
      tools: [addTool],
      agents: { entries: { calc: { name: 'Calc', tools: ['add'] } } },
    });
    const events: string[] = [];
    const result = await t.runtime.runTurn({
      agentId: 'calc',
      message: '/tool add {"a":1,"b":1}',
      sessionKey: 'stream',
      onEvent: (event) => events.push(event.type === 'delta' ? `delta:${event.text}` : event.type),
    });
    expect(events.slice(0, 2)).toEqual(['tool-call', 'tool-result']);
    const text = events
      .filter((event) => event.startsWith('delta:'))
      .map((event) => event.slice(6))
      .join('');
    expect(text).toBe(result.response);
    expect(events.filter((event) => event.startsWith('delta:')).length).toBeGreaterThan(2);
  });

  it('serialises turns of one session and runs different sessions in parallel', async () => {
    let active = 0;
    let peak = 0;
    const script: OfflineScript = async () => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((resolve) => setTimeout(resolve, 40));
      active--;
      return { text: 'done' };
    };
    t = await startRuntime({ offline: { script } });
    await Promise.all([1, 2, 3].map((n) => t?.runtime.runTurn({ message: `m${n}`, sessionKey: 'same' })));
    expect(peak).toBe(1);
    const { messages } = await t.runtime.sessions.history('same');
    expect(messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      'm1',
      'm2',
      'm3',
    ]);
    expect(messages.map((message) => message.seq)).toEqual([1, 2, 3, 4, 5, 6]);

    peak = 0;
    await Promise.all([1, 2, 3].map((n) => t?.runtime.runTurn({ message: 'x', sessionKey: `other-${n}` })));
    expect(peak).toBe(3);
  });

  it('writes billing with prices and cache tokens, and aggregates it', async () => {
    t = await startRuntime({
      offline: {
        script: () => ({
          text: 'cached',
          usage: { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 600, cacheWriteTokens: 100 },
        }),
      },
      providers: {
        entries: {
          priced: {
            type: 'offline',
            models: ['m1'],
            prices: {
              inputPerMillion: 3,
              outputPerMillion: 15,
              cacheReadPerMillion: 0.3,
              cacheWritePerMillion: 3.75,
            },
          },
        },
      },
      agents: { entries: { p: { name: 'P', provider: 'priced' } } },
    });
    await t.runtime.runTurn({ agentId: 'p', message: 'one', sessionKey: 'b1' });
    await t.runtime.runTurn({ agentId: 'p', message: 'two', sessionKey: 'b2' });
    // (300*3 + 600*0.3 + 100*3.75 + 100*15) / 1e6 = 0.002955 per turn
    const total = await t.runtime.billing.total();
    expect(total.totalCost).toBeCloseTo(0.00591, 9);
    expect(total.totalTokens).toBe(2200);
    expect(total.callCount).toBe(2);
    expect(total.totalCacheSaved).toBeCloseTo((2 * 600 * 2.7) / 1e6, 9);
    expect((await t.runtime.billing.bySession('b1')).totalCost).toBeCloseTo(0.002955, 9);
    expect((await t.runtime.billing.byAgent('p')).callCount).toBe(2);
    expect((await t.runtime.billing.byAgent('default')).callCount).toBe(0);
    expect((await t.runtime.billing.total(Date.now() + 60_000)).callCount).toBe(0);
    expect(await t.runtime.billing.byProvider()).toEqual({
      providers: [{ provider: 'priced', inputTokens: 2000, outputTokens: 200, estimatedCostUsd: 0.00591 }],
    });
    const hours = await t.runtime.billing.usage24h();
    expect(hours).toHaveLength(24);
    expect(hours.at(-1)).toEqual({ hour: new Date().getUTCHours(), tokens: 2200 });
    expect(await t.runtime.cacheStats('p')).toMatchObject({
      agentId: 'p',
      hits: 2,
      misses: 0,
      hitRate: 1,
      cacheReadTokens: 1200,
    });
  });

  it('writes one session-index row per turn with outcome, cost, tokens and duration', async () => {
    let clock = 1_700_000_000_000;
    t = await startRuntime({ now: () => (clock += 5), randomId: () => 'trace-1' });
    await t.runtime.runTurn({ message: 'hello', sessionKey: 'acme:telegram:bob', origin: 'hook' });
    const [row] = readSessionIndex(t.dir);
    expect(row).toMatchObject({
      traceId: 'trace-1',
      messageId: 'acme:telegram:bob#1',
      sessionKey: 'acme:telegram:bob',
      agentId: 'default',
      channelType: 'webhook',
      chatId: 'telegram',
      origin: 'hook',
      kind: 'hook',
      provider: 'offline',
      model: 'offline',
      finishReason: 'stop',
      outcome: { endReason: 'completed', degraded: false, severity: 'info' },
      synthetic: false,
      steps: 1,
    });
    expect(row?.durationMs).toBeGreaterThan(0);
    expect(row?.tokens.total).toBeGreaterThan(0);
  });

  it('records a provider failure as an error turn and rethrows it', async () => {
    const logger = recordingLogger();
    t = await startRuntime({
      logger,
      offline: {
        script: () => {
          throw new AgentRuntimeError('PROVIDER_AUTH', 'Provider offline: credential refused (HTTP 401)');
        },
      },
    });
    await expect(t.runtime.runTurn({ message: 'hi', sessionKey: 'err' })).rejects.toMatchObject({
      code: 'PROVIDER_AUTH',
    });
    const [row] = readSessionIndex(t.dir);
    expect(row?.outcome).toEqual({ endReason: 'error', degraded: true, severity: 'error' });
    expect(row?.errorCode).toBe('PROVIDER_AUTH');
    const warn = logger.entries.find((entry) => entry.level === 'warn');
    expect(warn?.fields).toMatchObject({ errorKind: 'auth' });
    expect(typeof warn?.fields.hint).toBe('string');
  });
});

describe('AgentRuntime.agents', () => {
  it('has a built-in default agent and creates, updates and deletes others, persisting patches', async () => {
    const patches: unknown[] = [];
    t = await startRuntime({ persistAgents: async (entries) => void patches.push(entries) });
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
    expect(() => t?.runtime.agents.get('support-bot')).toThrow(/Agent not found: support-bot/);
    await expect(t.runtime.agents.delete('default')).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });

    expect(patches).toEqual([
      { 'support-bot': { name: 'Support Bot', systemPrompt: 'help' } },
      { 'support-bot': { maxSteps: 3 } },
      { 'support-bot': null },
    ]);
  });

  it('refuses new messages while suspended, lets in-flight turns finish, and resumes', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    t = await startRuntime({
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
    t = await startRuntime({
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
    t = await startRuntime({
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

  it('lists models without keys and resolves a secret reference only when a turn needs it', async () => {
    t = await startRuntime({
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

describe('AgentRuntime.sessions', () => {
  it('reports status, lists, exports and searches sessions', async () => {
    t = await startRuntime();
    await t.runtime.runTurn({ message: 'tell me about pineapples', sessionKey: 'fruit' });
    await t.runtime.runTurn({ message: 'and bicycles', sessionKey: 'wheels', origin: 'cron' });
    const status = await t.runtime.sessions.status('fruit');
    expect(status).toMatchObject({
      sessionKey: 'fruit',
      agentId: 'default',
      model: 'offline',
      provider: 'offline',
      stepsExecuted: 1,
      stepLimit: 8,
      messageCount: 2,
    });
    expect(await t.runtime.sessions.list({ kind: 'cron' })).toEqual([
      expect.objectContaining({ sessionKey: 'wheels', kind: 'cron' }),
    ]);
    expect((await t.runtime.sessions.list()).map((row) => row.sessionKey).sort()).toEqual([
      'fruit',
      'wheels',
    ]);
    const exported = await t.runtime.sessions.export('fruit');
    expect(exported).toMatchObject({
      sessionKey: 'fruit',
      messageCount: 2,
      metadata: { agentId: 'default', channelType: 'webchat' },
    });
    expect(exported.messages).toHaveLength(2);
    const hits = await t.runtime.sessions.search('pineapples');
    expect(hits).toEqual([
      expect.objectContaining({
        sessionKey: 'fruit',
        agentId: 'default',
        channelType: 'webchat',
        snippet: expect.stringContaining('[pineapples]'),
      }),
    ]);
    expect(await t.runtime.sessions.search('   ')).toEqual([]);
    await expect(t.runtime.sessions.status('missing')).rejects.toMatchObject({
      code: 'SESSION_NOT_FOUND',
      message: 'Session not found: missing',
    });
  });

  it('resets messages but keeps the session, and deletes sessions returning the transcript', async () => {
    const cleared: string[] = [];
    t = await startRuntime({
      approvals: {
        clearSession: (key) => {
          cleared.push(key);
          return 1;
        },
      },
    });
    await t.runtime.runTurn({ message: 'one', sessionKey: 'r' });
    expect(await t.runtime.sessions.reset('r')).toEqual({
      sessionKey: 'r',
      reset: true,
      previousMessageCount: 2,
    });
    expect(cleared).toEqual(['r']);
    expect((await t.runtime.sessions.history('r')).messages).toEqual([]);
    expect(await t.runtime.sessions.search('one')).toEqual([]);
    const status = await t.runtime.sessions.status('r');
    expect(status.turns).toBe(1);
    await t.runtime.runTurn({ message: 'two', sessionKey: 'r' });
    expect((await t.runtime.sessions.history('r')).messages[0]?.seq).toBe(3);

    const deleted = await t.runtime.sessions.delete('r');
    expect(deleted).toMatchObject({
      sessionKey: 'r',
      deleted: true,
      transcript: { sessionKey: 'r', messageCount: 2 },
    });
    await expect(t.runtime.sessions.history('r')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    await expect(t.runtime.sessions.delete('r')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  });

  it('resets a conversation with counts only and memory deletion when asked', async () => {
    const deletions: unknown[] = [];
    t = await startRuntime({
      memory: {
        deleteBySession: async (input) => {
          deletions.push(input);
          return 3;
        },
      },
    });
    await t.runtime.runTurn({ message: 'one', sessionKey: 'rc' });
    await t.runtime.runTurn({ message: 'two', sessionKey: 'rc' });
    expect(await t.runtime.sessions.resetConversation('rc')).toEqual({
      sessionKey: 'rc',
      lcdRowsDeleted: 4,
      sessionMessagesCleared: 4,
      runtimeSessionDestroyed: true,
    });
    expect(await t.runtime.sessions.resetConversation('rc', { memory: true, purgeDerived: true })).toEqual({
      sessionKey: 'rc',
      lcdRowsDeleted: 0,
      sessionMessagesCleared: 0,
      memoriesDeleted: 3,
      runtimeSessionDestroyed: true,
    });
    expect(deletions).toEqual([{ agentId: 'default', sessionKey: 'rc', purgeDerived: true }]);
    expect(await t.runtime.sessions.resetConversation('never-existed')).toMatchObject({
      lcdRowsDeleted: 0,
      sessionMessagesCleared: 0,
    });
  });

  it('reports a failed memory deletion as zero and keeps the transcript reset', async () => {
    t = await startRuntime({
      memory: { deleteBySession: async () => Promise.reject(new Error('memory down')) },
    });
    await t.runtime.runTurn({ message: 'one', sessionKey: 'mf' });
    expect(await t.runtime.sessions.resetConversation('mf', { memory: true })).toMatchObject({
      sessionMessagesCleared: 2,
      memoriesDeleted: 0,
    });
  });

  it('compacts old history into a summary that replaces it in later context', async () => {
    const seen: ModelRequest[] = [];
    t = await startRuntime({
      offline: {
        script: (request) => {
          seen.push(request);
          return request.purpose === 'compaction' ? undefined : { text: `reply ${seen.length}` };
        },
      },
    });
    for (const word of ['alpha', 'beta', 'gamma', 'delta'])
      await t.runtime.runTurn({ message: word, sessionKey: 'cp' });
    const result = await t.runtime.sessions.compact('cp');
    expect(result).toMatchObject({
      sessionKey: 'cp',
      compacted: true,
      messagesSummarized: 4,
      keptMessages: 4,
    });
    expect(result.tokensUsed.total).toBeGreaterThan(0);
    const compaction = seen.find((request) => request.purpose === 'compaction');
    expect(compaction?.messages[0]?.content).toContain('alpha');
    expect(compaction?.messages[0]?.content).not.toContain('gamma');

    await t.runtime.runTurn({ message: 'epsilon', sessionKey: 'cp' });
    const next = seen.at(-1);
    expect(next?.system).toContain('Summary of the earlier conversation');
    expect(next?.system).toContain('alpha');
    expect(
      next?.messages.map((message) => message.content).filter((text) => ['alpha', 'beta'].includes(text)),
    ).toEqual([]);
    expect(next?.messages[0]).toEqual({ role: 'user', content: 'gamma' });
    // The raw history still holds every message; the export names the summary.
    expect((await t.runtime.sessions.history('cp')).messages).toHaveLength(10);
    expect((await t.runtime.sessions.export('cp')).metadata.summary).toContain('Summary');
    expect((await t.runtime.billing.bySession('cp')).callCount).toBe(6);

    const small = await t.runtime.sessions.compact('cp');
    expect(small.compacted).toBe(true);
    await t.runtime.runTurn({ message: 'one', sessionKey: 'tiny' });
    expect(await t.runtime.sessions.compact('tiny')).toMatchObject({
      compacted: false,
      reason: 'too little history to compact',
    });
  });
});

describe('createAgentRuntime recall', () => {
  const recalledRecord = {
    lanes: ['fts', 'vector'] as Array<'fts' | 'vector'>,
    ftsCandidates: 3,
    vectorCandidates: 2,
    reranked: false,
    rerankFellBack: false,
    degraded: false,
  };
  const recallAgents = (memory: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    entries: { mem: { name: 'Mem', systemPrompt: 'Be brief.', memory, ...extra } },
  });

  it('puts the recalled memories into the system side of the context and records counts and lanes', async () => {
    const seen: ModelRequest[] = [];
    const asked: Array<Record<string, unknown>> = [];
    const block = 'Relevant memories (most relevant first):\n- the user keeps a kiwi named Pip';
    t = await startRuntime({
      agents: recallAgents({ autoRecall: true }),
      offline: {
        script: (request) => {
          seen.push(request);
          return { text: 'ok' };
        },
      },
      recall: {
        recall: async (request) => {
          asked.push({ ...request });
          return { context: block, entries: [{ id: 'mem_1' }], record: recalledRecord };
        },
      },
    });
    await t.runtime.runTurn({ agentId: 'mem', message: 'what is my bird called?', sessionKey: 'r1' });
    expect(asked).toEqual([
      {
        agentId: 'mem',
        sessionKey: 'r1',
        message: 'what is my bird called?',
        signal: expect.any(AbortSignal),
      },
    ]);
    expect(seen[0]?.system).toBe(`Be brief.\n\n${block}`);
    expect(seen[0]?.messages).toEqual([{ role: 'user', content: 'what is my bird called?' }]);

    const [row] = readSessionIndex(t.dir);
    expect(row?.recall).toEqual({
      ok: true,
      lanes: ['fts', 'vector'],
      finalCount: 1,
      ftsCandidates: 3,
      vectorCandidates: 2,
      reranked: false,
      rerankFellBack: false,
      degraded: false,
      injectedTokens: expect.any(Number),
      durationMs: expect.any(Number),
    });
    const budget = readTrajectory(t.dir, 'r1').find((record) => record.type === 'context_budget');
    expect(budget?.type === 'context_budget' && budget.budget.recallTokens).toBe(row?.recall?.injectedTokens);
    expect(row?.recall?.injectedTokens).toBeGreaterThan(block.length / 4 - 1);
    // The memories count as system tokens, so the budget figures add up to what was sent.
    expect(budget?.type === 'context_budget' && budget.budget.systemTokens).toBe(
      Math.ceil(`Be brief.\n\n${block}`.length / 4),
    );
  });

  it('does not recall for agents that leave memory.autoRecall off', async () => {
    let calls = 0;
    t = await startRuntime({
      agents: recallAgents({ autoRecall: false }),
      recall: {
        recall: async () => {
          calls++;
          return { context: 'Relevant memories:\n- x', entries: [{}], record: recalledRecord };
        },
      },
    });
    await t.runtime.runTurn({ agentId: 'mem', message: 'hello', sessionKey: 'r2' });
    await t.runtime.runTurn({ message: 'hello', sessionKey: 'r3' });
    expect(calls).toBe(0);
    expect(readSessionIndex(t.dir).map((row) => row.recall)).toEqual([undefined, undefined]);
    expect(t.runtime.agents.get('mem').memory).toEqual({ autoRecall: false, recallTimeoutMs: 2000 });
  });

  it('keeps only the memory lines that fit the room history would get', async () => {
    const seen: ModelRequest[] = [];
    const first = `- ${'a'.repeat(398)}`;
    const second = `- ${'b'.repeat(398)}`;
    t = await startRuntime({
      // 1200-token window, 1024 output: about 160 tokens are left after prompt and message.
      agents: recallAgents({ autoRecall: true }, { contextBudget: { maxWindowTokens: 1200 } }),
      offline: {
        script: (request) => {
          seen.push(request);
          return { text: 'ok' };
        },
      },
      recall: {
        recall: async () => ({
          context: `Relevant memories (most relevant first):\n${first}\n${second}`,
          entries: [{}, {}],
          record: recalledRecord,
        }),
      },
    });
    const result = await t.runtime.runTurn({ agentId: 'mem', message: 'hi', sessionKey: 'r4' });
    expect(result.endReason).toBe('completed');
    expect(seen[0]?.system).toContain(first);
    expect(seen[0]?.system).not.toContain(second);
    const budget = readTrajectory(t.dir, 'r4').find((record) => record.type === 'context_budget');
    expect(budget?.type === 'context_budget' && budget.budget.verdict).toBe('fits');
    const [row] = readSessionIndex(t.dir);
    expect(row?.recall?.finalCount).toBe(2);
    expect(row?.recall?.injectedTokens).toBeGreaterThan(100);
    expect(row?.recall?.injectedTokens).toBeLessThan(200);
  });

  it('runs the turn without memories and logs a warn when recall fails', async () => {
    const logger = recordingLogger();
    const seen: ModelRequest[] = [];
    t = await startRuntime({
      agents: recallAgents({ autoRecall: true }),
      logger,
      offline: {
        script: (request) => {
          seen.push(request);
          return { text: 'fine' };
        },
      },
      recall: {
        recall: async () => {
          throw new Error('embedder unreachable');
        },
      },
    });
    const result = await t.runtime.runTurn({ agentId: 'mem', message: 'hello', sessionKey: 'r5' });
    expect(result).toMatchObject({ response: 'fine', endReason: 'completed' });
    expect(seen[0]?.system).toBe('Be brief.');
    const warn = logger.entries.find((entry) => entry.message === 'auto recall failed');
    expect(warn?.level).toBe('warn');
    expect(warn?.fields).toMatchObject({ agentId: 'mem', errorKind: 'dependency', hint: expect.any(String) });
    const [row] = readSessionIndex(t.dir);
    expect(row?.recall).toMatchObject({
      ok: false,
      errorKind: 'dependency',
      finalCount: 0,
      injectedTokens: 0,
    });
    expect(row?.outcome.degraded).toBe(false);
  });

  it('abandons a recall slower than memory.recallTimeoutMs and aborts its signal', async () => {
    const logger = recordingLogger();
    let signal: AbortSignal | undefined;
    t = await startRuntime({
      agents: recallAgents({ autoRecall: true, recallTimeoutMs: 50 }),
      logger,
      recall: {
        recall: (request) => {
          signal = request.signal;
          return new Promise((_, reject) => {
            request.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
          });
        },
      },
    });
    const result = await t.runtime.runTurn({ agentId: 'mem', message: 'hello', sessionKey: 'r6' });
    expect(result.endReason).toBe('completed');
    expect(signal?.aborted).toBe(true);
    const warn = logger.entries.find((entry) => entry.message === 'auto recall timed out');
    expect(warn?.fields).toMatchObject({
      errorKind: 'timeout',
      hint: expect.stringContaining('recallTimeoutMs'),
    });
    expect(readSessionIndex(t.dir)[0]?.recall).toMatchObject({ ok: false, errorKind: 'timeout' });
  });

  it('forgets the session recall state on session reset and delete', async () => {
    const forgotten: string[] = [];
    t = await startRuntime({
      agents: recallAgents({ autoRecall: true }),
      recall: {
        recall: async () => ({
          context: undefined,
          entries: [],
          record: { ...recalledRecord, lanes: ['fts'] },
        }),
        forget: (sessionKey) => forgotten.push(sessionKey),
      },
    });
    await t.runtime.runTurn({ agentId: 'mem', message: 'hello', sessionKey: 'r7' });
    expect(readSessionIndex(t.dir)[0]?.recall).toMatchObject({ ok: true, lanes: ['fts'], finalCount: 0 });
    await t.runtime.sessions.reset('r7');
    await t.runtime.sessions.delete('r7');
    expect(forgotten).toEqual(['r7', 'r7']);
  });
});
