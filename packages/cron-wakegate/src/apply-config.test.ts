import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  deferred,
  FAKE_TIMERS,
  ok,
  type ScriptedRunner,
  scriptedRunner,
  tempDatabase,
} from '../test/helpers.js';
import { type CronService, type CronServiceOptions, createCronService } from './cron-service.js';
import { isCronWakegateError } from './errors.js';
import { createWakeCoalescer, type WakeRequest } from './wake-coalescer.js';

let env: Awaited<ReturnType<typeof tempDatabase>>;
let runner: ScriptedRunner;
let cron: CronService | undefined;

async function started(overrides: Partial<CronServiceOptions> = {}): Promise<CronService> {
  cron = createCronService({
    db: env.db,
    runner,
    workspaceDir: (agentId) => join(env.dir, 'workspaces', agentId),
    defaultTimeZone: 'UTC',
    ...overrides,
  });
  await cron.start();
  return cron;
}

beforeEach(async () => {
  env = await tempDatabase();
  runner = scriptedRunner();
  vi.useFakeTimers(FAKE_TIMERS);
  vi.setSystemTime(0);
});
afterEach(async () => {
  vi.useRealTimers();
  await cron?.close();
  cron = undefined;
  await env.cleanup();
});

describe('CronService.applyConfig', () => {
  it('stops scheduled fires when disabled and fires an overdue job once when enabled again', async () => {
    const service = await started();
    await service.add({ name: 'tick', message: 'm', schedule: { kind: 'interval', everyMs: 1000 } });
    service.applyConfig({ enabled: false });
    await vi.advanceTimersByTimeAsync(5000);
    expect(runner.requests).toHaveLength(0);
    service.applyConfig({ enabled: true });
    await vi.advanceTimersByTimeAsync(0);
    await service.idle();
    expect(runner.requests).toHaveLength(1);
  });

  it('lets more runs go at once after maxConcurrentRuns is raised', async () => {
    const service = await started({ maxConcurrentRuns: 1 });
    const gate = deferred<void>();
    runner.respond(async (request) => {
      await gate.promise;
      return ok('done', request.sessionKey);
    });
    for (const name of ['a', 'b', 'c']) {
      await service.add({ name, message: name, schedule: { kind: 'interval', everyMs: 60_000 } });
    }
    for (const name of ['a', 'b', 'c']) service.runNow(name);
    await vi.advanceTimersByTimeAsync(0);
    expect(runner.requests).toHaveLength(1);
    service.applyConfig({ maxConcurrentRuns: 3 });
    await vi.advanceTimersByTimeAsync(0);
    expect(runner.requests).toHaveLength(3);
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
