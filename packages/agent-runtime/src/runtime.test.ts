import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { addTool, failingTool, startRuntime } from '../test/helpers.js';
import type { OfflineScript } from './offline-provider.js';

describe('createAgentRuntime wiring', () => {
  it('registers tools beside the built-in offload_read and refuses a taken or bad name', async () => {
    const t = await startRuntime({ tools: [addTool] });
    expect(t.runtime.toolNames()).toEqual(['add', 'offload_read']);
    t.runtime.registerTools([failingTool]);
    expect(t.runtime.toolNames()).toEqual(['add', 'explode', 'offload_read']);
    expect(() => t.runtime.registerTools([addTool])).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        message: 'registerTools: tool already registered: add',
      }),
    );
    expect(() => t.runtime.registerTools([{ ...addTool, name: 'no spaces' }])).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    expect(() =>
      t.runtime.registerTools([{ ...addTool, name: 'weird', params: z.custom<{ a: number; b: number }>() }]),
    ).not.toThrow();
  });

  it('invokeTool runs a call outside a turn through the gate chain and never throws for a failure', async () => {
    const seen: string[] = [];
    const t = await startRuntime({
      tools: [addTool, failingTool],
      agents: { entries: { calc: { name: 'Calc', tools: ['add', 'explode'] } } },
      toolGates: [
        {
          name: 'spy',
          before: (call) => {
            seen.push(`${call.agentId}:${call.sessionKey}:${call.toolName}`);
            return { allow: true };
          },
        },
      ],
    });
    const signal = new AbortController().signal;
    const call = { agentId: 'calc', sessionKey: 'default:subagent:r1', signal };
    expect(await t.runtime.invokeTool({ ...call, toolName: 'add', input: { a: 2, b: 3 } })).toEqual({
      ok: true,
      value: { sum: 5 },
    });
    expect(seen).toEqual(['calc:default:subagent:r1:add']);
    expect(
      await t.runtime.invokeTool({ ...call, toolName: 'explode', input: { reason: 'x' } }),
    ).toMatchObject({
      ok: false,
      errorKind: 'tool_error',
      message: expect.stringContaining('exploded: x'),
    });
    // The allow-list gate refuses what the agent may not call, and the handler never runs.
    expect(await t.runtime.invokeTool({ ...call, toolName: 'offload_read', input: {} })).toMatchObject({
      ok: false,
    });
    expect(
      await t.runtime.invokeTool({ ...call, agentId: 'ghost', toolName: 'add', input: {} }),
    ).toMatchObject({
      ok: false,
      errorKind: 'unknown_agent',
    });
  });

  it('unregisterTools withdraws tools by name, ignores unknown names, and frees the name for a new tool', async () => {
    const t = await startRuntime({ tools: [addTool, failingTool] });
    t.runtime.unregisterTools(['explode', 'never-registered']);
    expect(t.runtime.toolNames()).toEqual(['add', 'offload_read']);
    t.runtime.registerTools([failingTool]);
    expect(t.runtime.toolNames()).toEqual(['add', 'explode', 'offload_read']);
  });

  it('useMemory switches recall and the memory tools on and off for the next turn', async () => {
    const asked: string[] = [];
    const recall = {
      recall: async (request: { message: string }) => {
        asked.push(request.message);
        return {
          context: undefined,
          entries: [],
          record: {
            lanes: [],
            ftsCandidates: 0,
            vectorCandidates: 0,
            reranked: false,
            rerankFellBack: false,
            degraded: false,
          },
        };
      },
    };
    const deleted: string[] = [];
    const memory = {
      deleteBySession: async (input: { sessionKey: string }) => {
        deleted.push(input.sessionKey);
        return 0;
      },
    };
    const memoryTool = { ...addTool, name: 'memory_search' };
    const t = await startRuntime({
      agents: { entries: { mem: { name: 'Mem', memory: { autoRecall: true } } } },
    });
    await t.runtime.runTurn({ agentId: 'mem', message: 'before', sessionKey: 'm1' });
    t.runtime.useMemory({ memory, recall, tools: [memoryTool] });
    expect(t.runtime.toolNames()).toEqual(['memory_search', 'offload_read']);
    await t.runtime.runTurn({ agentId: 'mem', message: 'on', sessionKey: 'm1' });
    await t.runtime.sessions.resetConversation('m1', { memory: true });
    t.runtime.useMemory(undefined);
    expect(t.runtime.toolNames()).toEqual(['offload_read']);
    await t.runtime.runTurn({ agentId: 'mem', message: 'off', sessionKey: 'm2' });
    await t.runtime.sessions.resetConversation('m2', { memory: true });
    expect(asked).toEqual(['on']);
    expect(deleted).toEqual(['m1']);
    // Switching on again registers the same tool names without a clash.
    t.runtime.useMemory({ memory, recall, tools: [memoryTool] });
    expect(t.runtime.toolNames()).toEqual(['memory_search', 'offload_read']);
  });

  it('applies a new agents, providers and contextEngine config to the next turn', async () => {
    const t = await startRuntime();
    expect(t.runtime.agents.list()).toEqual(['default']);
    t.runtime.applyConfig({
      providers: { entries: { local: { type: 'offline', models: ['small'] } } },
      agents: { entries: { helper: { name: 'Helper', provider: 'local' } } },
    });
    expect(t.runtime.agents.list()).toEqual(['default', 'helper']);
    const result = await t.runtime.runTurn({ agentId: 'helper', message: 'hi', sessionKey: 'ac' });
    expect(result.finishReason).toBe('stop');
    expect(await t.runtime.sessions.status('ac')).toMatchObject({ provider: 'local', model: 'small' });
    expect(() =>
      t.runtime.applyConfig({ contextEngine: { budget: { effectiveContextCapSmall: -1 } } }),
    ).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        message: expect.stringContaining('applyConfig.contextEngine'),
      }),
    );
  });

  it('counts turns in flight and, once closed, waits for them and refuses new ones', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const script: OfflineScript = async () => {
      await gate;
      return { text: 'late' };
    };
    const t = await startRuntime({ offline: { script } });
    const running = t.runtime.runTurn({ message: 'wait', sessionKey: 'cl' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(t.runtime.inFlight).toBe(1);
    const closing = t.runtime.close();
    await expect(t.runtime.runTurn({ message: 'later', sessionKey: 'cl2' })).rejects.toMatchObject({
      code: 'CLOSED',
    });
    release();
    await closing;
    expect((await running).response).toBe('late');
    expect(t.runtime.inFlight).toBe(0);
  });
});
