import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readTrajectory, recordingLogger, startRuntime } from '../test/helpers.js';
import type { OfflineScript } from './offline-provider.js';
import { ToolBreakers } from './tool-breaker.js';
import type { AgentTool, EventSink } from './types.js';

const settings = { failureThreshold: 3, cooldownMs: 1000 };

describe('ToolBreakers', () => {
  it('opens after the threshold of consecutive unhealthy failures and refuses until the cooldown ends', () => {
    const breakers = new ToolBreakers();
    expect(breakers.record('s', 'web', settings, 'tool_error', 0)).toBeUndefined();
    expect(breakers.record('s', 'web', settings, 'timeout', 1)).toBeUndefined();
    expect(breakers.record('s', 'web', settings, 'tool_error', 2)).toEqual({
      event: 'opened',
      consecutiveFailures: 3,
    });
    expect(breakers.admit('s', 'web', settings, 500)).toEqual({
      allowed: false,
      consecutiveFailures: 3,
      retryInMs: 502,
    });
    expect(breakers.admit('s', 'web', settings, 1002)).toEqual({
      allowed: true,
      transition: { event: 'half_open', consecutiveFailures: 3 },
    });
    expect(breakers.record('s', 'web', settings, undefined, 1003)).toEqual({
      event: 'closed',
      consecutiveFailures: 0,
    });
    expect(breakers.admit('s', 'web', settings, 1004)).toEqual({ allowed: true });
    expect(breakers.size).toBe(0);
  });

  it('re-opens when the half-open trial fails and restarts the cooldown from then', () => {
    const breakers = new ToolBreakers();
    for (const at of [0, 1, 2]) breakers.record('s', 'web', settings, 'tool_error', at);
    expect(breakers.admit('s', 'web', settings, 5000)).toMatchObject({ allowed: true });
    expect(breakers.record('s', 'web', settings, 'timeout', 5000)).toEqual({
      event: 'opened',
      consecutiveFailures: 4,
    });
    expect(breakers.admit('s', 'web', settings, 5999)).toMatchObject({ allowed: false, retryInMs: 1 });
    expect(breakers.admit('s', 'web', settings, 6000)).toMatchObject({ allowed: true });
  });

  it('ignores outcomes that say nothing about the tool and resets the count on success', () => {
    const breakers = new ToolBreakers();
    for (const kind of ['invalid_input', 'denied', 'unknown_tool', 'cancelled', 'breaker_open']) {
      expect(breakers.record('s', 'web', settings, kind, 0)).toBeUndefined();
    }
    expect(breakers.size).toBe(0);
    breakers.record('s', 'web', settings, 'tool_error', 0);
    breakers.record('s', 'web', settings, 'tool_error', 0);
    breakers.record('s', 'web', settings, undefined, 0);
    breakers.record('s', 'web', settings, 'tool_error', 0);
    expect(breakers.record('s', 'web', settings, 'tool_error', 0)).toBeUndefined();
    expect(breakers.admit('s', 'web', settings, 0)).toEqual({ allowed: true });
    // A cancelled trial leaves the breaker half-open: the next call is the trial again.
    breakers.record('s', 'web', settings, 'tool_error', 0);
    expect(breakers.admit('s', 'web', settings, 2000)).toMatchObject({ transition: { event: 'half_open' } });
    expect(breakers.record('s', 'web', settings, 'cancelled', 2000)).toBeUndefined();
    expect(breakers.admit('s', 'web', settings, 2001)).toEqual({ allowed: true });
  });

  it('keeps breakers apart per session and per tool', () => {
    const breakers = new ToolBreakers();
    for (const at of [0, 1, 2]) breakers.record('a', 'web', settings, 'tool_error', at);
    expect(breakers.admit('a', 'web', settings, 3)).toMatchObject({ allowed: false });
    expect(breakers.admit('b', 'web', settings, 3)).toEqual({ allowed: true });
    expect(breakers.admit('a', 'fs', settings, 3)).toEqual({ allowed: true });
    breakers.forget('a');
    expect(breakers.admit('a', 'web', settings, 3)).toEqual({ allowed: true });
  });

  it('never opens with threshold 0', () => {
    const breakers = new ToolBreakers();
    const off = { failureThreshold: 0, cooldownMs: 1000 };
    for (let index = 0; index < 10; index++) {
      expect(breakers.record('s', 'web', off, 'tool_error', index)).toBeUndefined();
    }
    expect(breakers.admit('s', 'web', off, 10)).toEqual({ allowed: true });
    expect(breakers.size).toBe(0);
  });

  it('forgets the least recently used session beyond its bound', () => {
    const breakers = new ToolBreakers(2);
    breakers.record('a', 'web', settings, 'tool_error', 0);
    breakers.record('b', 'web', settings, 'tool_error', 0);
    breakers.admit('a', 'web', settings, 0);
    breakers.record('c', 'web', settings, 'tool_error', 0);
    expect(breakers.size).toBe(2);
    // `a` was used after `b`, so it keeps its count and two more failures open it.
    breakers.record('a', 'web', settings, 'tool_error', 0);
    expect(breakers.record('a', 'web', settings, 'tool_error', 0)).toMatchObject({ event: 'opened' });
    // `b` was the least recently used; its count is gone, so two more failures do not open it.
    breakers.record('b', 'web', settings, 'tool_error', 0);
    expect(breakers.record('b', 'web', settings, 'tool_error', 0)).toBeUndefined();
    expect(breakers.size).toBe(2);
  });
});

