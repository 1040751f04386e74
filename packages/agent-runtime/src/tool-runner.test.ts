import { describe, expect, it } from 'vitest';
import {
  addTool,
  calcAgentOptions,
  failingTool,
  readSessionIndex,
  readTrajectory,
  runAddTurn,
  startRuntime,
} from '../test/helpers.js';
import { z } from 'zod';
import { agentsSectionSchema } from './config.js';
import type { OfflineScript } from './offline-provider.js';
import type { ModelRequest } from './provider.js';

describe('createAgentRuntime', () => {
  it('runs allowed tools, feeds results back and records trajectory evidence', async () => {
    const t = await startRuntime(calcAgentOptions);
    const result = await runAddTurn(t, 'c');
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

  it('offers a tool with its own agents list only to those agents and refuses it to the others', async () => {
    // Agent a's turn makes calls 0 and 1, agent b's calls 2 and 3.
    const requests: string[][] = [];
    const script: OfflineScript = (request, { call }) => {
      requests.push(request.tools.map((tool) => tool.name));
      return call % 2 === 0 ? { toolCalls: [{ toolName: 'add', input: { a: 1, b: 2 } }] } : { text: 'done' };
    };
    const t = await startRuntime({
      tools: [{ ...addTool, agents: ['a'] }],
      offline: { script },
      agents: {
        entries: {
          a: { name: 'A', tools: ['add'] },
          b: { name: 'B', tools: ['add'] },
        },
      },
    });
    const first = await t.runtime.runTurn({ agentId: 'a', message: 'go', sessionKey: 'only-a' });
    expect(first.endReason).toBe('completed');
    const second = await t.runtime.runTurn({ agentId: 'b', message: 'go', sessionKey: 'only-b' });
    expect(second.endReason).toBe('completed_with_tool_errors');
    expect(requests[0]).toEqual(['add']);
    expect(requests[2]).toEqual([]);
    const refused = readTrajectory(t.dir, 'only-b').find((record) => record.type === 'tool_call');
    expect(refused).toMatchObject({ toolName: 'add', ok: false, errorKind: 'denied' });
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
    const t = await startRuntime({
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

  it('matches tool lists by glob: a suffix, a part and one character deny what they name', async () => {
    const named = (name: string) => ({
      name,
      description: name,
      params: z.object({}),
      handler: async () => ({ ran: name }),
    });
    const offeredTools: string[][] = [];
    const script: OfflineScript = (request, { call }) => {
      offeredTools.push(request.tools.map((tool) => tool.name));
      if (call > 0) return { text: 'done' };
      return {
        toolCalls: ['file_delete', 'memory_search', 'file_read'].map((toolName) => ({ toolName, input: {} })),
      };
    };
    const t = await startRuntime({
      tools: ['file_delete', 'file_read', 'memory_search', 'mem_search', 'browser_login_form'].map(named),
      offline: { script },
      agents: {
        toolDenylist: ['*_delete'],
        entries: { a: { name: 'A', tools: ['*'], toolDenylist: ['mem?ry_*', '*login*'] } },
      },
    });
    await t.runtime.runTurn({ agentId: 'a', message: 'go', sessionKey: 'globs' });
    expect(offeredTools[0]).toEqual(['offload_read', 'file_read', 'mem_search']);
    const calls = readTrajectory(t.dir, 'globs')
      .filter((record) => record.type === 'tool_call')
      .map((record) => (record.type === 'tool_call' ? [record.toolName, record.errorKind ?? 'ok'] : []));
    expect(calls).toEqual([
      ['file_delete', 'denied'],
      ['memory_search', 'denied'],
      ['file_read', 'ok'],
    ]);
  });

  it('refuses a tool pattern outside the glob syntax when the config is read, naming the field', () => {
    const parsed = agentsSectionSchema.safeParse({
      toolDenylist: ['shell exec'],
      entries: { a: { name: 'A', tools: ['memory_*', 'files/read'], toolDenylist: ['[a-z]*'] } },
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path.join('.')).sort()).toEqual([
      'entries.a.toolDenylist.0',
      'entries.a.tools.1',
      'toolDenylist.0',
    ]);
    expect(parsed.error?.issues[0]?.message).toContain('glob');
  });

  it('ends a tool call past timeouts.toolMs as a tool timeout, with the handler told why', async () => {
    let reason: unknown;
    const stuck = {
      name: 'stuck',
      description: 'Never answers',
      params: z.object({}),
      // Ignores its signal: the runner must not wait for it.
      handler: (_params: unknown, context: { signal: AbortSignal }) =>
        new Promise<never>(() => {
          context.signal.addEventListener('abort', () => {
            reason = context.signal.reason;
          });
        }),
    };
    const script: OfflineScript = (_request, { call }) =>
      call === 0 ? { toolCalls: [{ toolName: 'stuck', input: {} }] } : { text: 'done' };
    const t = await startRuntime({
      tools: [stuck],
      offline: { script },
      agents: { entries: { a: { name: 'A', tools: ['stuck'], timeouts: { toolMs: 50 } } } },
    });
    const result = await t.runtime.runTurn({ agentId: 'a', message: 'go', sessionKey: 'slow' });
    expect(result.endReason).toBe('completed_with_tool_errors');
    const call = readTrajectory(t.dir, 'slow').find((record) => record.type === 'tool_call');
    expect(call).toMatchObject({ toolName: 'stuck', ok: false, errorKind: 'timeout' });
    expect(call?.type === 'tool_call' ? call.errorPreview : '').toBe('Tool stuck exceeded 50 ms');
    // A timeout, not a cancellation of the turn nor a provider's timeout.
    expect((reason as Error | undefined)?.name).toBe('TimeoutError');
    const { messages } = await t.runtime.sessions.history('slow');
    expect(messages.find((message) => message.role === 'tool')?.content).toBe(
      JSON.stringify({ error: 'Tool stuck exceeded 50 ms' }),
    );
  });

  it('runs a turn of twelve tool calls without piling listeners on the turn signal', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const script: OfflineScript = (_request, { call }) =>
        call === 0
          ? {
              toolCalls: Array.from({ length: 12 }, (_, index) => ({
                toolName: 'add',
                input: { a: index, b: 1 },
              })),
            }
          : { text: 'done' };
      const t = await startRuntime({ ...calcAgentOptions, offline: { script } });
      const result = await t.runtime.runTurn({ agentId: 'calc', message: 'go', sessionKey: 'many' });
      expect(result.endReason).toBe('completed');
      const calls = readTrajectory(t.dir, 'many').filter((record) => record.type === 'tool_call');
      expect(calls).toHaveLength(12);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.includes('MaxListenersExceeded'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
