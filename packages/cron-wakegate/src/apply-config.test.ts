import { beforeEach, describe, expect, it, vi } from 'vitest';
import { deferred } from '@agentd/test-support';
import { cronFixture, FAKE_TIMERS, ok } from '../test/helpers.js';
import { isCronWakegateError } from './errors.js';
import { createWakeCoalescer, type WakeRequest } from './wake-coalescer.js';

const fixture = cronFixture();
const { started } = fixture;

beforeEach(() => {
  vi.useFakeTimers(FAKE_TIMERS);
  vi.setSystemTime(0);
});

describe('CronService.applyConfig', () => {
  it('stops scheduled fires when disabled and fires an overdue job once when enabled again', async () => {
    const service = await started();
    await service.add({ name: 'tick', message: 'm', schedule: { kind: 'interval', everyMs: 1000 } });
    service.applyConfig({ enabled: false });
    await vi.advanceTimersByTimeAsync(5000);
    expect(fixture.runner.requests).toHaveLength(0);
    service.applyConfig({ enabled: true });
    await vi.advanceTimersByTimeAsync(0);
    await service.idle();
    expect(fixture.runner.requests).toHaveLength(1);
  });

  it('lets more runs go at once after maxConcurrentRuns is raised', async () => {
    const service = await started({ maxConcurrentRuns: 1 });
    const gate = deferred<void>();
    fixture.runner.respond(async (request) => {
      await gate.promise;
      return ok('done', request.sessionKey);
    });
    for (const name of ['a', 'b', 'c']) {
      await service.add({ name, message: name, schedule: { kind: 'interval', everyMs: 60_000 } });
    }
    for (const name of ['a', 'b', 'c']) service.runNow(name);
    await vi.advanceTimersByTimeAsync(0);
    expect(fixture.runner.requests).toHaveLength(1);
    service.applyConfig({ maxConcurrentRuns: 3 });
    await vi.advanceTimersByTimeAsync(0);
    expect(fixture.runner.requests).toHaveLength(3);
    gate.resolve();
    await service.idle();
  });

  it('rejects invalid settings and keeps the ones it had', async () => {
    const service = await started();
    let thrown: unknown;
    try {
      service.applyConfig({ maxConcurrentRuns: 0 });
    } catch (error) {
      thrown = error;
    }
    expect(isCronWakegateError(thrown) && thrown.code).toBe('INVALID_OPTIONS');
  });
});

describe('WakeCoalescer.windowMs', () => {
  it('opens the next window with a changed length and refuses an invalid one', async () => {
    const batches: WakeRequest[][] = [];
    const coalescer = createWakeCoalescer({ windowMs: 250, run: async (batch) => void batches.push(batch) });
    coalescer.windowMs = 1000;
    coalescer.request('agent');
    await vi.advanceTimersByTimeAsync(999);
    expect(batches).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches).toHaveLength(1);
    expect(() => {
      coalescer.windowMs = -1;
    }).toThrow(/invalid wake window/);
    expect(coalescer.windowMs).toBe(1000);
  });
});
