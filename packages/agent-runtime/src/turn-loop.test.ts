import { describe, expect, it } from 'vitest';
import {
  addTool,
  calcAgentOptions,
  recordingScript,
  readSessionIndex,
  readTrajectory,
  startRuntime,
} from '../test/helpers.js';
import type { OfflineScript } from './offline-provider.js';
import type { ModelRequest } from './provider.js';

describe('createAgentRuntime', () => {
  it('runs a turn through the offline provider and returns the contract result', async () => {
    const t = await startRuntime();
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

  it('runs a turn named by a turn key once: a repeat answers the committed result without a model call', async () => {
    const seen: ModelRequest[] = [];
    const t = await startRuntime({ offline: { script: recordingScript(seen, 'the one answer') } });
    const first = await t.runtime.runTurn({ message: 'do it', sessionKey: 'hook:k', turnKey: 'queue:7' });
    const repeat = await t.runtime.runTurn({ message: 'do it', sessionKey: 'hook:k', turnKey: 'queue:7' });
    expect(repeat).toEqual({
      response: 'the one answer',
      tokensUsed: first.tokensUsed,
      finishReason: 'stop',
      endReason: 'completed',
      steps: 1,
      sessionKey: 'hook:k',
      traceId: first.traceId,
    });
    expect(seen).toHaveLength(1);
    const { messages } = await t.runtime.sessions.history('hook:k');
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    await t.runtime.runTurn({ message: 'do it', sessionKey: 'hook:k', turnKey: 'queue:8' });
    expect(seen).toHaveLength(2);
    // Deleting the session deletes the answers kept under its turn keys too.
    await t.runtime.sessions.delete('hook:k');
    expect(await t.db.query('SELECT turn_key FROM agent_turn_keys')).toEqual([]);
  });

  it('keeps no turn key for a turn that did not finish, so it can run again', async () => {
    const t = await startRuntime({ offline: { script: () => ({ text: 'slow', delayMs: 5000 }) } });
    const cancel = new AbortController();
    const stopped = t.runtime.runTurn({
      message: 'x',
      sessionKey: 'hook:c',
      turnKey: 'q:1',
      signal: cancel.signal,
    });
    setTimeout(() => cancel.abort(), 50);
    expect((await stopped).finishReason).toBe('cancelled');
    expect(
      await t.runtime.runTurn({ message: 'x', sessionKey: 'hook:c', turnKey: 'q:1', timeoutMs: 100 }),
    ).toMatchObject({
      finishReason: 'timeout',
    });
  });

  it('creates the session implicitly and persists both messages in order', async () => {
    const t = await startRuntime();
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

  it('stops at max steps and still answers every tool call', async () => {
    const t = await startRuntime({
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
    const t = await startRuntime({
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

  it('budgets a Chinese system prompt at about a token per character and says how it counted', async () => {
    // 12,000 characters: 3,000 tokens at characters/4 would fit the 8,192 window; the real
    // count (about one per character) does not.
    const t = await startRuntime({
      offline: { script: () => ({ text: 'never' }) },
      agents: {
        entries: { zh: { name: 'Zh', systemPrompt: '会议讨论了发布计划'.repeat(1_333) + '。'.repeat(3) } },
      },
    });
    const result = await t.runtime.runTurn({ agentId: 'zh', message: '你好', sessionKey: 'zh' });
    expect(result.endReason).toBe('context_exhausted');
    const budget = readTrajectory(t.dir, 'zh').find((record) => record.type === 'context_budget');
    expect(budget?.type === 'context_budget' && budget.budget).toMatchObject({
      systemTokens: 12_000,
      verdict: 'exhausted',
      tokenCounting: 'estimate',
    });
  });

  it('reports a reply cut at the output limit as output_starved', async () => {
    const t = await startRuntime({
      offline: { script: () => ({ text: 'word '.repeat(500) }) },
      agents: { entries: { short: { name: 'Short', maxOutputTokens: 300 } } },
    });
    const result = await t.runtime.runTurn({ agentId: 'short', message: 'talk', sessionKey: 'o' });
    expect(result.endReason).toBe('output_starved');
    expect(result.finishReason).toBe('length');
    expect(result.response.length).toBe(1200);
  });

  it('ends a stalled model as timeout and keeps the partial reply', async () => {
    const t = await startRuntime({
      offline: { script: () => ({ text: 'partial answer', delayMs: 5000 }) },
      agents: { entries: { slow: { name: 'Slow', timeouts: { stallMs: 50 } } } },
    });
    const result = await t.runtime.runTurn({ agentId: 'slow', message: 'hurry', sessionKey: 'slow' });
    expect(result.endReason).toBe('timeout');
    expect(result.finishReason).toBe('timeout');
    expect(readSessionIndex(t.dir)[0]?.outcome).toMatchObject({ endReason: 'timeout', degraded: true });
  });

  it('ends a turn at its makespan and stores what was streamed before', async () => {
    const t = await startRuntime({
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
    const t = await startRuntime({ offline: { script: () => ({ text: 'late', delayMs: 5000 }) } });
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
    const t = await startRuntime(calcAgentOptions);
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
    const t = await startRuntime({ offline: { script } });
    await Promise.all([1, 2, 3].map((n) => t.runtime.runTurn({ message: `m${n}`, sessionKey: 'same' })));
    expect(peak).toBe(1);
    const { messages } = await t.runtime.sessions.history('same');
    expect(messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      'm1',
      'm2',
      'm3',
    ]);
    expect(messages.map((message) => message.seq)).toEqual([1, 2, 3, 4, 5, 6]);

    peak = 0;
    await Promise.all([1, 2, 3].map((n) => t.runtime.runTurn({ message: 'x', sessionKey: `other-${n}` })));
    expect(peak).toBe(3);
  });

  it('takes injected messages at the next step boundary of the running turn, after the tool results', async () => {
    const seen: ModelRequest[] = [];
    const queue: string[] = [];
    // The "steer" arrives while the first step's tool runs: the tool itself queues it.
    const slowAdd = {
      ...addTool,
      handler: async (input: { a: number; b: number }) => {
        if (input.a === 1) queue.push('change of plan: stop adding');
        return addTool.handler(input, {} as never);
      },
    };
    const script: OfflineScript = (request) => {
      seen.push(request);
      if (seen.length === 1) return { toolCalls: [{ toolName: 'add', input: { a: 1, b: 2 } }] };
      if (seen.length === 2) return { toolCalls: [{ toolName: 'add', input: { a: 5, b: 5 } }] };
      // Arrives during the last model call: not taken by this turn, left for its owner.
      queue.push('too late for this turn');
      return { text: 'stopped' };
    };
    const t = await startRuntime({
      tools: [slowAdd],
      offline: { script },
      agents: { entries: { calc: { name: 'Calc', tools: ['add'] } } },
    });
    const result = await t.runtime.runTurn({
      agentId: 'calc',
      message: 'add things',
      sessionKey: 'steer:s',
      injections: () => queue.splice(0),
    });
    expect(result.steps).toBe(3);
    expect(result.response).toBe('stopped');
    const roles = (request: ModelRequest | undefined) =>
      request?.messages.map((message) => `${message.role}:${message.role === 'tool' ? '' : message.content}`);
    expect(roles(seen[0])).toEqual(['user:add things']);
    // Step 2 of the same turn sees the tool result, then the injected message.
    expect(roles(seen[1])).toEqual([
      'user:add things',
      'assistant:',
      'tool:',
      'user:change of plan: stop adding',
    ]);
    expect(roles(seen[2])?.filter((entry) => entry.startsWith('user:'))).toEqual([
      'user:add things',
      'user:change of plan: stop adding',
    ]);
    expect(queue).toEqual(['too late for this turn']);
    // The transcript keeps the injected message where the model saw it.
    const { messages } = await t.runtime.sessions.history('steer:s');
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(messages[3]?.content).toBe('change of plan: stop adding');
  });
});
