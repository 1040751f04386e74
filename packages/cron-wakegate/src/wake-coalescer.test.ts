import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deferred } from '@agentd/test-support';
import { FAKE_TIMERS } from '../test/helpers.js';
import { createWakeCoalescer, type WakeRequest } from './wake-coalescer.js';

beforeEach(() => {
  vi.useFakeTimers(FAKE_TIMERS);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('createWakeCoalescer', () => {
  it('collapses requests within the window into one run carrying all of them', async () => {
    const batches: WakeRequest[][] = [];
    const coalescer = createWakeCoalescer({ windowMs: 250, run: async (batch) => void batches.push(batch) });
    expect(coalescer.request('agent')).toEqual({ coalesced: false });
    await vi.advanceTimersByTimeAsync(100);
    expect(coalescer.request('webhook')).toEqual({ coalesced: true });
    expect(coalescer.request('agent')).toEqual({ coalesced: true });
    await vi.advanceTimersByTimeAsync(149);
    expect(batches).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.map((request) => request.source)).toEqual(['agent', 'webhook', 'agent']);
    expect(coalescer.runs).toBe(1);
  });

  it('runs requests that arrive during a run once more after it, never overlapping', async () => {
    const gate = deferred<void>();
    let active = 0;
    let maxActive = 0;
    const batches: string[][] = [];
    const coalescer = createWakeCoalescer({
      windowMs: 50,
      run: async (batch) => {
        active += 1;
        maxActive = Math.max(maxActive, active);
        batches.push(batch.map((request) => request.source));
        if (batches.length === 1) await gate.promise;
        active -= 1;
      },
    });
    coalescer.request('first');
    await vi.advanceTimersByTimeAsync(50);
    expect(batches).toEqual([['first']]);
    coalescer.request('during-1');
    coalescer.request('during-2');
    await vi.advanceTimersByTimeAsync(500);
    expect(batches).toHaveLength(1);
    gate.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(batches).toEqual([['first'], ['during-1', 'during-2']]);
    expect(maxActive).toBe(1);
    await coalescer.idle();
    expect(coalescer.busy).toBe(false);
  });

  it('keeps going after a run fails', async () => {
    let calls = 0;
    const errors: unknown[] = [];
    const coalescer = createWakeCoalescer({
      windowMs: 10,
      run: async () => {
        calls += 1;
        if (calls === 1) throw new Error('boom');
      },
      logger: { debug() {}, info() {}, warn() {}, error: (fields) => errors.push(fields.err) },
    });
    coalescer.request('a');
    await vi.advanceTimersByTimeAsync(10);
    coalescer.request('b');
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
  });

  it('drops a pending window on close', async () => {
    const run = vi.fn(async () => {});
    const coalescer = createWakeCoalescer({ windowMs: 100, run });
    coalescer.request('a');
    await coalescer.close();
    await vi.advanceTimersByTimeAsync(200);
    expect(run).not.toHaveBeenCalled();
    expect(coalescer.request('late')).toEqual({ coalesced: true });
  });
});
