import type { Database } from '@agentd/storage';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { FAKE_TIMERS, ok, serviceFixture } from '../test/helpers.js';
import { DEFAULT_HEARTBEAT_PROMPT } from './config.js';
import { isCronWakegateError } from './errors.js';
import { createHeartbeatService, type HeartbeatService, type HeartbeatServiceOptions } from './heartbeat.js';

const fixture = serviceFixture();

async function started(
  settings: HeartbeatServiceOptions['settings'] = {},
  overrides: Partial<HeartbeatServiceOptions> = {},
  db: Database = fixture.env.db,
): Promise<HeartbeatService> {
  const service = fixture.track(
    createHeartbeatService({ db, runner: fixture.runner, settings, ...overrides }),
  );
  await service.start();
  return service;
}

/** Lets the coalescing window pass and the beat finish. */
async function settle(service: HeartbeatService, ms = 250): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  await service.idle();
}

beforeEach(() => {
  vi.useFakeTimers(FAKE_TIMERS);
  vi.setSystemTime(Date.parse('2026-02-01T00:00:00Z'));
});

describe('createHeartbeatService', () => {
  it('beats every interval with its prompt when enabled and lists the beats newest first', async () => {
    const t0 = Date.now();
    const heartbeat = await started({ enabled: true, intervalMs: 60_000, coalesceWindowMs: 0 });
    expect(heartbeat.status()).toMatchObject({
      enabled: true,
      intervalMs: 60_000,
      nextBeatAt: t0 + 60_000,
      queued: 0,
    });
    await vi.advanceTimersByTimeAsync(59_999);
    expect(fixture.runner.requests).toHaveLength(0);
    await settle(heartbeat, 1);
    expect(fixture.runner.requests).toEqual([
      expect.objectContaining({
        agentId: 'default',
        message: DEFAULT_HEARTBEAT_PROMPT,
        sessionKey: 'heartbeat:default',
        origin: 'heartbeat',
      }),
    ]);
    await settle(heartbeat, 60_000);
    const history = await heartbeat.history();
    expect(history.map((beat) => beat.ts)).toEqual([t0 + 120_000, t0 + 60_000]);
    expect(history[0]).toMatchObject({
      status: 'ok',
      sources: ['interval'],
      queuedTexts: 0,
      summary: expect.any(String),
    });
    expect(heartbeat.status()).toMatchObject({ lastBeatAt: t0 + 120_000, nextBeatAt: t0 + 180_000 });
  });

  it('does not beat on its own when disabled', async () => {
    const heartbeat = await started({ enabled: false, intervalMs: 1000 });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(fixture.runner.requests).toHaveLength(0);
    expect(heartbeat.status().nextBeatAt).toBeUndefined();
  });

  it('runs one beat for a burst of wakeNow calls, carrying their texts', async () => {
    const heartbeat = await started({ enabled: false });
    heartbeat.wakeNow('build failed on main');
    heartbeat.wakeNow('new issue #12');
    heartbeat.wakeNow();
    await settle(heartbeat);
    expect(fixture.runner.requests).toHaveLength(1);
    expect(fixture.runner.requests[0]?.message).toBe(
      `${DEFAULT_HEARTBEAT_PROMPT}\n\nQueued since the last beat:\n- build failed on main\n- new issue #12`,
    );
    const [beat] = await heartbeat.history();
    expect(beat).toMatchObject({ sources: ['webhook'], queuedTexts: 2, status: 'ok' });
    expect(heartbeat.status().queued).toBe(0);
  });

  it('hands queued text to the next beat and keeps it when that beat fails', async () => {
    const heartbeat = await started({ enabled: true, intervalMs: 60_000, coalesceWindowMs: 0 });
    heartbeat.queueForNextBeat('deploy finished');
    await vi.advanceTimersByTimeAsync(1000);
    expect(fixture.runner.requests).toHaveLength(0);
    fixture.runner.respond(async () => {
      throw new Error('provider down');
    });
    await settle(heartbeat, 59_000);
    expect(heartbeat.status().queued).toBe(1);
    expect((await heartbeat.history())[0]).toMatchObject({
      status: 'error',
      error: 'provider down',
      queuedTexts: 1,
    });
    fixture.runner.respond(async () => ok('on it'));
    await settle(heartbeat, 60_000);
    expect(fixture.runner.requests[1]?.message).toContain('- deploy finished');
    expect(heartbeat.status().queued).toBe(0);
    expect(await fixture.env.db.query('SELECT * FROM heartbeat_queue')).toEqual([]);
  });

  it('records a beat that outlives its time limit as an error and aborts the turn', async () => {
    let signal: AbortSignal | undefined;
    fixture.runner.respond((request) => {
      signal = request.signal;
      return new Promise(() => {});
    });
    const heartbeat = await started({ timeoutMs: 1000 });
    heartbeat.trigger('manual');
    await settle(heartbeat, 1250);
    expect(signal?.aborted).toBe(true);
    expect((await heartbeat.history())[0]).toMatchObject({
      status: 'error',
      error: 'beat timed out after 1000 ms',
      sources: ['trigger:manual'],
    });
  });

  it('keeps the last beat and queued texts across a restart and runs an overdue beat once', async () => {
    const first = await started({ enabled: true, intervalMs: 60_000 });
    first.trigger();
    await settle(first);
    first.queueForNextBeat('while you were away');
    await first.close();

    vi.setSystemTime(Date.now() + 3_600_000); // 60 beats missed
    const second = await started({ enabled: true, intervalMs: 60_000 }, {}, await fixture.env.reopen());
    expect(second.status().queued).toBe(1);
    await settle(second);
    expect(fixture.runner.requests).toHaveLength(2);
    expect(fixture.runner.requests[1]?.message).toContain('- while you were away');
    expect((await second.history()).map((beat) => beat.sources)).toEqual([['catch-up'], ['trigger']]);
  });

  it('coalesces scheduler wakes from several sources and reports which joined', async () => {
    const heartbeat = await started();
    expect(heartbeat.wake('agent')).toEqual({ queued: true, coalesced: false });
    expect(heartbeat.wake('cron', 'look at the queue')).toEqual({ queued: true, coalesced: true });
    expect(heartbeat.trigger()).toEqual({ triggered: true, coalesced: true });
    await settle(heartbeat);
    expect(fixture.runner.requests).toHaveLength(1);
    expect((await heartbeat.history())[0]?.sources).toEqual(['agent', 'cron', 'trigger']);
  });

  it('persists an update through persistSettings, applies it, and names a bad field', async () => {
    const persisted: unknown[] = [];
    const heartbeat = await started({}, { persistSettings: async (patch) => void persisted.push(patch) });
    const status = await heartbeat.update({ enabled: true, intervalMs: 5000, agentId: 'ops' });
    expect(status).toMatchObject({
      enabled: true,
      intervalMs: 5000,
      agentId: 'ops',
      nextBeatAt: Date.now() + 5000,
    });
    expect(persisted).toEqual([{ enabled: true, intervalMs: 5000, agentId: 'ops' }]);
    const error = await heartbeat.update({ intervalMs: 10 }).catch((e: unknown) => e);
    expect(isCronWakegateError(error, 'INVALID_JOB') && error.data?.issues?.[0]?.path).toEqual([
      'intervalMs',
    ]);
    await settle(heartbeat, 5250);
    expect(fixture.runner.requests[0]).toMatchObject({ agentId: 'ops', sessionKey: 'heartbeat:ops' });
  });

  it('drops the oldest queued texts beyond maxQueuedTexts', async () => {
    const heartbeat = await started({ maxQueuedTexts: 2 });
    heartbeat.queueForNextBeat('one');
    heartbeat.queueForNextBeat('two');
    heartbeat.queueForNextBeat('three');
    heartbeat.trigger();
    await settle(heartbeat);
    expect(fixture.runner.requests[0]?.message).toContain('- two\n- three');
    expect(fixture.runner.requests[0]?.message).not.toContain('- one');
  });
});