interface Emitted {
  event: string;
  payload: Record<string, unknown>;
}

function recordingSink(): EventSink & { emitted: Emitted[] } {
  const emitted: Emitted[] = [];
  return { emitted, emit: (event, payload) => emitted.push({ event, payload }) };
}

/** A tool whose health the test switches; counts how often its handler really ran. */
function flakyTool(): AgentTool<{ q: string }> & { broken: boolean; invocations: number } {
  const tool = {
    name: 'flaky',
    description: 'Fails while broken',
    params: z.object({ q: z.string() }),
    broken: true,
    invocations: 0,
    handler: async () => {
      tool.invocations++;
      if (tool.broken) throw new Error('upstream said: secret detail of the failure');
      return { answer: 42 };
    },
  };
  return tool;
}

const BREAKER_KEYS = [
  'agentId',
  'consecutiveFailures',
  'event',
  'seq',
  'sessionKey',
  'toolCallId',
  'toolName',
  'traceId',
  'ts',
];

describe('createAgentRuntime tool breaker', () => {
  async function start(toolBreaker: Record<string, number>, script?: OfflineScript) {
    const tool = flakyTool();
    const events = recordingSink();
    const logger = recordingLogger();
    const clock = { at: 1_700_000_000_000 };
    const t = await startRuntime({
      tools: [tool],
      events,
      logger,
      now: () => clock.at,
      ...(script ? { offline: { script } } : {}),
      agents: { entries: { w: { name: 'W', tools: ['flaky'], toolBreaker } } },
    });
    const turn = (sessionKey = 'brk', message = '/tool flaky {"q":"x"}') =>
      t.runtime.runTurn({ agentId: 'w', message, sessionKey });
    const breakerEvents = () => events.emitted.filter((entry) => entry.event === 'tool:breaker');
    return { t, tool, events, logger, clock, turn, breakerEvents };
  }

  it('opens after N failures, refuses without running the tool, half-opens after the cooldown and closes on success', async () => {
    const { t, tool, clock, turn, breakerEvents, logger } = await start({
      failureThreshold: 3,
      cooldownMs: 60_000,
    });
    const first = await turn();
    await turn();
    expect(breakerEvents()).toEqual([]);
    await turn();
    expect(tool.invocations).toBe(3);
    expect(breakerEvents().map((entry) => entry.payload)).toEqual([
      {
        sessionKey: 'brk',
        agentId: 'w',
        traceId: expect.any(String),
        toolName: 'flaky',
        toolCallId: expect.any(String),
        seq: 1,
        event: 'opened',
        consecutiveFailures: 3,
        ts: clock.at,
      },
    ]);
    expect(first.endReason).toBe('completed_with_tool_errors');
    expect(logger.entries.find((entry) => entry.message === 'tool breaker opened')?.fields).toMatchObject({
      errorKind: 'dependency',
      hint: expect.any(String),
    });

    // Open: answered at once with breaker_open, the handler does not run.
    clock.at += 59_999;
    tool.broken = false;
    const refused = await turn();
    expect(tool.invocations).toBe(3);
    expect(refused.endReason).toBe('completed_with_tool_errors');
    const refusedCall = readTrajectory(t.dir, 'brk')
      .filter((record) => record.type === 'tool_call')
      .at(-1);
    expect(refusedCall).toMatchObject({ ok: false, errorKind: 'breaker_open', toolName: 'flaky' });
    const history = await t.runtime.sessions.history('brk');
    const refusal = history.messages.filter((message) => message.role === 'tool').at(-1);
    expect(refusal?.isError).toBe(true);
    expect(refusal?.content).toContain('flaky is unavailable for now');
    expect(refusal?.content).toContain('failed 3 times in a row');

    // After the cooldown one trial runs; it succeeds, so the breaker closes.
    clock.at += 1;
    const trial = await turn();
    expect(tool.invocations).toBe(4);
    expect(trial.endReason).toBe('completed');
    expect(breakerEvents().map((entry) => [entry.payload.event, entry.payload.consecutiveFailures])).toEqual([
      ['opened', 3],
      ['half_open', 3],
      ['closed', 0],
    ]);
    const [, halfOpen, closed] = breakerEvents();
    expect(halfOpen?.payload.traceId).toBe(trial.traceId);
    expect(closed?.payload.traceId).toBe(trial.traceId);
    await turn();
    expect(tool.invocations).toBe(5);
    expect(breakerEvents()).toHaveLength(3);
  });

  it('re-opens when the half-open trial fails', async () => {
    const { tool, clock, turn, breakerEvents } = await start({ failureThreshold: 2, cooldownMs: 1000 });
    await turn();
    await turn();
    clock.at += 1000;
    await turn();
    expect(tool.invocations).toBe(3);
    await turn();
    expect(tool.invocations).toBe(3);
    expect(breakerEvents().map((entry) => [entry.payload.event, entry.payload.consecutiveFailures])).toEqual([
      ['opened', 2],
      ['half_open', 2],
      ['opened', 3],
    ]);
  });

  it('reports the per-turn seq of the call that opened it when one step calls the tool repeatedly', async () => {
    const script: OfflineScript = (_request, { call }) =>
      call === 0
        ? { toolCalls: [1, 2, 3, 4].map((n) => ({ toolName: 'flaky', input: { q: String(n) } })) }
        : { text: 'done' };
    const { t, tool, turn, breakerEvents } = await start({ failureThreshold: 3, cooldownMs: 60_000 }, script);
    await turn('multi', 'go');
    expect(tool.invocations).toBe(3);
    expect(breakerEvents().map((entry) => [entry.payload.event, entry.payload.seq])).toEqual([['opened', 3]]);
    const kinds = readTrajectory(t.dir, 'multi').flatMap((record) =>
      record.type === 'tool_call' ? [[record.seq, record.errorKind]] : [],
    );
    expect(kinds).toEqual([
      [1, 'tool_error'],
      [2, 'tool_error'],
      [3, 'tool_error'],
      [4, 'breaker_open'],
    ]);
  });

  it('does not count invalid input, and keeps breakers of different sessions apart', async () => {
    const { tool, turn, breakerEvents } = await start({ failureThreshold: 2, cooldownMs: 60_000 });
    for (let index = 0; index < 4; index++) await turn('brk', '/tool flaky {"q":1}');
    expect(tool.invocations).toBe(0);
    expect(breakerEvents()).toEqual([]);
    await turn('brk');
    await turn('brk');
    expect(breakerEvents()).toHaveLength(1);
    await turn('other');
    expect(tool.invocations).toBe(3);
    await turn('brk');
    expect(tool.invocations).toBe(3);
  });

  it('forgets the breakers of a session on reset', async () => {
    const { t, tool, turn } = await start({ failureThreshold: 1, cooldownMs: 60_000 });
    await turn();
    await turn();
    expect(tool.invocations).toBe(1);
    await t.runtime.sessions.reset('brk');
    await turn();
    expect(tool.invocations).toBe(2);
  });

  it('never opens with failureThreshold 0', async () => {
    const { tool, turn, breakerEvents } = await start({ failureThreshold: 0, cooldownMs: 60_000 });
    for (let index = 0; index < 5; index++) await turn();
    expect(tool.invocations).toBe(5);
    expect(breakerEvents()).toEqual([]);
  });

  it('emits ids, counts and enums only, never the tool error text', async () => {
    const { clock, turn, breakerEvents } = await start({ failureThreshold: 1, cooldownMs: 10 });
    await turn();
    clock.at += 10;
    await turn();
    expect(breakerEvents()).toHaveLength(3);
    for (const { payload } of breakerEvents()) {
      expect(Object.keys(payload).sort()).toEqual(BREAKER_KEYS);
      expect(JSON.stringify(payload)).not.toContain('secret');
      for (const value of Object.values(payload)) {
        if (typeof value === 'string') expect(value).toMatch(/^[A-Za-z0-9_.:@/#%+=-]{1,128}$/);
        else expect(typeof value).toBe('number');
      }
    }
  });

  it('has the default settings in the agent definition', async () => {
    const { t } = await start({});
    expect(t.runtime.agents.get('w').toolBreaker).toEqual({
      failureThreshold: 3,
      cooldownMs: 60_000,
    });
  });
});
