import { beforeEach, describe, expect, it, vi } from 'vitest';
import { deferred } from '@agentd/test-support';
import { cronFixture, FAKE_TIMERS, ok } from '../test/helpers.js';
import type { CronService } from './cron-service.js';
import { isCronWakegateError } from './errors.js';
import { summarizeWakeGateFires } from './evidence.js';

const fixture = cronFixture();
const { make, started } = fixture;

/** Lets `ms` of fake time pass and waits until the fires it started have finished. */
async function elapse(cron: CronService, ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  await cron.idle();
}

/**
 * From `startIso`, runs a `nightly` job at 02:30 in `tz` for `hours` hours of fake time and returns
 * the service and the ISO times of the job's runs.
 */
async function nightlyRuns(
  startIso: string,
  tz: string,
  hours: number,
): Promise<{ cron: CronService; runTimes: string[] }> {
  vi.setSystemTime(Date.parse(startIso));
  const cron = await started();
  await cron.add({ name: 'nightly', message: 'n', schedule: { kind: 'cron', expr: '30 2 * * *', tz } });
  await elapse(cron, hours * 3_600_000);
  const runs = await cron.runs({ jobName: 'nightly' });
  return { cron, runTimes: runs.map((run) => new Date(run.ts).toISOString()) };
}

function fieldOf(error: unknown): string | undefined {
  if (!isCronWakegateError(error)) throw error;
  return error.data?.issues?.[0]?.path.join('.');
}

describe('createCronService', () => {
  describe('schedule arithmetic under fake timers', () => {
    beforeEach(() => {
      vi.useFakeTimers(FAKE_TIMERS);
    });

    it('fires a cron job exactly at its time and schedules the next one', async () => {
      vi.setSystemTime(Date.parse('2026-03-01T09:59:59.000Z'));
      const cron = await started();
      const job = await cron.add({
        name: 'hourly',
        message: 'check',
        schedule: { kind: 'cron', expr: '0 * * * *' },
      });
      expect(job).toMatchObject({ scheduleKind: 'cron', expr: '0 * * * *', tz: 'UTC', enabled: true });
      expect(job.nextRunAtMs).toBe(Date.parse('2026-03-01T10:00:00Z'));
      await vi.advanceTimersByTimeAsync(999);
      expect(fixture.runner.requests).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(1);
      expect(fixture.runner.requests).toEqual([
        expect.objectContaining({
          agentId: 'default',
          message: 'check',
          sessionKey: `cron:${job.id}`,
          origin: 'cron',
        }),
      ]);
      await cron.idle();
      const [run] = await cron.runs({ jobName: 'hourly' });
      expect(run).toMatchObject({
        jobId: job.id,
        status: 'ok',
        trigger: 'schedule',
        ts: Date.parse('2026-03-01T10:00:00Z'),
        scheduledAtMs: Date.parse('2026-03-01T10:00:00Z'),
        summary: 'done: 5',
        tokensTotal: 7,
      });
      expect(run?.catchUp).toBeUndefined();
      expect(cron.get('hourly')).toMatchObject({
        nextRunAtMs: Date.parse('2026-03-01T11:00:00Z'),
        lastRunAtMs: Date.parse('2026-03-01T10:00:00Z'),
      });
    });

    it('fires a job in the New York spring-forward gap once, at the end of the gap', async () => {
      // 01:00 EST
      const { runTimes } = await nightlyRuns('2024-03-10T06:00:00Z', 'America/New_York', 3);
      expect(runTimes).toEqual(['2024-03-10T07:00:00.000Z']);
    });

    it('fires a job whose time repeats at the Berlin fall-back once', async () => {
      // 01:00 CEST
      const { cron, runTimes } = await nightlyRuns('2024-10-26T23:00:00Z', 'Europe/Berlin', 4);
      expect(runTimes).toEqual(['2024-10-27T00:30:00.000Z']);
      expect(cron.get('nightly').nextRunAtMs).toBe(Date.parse('2024-10-28T01:30:00Z'));
    });

    it('records an overlapping fire as skipped with its reason and keeps one run at a time', async () => {
      vi.setSystemTime(1_000_000);
      const cron = await started();
      const release = deferred<void>();
      fixture.runner.respond(async () => {
        await release.promise;
        return ok('slow');
      });
      await cron.add({ name: 'tick', message: 't', schedule: { kind: 'interval', everyMs: 1000 } });
      await vi.advanceTimersByTimeAsync(1000);
      expect(cron.get('tick').running).toBe(true);
      await vi.advanceTimersByTimeAsync(1000);
      expect(fixture.runner.requests).toHaveLength(1);
      release.resolve();
      await cron.idle();
      const runs = await cron.runs({ jobName: 'tick' });
      expect(runs).toHaveLength(2);
      expect(runs[0]).toMatchObject({ status: 'skipped', skipReason: 'overlap', ts: 1_002_000 });
      expect(runs[0]?.summary).toContain('still in progress');
      expect(runs[0]?.wakeGate).toBeUndefined();
      expect(runs[1]).toMatchObject({ status: 'ok', ts: 1_001_000 });
      expect(cron.get('tick').nextRunAtMs).toBe(1_003_000);
    });

    it('ends a run at its timeout, aborts the turn and keeps the error as lastError', async () => {
      vi.setSystemTime(5_000_000);
      const cron = await started();
      let signal: AbortSignal | undefined;
      fixture.runner.respond((request) => {
        signal = request.signal;
        return new Promise(() => {});
      });
      await cron.add({
        name: 'stuck',
        message: 's',
        timeoutMs: 2000,
        schedule: { kind: 'interval', everyMs: 60_000 },
      });
      cron.runNow('stuck');
      await vi.advanceTimersByTimeAsync(1999);
      expect(cron.get('stuck').running).toBe(true);
      await elapse(cron, 1);
      expect(signal?.aborted).toBe(true);
      const [run] = await cron.runs({ jobName: 'stuck' });
      expect(run).toMatchObject({
        status: 'error',
        error: 'run timed out after 2000 ms',
        trigger: 'force',
        durationMs: 2000,
      });
      expect(cron.get('stuck')).toMatchObject({
        lastError: 'run timed out after 2000 ms',
        consecutiveErrors: 1,
      });
    });

    it('backs off a failing job and returns to its schedule after a success', async () => {
      vi.setSystemTime(0);
      const cron = await started({ retryBackoffMs: [30_000, 60_000] });
      fixture.runner.respond(async () => {
        throw new Error('model unavailable');
      });
      await cron.add({ name: 'flaky', message: 'f', schedule: { kind: 'interval', everyMs: 1000 } });
      await elapse(cron, 1000);
      expect(cron.get('flaky')).toMatchObject({
        lastError: 'model unavailable',
        consecutiveErrors: 1,
        nextRunAtMs: 31_000,
      });
      await elapse(cron, 30_000);
      expect(cron.get('flaky')).toMatchObject({ consecutiveErrors: 2, nextRunAtMs: 91_000 });
      fixture.runner.respond(async () => ok('fine'));
      await elapse(cron, 60_000);
      const job = cron.get('flaky');
      expect(job.consecutiveErrors).toBe(0);
      expect(job.lastError).toBeUndefined();
      expect(job.nextRunAtMs).toBe(92_000);
      expect((await cron.runs({ jobName: 'flaky' })).map((run) => run.status)).toEqual([
        'ok',
        'error',
        'error',
      ]);
    });

    it('runs a one-shot once and then shows it disabled with no next run', async () => {
      vi.setSystemTime(Date.parse('2026-05-01T00:00:00Z'));
      const cron = await started();
      await cron.add({
        name: 'remind',
        message: 'r',
        schedule: { kind: 'once', at: '2026-05-01T00:00:05Z' },
      });
      await elapse(cron, 60_000);
      expect(fixture.runner.requests).toHaveLength(1);
      expect(cron.get('remind')).toMatchObject({
        enabled: false,
        nextRunAtMs: 0,
        at: '2026-05-01T00:00:05Z',
      });
    });

    it('retries a failing one-shot up to onceMaxRetries, then disables it', async () => {
      vi.setSystemTime(0);
      const cron = await started({ retryBackoffMs: [1000], onceMaxRetries: 2 });
      fixture.runner.respond(async () => {
        throw new Error('nope');
      });
      await cron.add({ name: 'once', message: 'o', schedule: { kind: 'once', at: '1970-01-01T00:00:05Z' } });
      await elapse(cron, 60_000);
      expect(fixture.runner.requests).toHaveLength(3);
      expect(cron.get('once')).toMatchObject({
        enabled: false,
        nextRunAtMs: 0,
        consecutiveErrors: 3,
        lastError: 'nope',
      });
    });

    it('does not fire a disabled job and places it again when re-enabled', async () => {
      vi.setSystemTime(0);
      const cron = await started();
      await cron.add({ name: 'j', message: 'm', schedule: { kind: 'interval', everyMs: 1000 } });
      expect((await cron.update({ name: 'j', enabled: false })).nextRunAtMs).toBe(0);
      await vi.advanceTimersByTimeAsync(5000);
      expect(fixture.runner.requests).toHaveLength(0);
      expect((await cron.update({ name: 'j', enabled: true })).nextRunAtMs).toBe(6000);
      await vi.advanceTimersByTimeAsync(1000);
      expect(fixture.runner.requests).toHaveLength(1);
    });

    it('fires every overdue job once on runDue when the timer is off', async () => {
      vi.setSystemTime(0);
      const cron = await started({ enabled: false });
      await cron.add({ name: 'a', message: 'a', schedule: { kind: 'interval', everyMs: 1000 } });
      await cron.add({ name: 'b', message: 'b', schedule: { kind: 'interval', everyMs: 60_000 } });
      await vi.advanceTimersByTimeAsync(5000);
      expect(fixture.runner.requests).toHaveLength(0);
      expect(cron.runDue()).toEqual({ jobNames: ['a'] });
      await cron.idle();
      expect(await cron.runs({ jobName: 'a' })).toEqual([
        expect.objectContaining({ trigger: 'due', scheduledAtMs: 1000, ts: 5000 }),
      ]);
      expect(cron.get('a').nextRunAtMs).toBe(6000);
    });
  });
});

describe('createCronService', () => {
  describe('restarts', () => {
    it('runs a job that missed fires while stopped once, marked as a catch-up', async () => {
      let clock = Date.parse('2026-06-01T08:00:00Z');
      const first = make(fixture.env.db, { now: () => clock });
      await first.start();
      await first.add({
        name: 'every-minute',
        message: 'm',
        schedule: { kind: 'interval', everyMs: 60_000 },
      });
      await first.add({ name: 'five', message: 'f', schedule: { kind: 'cron', expr: '*/5 * * * *' } });
      await first.add({ name: 'later', message: 'l', schedule: { kind: 'cron', expr: '0 12 * * *' } });
      await first.close();

      clock += 30 * 60_000; // down for 30 minutes: 30 missed minute fires, 6 missed five-minute fires
      const db = await fixture.env.reopen();
      const second = make(db, { now: () => clock });
      await second.start();
      await second.idle();
      expect(fixture.runner.requests.map((request) => request.message).sort()).toEqual(['f', 'm']);
      const [minute] = await second.runs({ jobName: 'every-minute' });
      expect(minute).toMatchObject({
        trigger: 'catch-up',
        catchUp: true,
        status: 'ok',
        ts: clock,
        scheduledAtMs: Date.parse('2026-06-01T08:01:00Z'),
      });
      expect(await second.runs({ jobName: 'five' })).toHaveLength(1);
      expect(await second.runs({ jobName: 'later' })).toHaveLength(0);
      expect(second.get('every-minute').nextRunAtMs).toBe(clock + 60_000);
      expect(second.get('five').nextRunAtMs).toBe(Date.parse('2026-06-01T08:35:00Z'));
    });

    it('persists edits, and a run cut off by close runs again as a catch-up after the restart', async () => {
      let clock = 1_000_000;
      fixture.runner.respond(
        (request) =>
          new Promise((_, reject) =>
            request.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
          ),
      );
      const first = make(fixture.env.db, { now: () => clock });
      await first.start();
      await first.add({
        name: 'long',
        message: 'l',
        schedule: { kind: 'once', at: new Date(clock + 500).toISOString() },
      });
      await first.update({ name: 'long', message: 'edited' });
      clock += 700;
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(first.get('long').running).toBe(true);
      await first.close();

      fixture.runner.respond(async () => ok('finished'));
      const db = await fixture.env.reopen();
      const second = make(db, { now: () => clock });
      await second.start();
      await second.idle();
      const runs = await second.runs({ jobName: 'long' });
      expect(runs.map((run) => [run.trigger, run.status])).toEqual([
        ['catch-up', 'ok'],
        ['schedule', 'error'],
      ]);
      expect(runs[1]?.error).toContain('interrupted');
      expect(fixture.runner.requests.at(-1)?.message).toBe('edited');
      expect(second.get('long')).toMatchObject({ enabled: false, nextRunAtMs: 0 });
    });
  });
});

describe('createCronService', () => {
  describe('wake-gates', () => {
    const gate = (source: string) => ({ command: process.execPath, args: ['-e', source] });

    it('writes a skipped run with the contract fields and calls no model when the gate says no', async () => {
      const events: Array<[string, Record<string, unknown>]> = [];
      const cron = await started({ events: { emit: (name, payload) => events.push([name, payload]) } });
      const job = await cron.add({
        name: 'inbox',
        message: 'read mail',
        agentId: 'mailer',
        schedule: { kind: 'interval', everyMs: 3_600_000 },
        wakeGate: gate('console.log(JSON.stringify({ wake: false, reason: "no new mail" }))'),
      });
      expect(cron.get('inbox').wakeGate).toEqual(job.wakeGate);
      cron.runNow('inbox');
      await cron.idle();
      expect(fixture.runner.requests).toHaveLength(0);
      const [run] = await cron.runs({ jobName: 'inbox' });
      expect(run).toMatchObject({
        status: 'skipped',
        summary: 'wake-gate: skipped',
        toolCalls: 0,
        estTurnsSaved: 1,
        rootRunId: `root-wakegate-${job.id}-${run!.ts}`,
        skipReason: 'wake-gate',
        wakeGate: { outcome: 'skip', reason: 'no new mail' },
      });
      expect(events).toEqual([
        [
          'cron:fired',
          expect.objectContaining({
            jobId: job.id,
            agentId: 'mailer',
            status: 'skipped',
            gateOutcome: 'skip',
          }),
        ],
      ]);
      expect(JSON.stringify(events)).not.toContain('read mail');
    });

    it('adds the gate message to the turn when the gate wakes the model', async () => {
      const cron = await started();
      await cron.add({
        name: 'inbox',
        message: 'read mail',
        schedule: { kind: 'interval', everyMs: 3_600_000 },
        wakeGate: gate('console.log(JSON.stringify({ wake: true, message: "2 new messages" }))'),
      });
      cron.runNow('inbox');
      await cron.idle();
      expect(fixture.runner.requests[0]?.message).toBe('read mail\n\n2 new messages');
      expect((await cron.runs({ jobName: 'inbox' }))[0]).toMatchObject({
        status: 'ok',
        wakeGate: { outcome: 'wake' },
      });
    });

    it.each([
      ['crash', gate('process.exit(2)')],
      ['timeout', { ...gate('setTimeout(() => {}, 60000)'), timeoutMs: 300 }],
      ['invalid-output', gate('console.log("maybe?")')],
      ['output-cap', { ...gate('process.stdout.write("y".repeat(10000))'), maxOutputBytes: 100 }],
    ])(
      'fails open on a gate %s: the model is woken and the fire counted as failed open',
      async (failure, wakeGate) => {
        const cron = await started();
        await cron.add({
          name: 'g',
          message: 'm',
          schedule: { kind: 'interval', everyMs: 3_600_000 },
          wakeGate,
        });
        cron.runNow('g');
        await cron.idle();
        expect(fixture.runner.requests).toHaveLength(1);
        const [run] = await cron.runs({ jobName: 'g' });
        expect(run).toMatchObject({ status: 'ok', wakeGate: { outcome: 'failed-open', failure } });
        expect(run?.estTurnsSaved).toBeUndefined();
      },
    );

    it('records every gated fire so the cronWakeGate block can be computed', async () => {
      const cron = await started();
      const skip = gate('console.log(JSON.stringify({ wake: false }))');
      const hourly = { message: 'm', schedule: { kind: 'interval', everyMs: 3_600_000 } } as const;
      await cron.add({ ...hourly, name: 's1', agentId: 'a1', wakeGate: skip });
      await cron.add({ ...hourly, name: 's2', agentId: 'a1', wakeGate: gate('process.exit(1)') });
      await cron.add({ ...hourly, name: 's3', agentId: 'a2', wakeGate: skip });
      await cron.add({ ...hourly, name: 'plain' });
      for (const name of ['s1', 's1', 's2', 's3', 'plain']) {
        cron.runNow(name);
        await cron.idle();
      }
      expect(await summarizeWakeGateFires(fixture.env.db, { sinceMs: 0 })).toEqual({
        fires: { total: 4, skipped: 3, skipRate: 0.75, failedOpen: 1, failOpenRate: 0.25 },
        turnsSaved: 3,
        toolCalls: 3 * 0,
        perAgent: [
          {
            agentId: 'a1',
            fires: 3,
            skipped: 2,
            skipRate: 0.6667,
            failedOpen: 1,
            failOpenRate: 0.3333,
            turnsSaved: 2,
            toolCalls: 0,
          },
          {
            agentId: 'a2',
            fires: 1,
            skipped: 1,
            skipRate: 1,
            failedOpen: 0,
            failOpenRate: 0,
            turnsSaved: 1,
            toolCalls: 0,
          },
        ],
      });
      expect(await summarizeWakeGateFires(fixture.env.db, { sinceMs: Date.now() + 60_000 })).toBeUndefined();
    });
  });
});

describe('createCronService', () => {
  describe('edits', () => {
    it('names the field of a bad schedule and refuses a duplicate name', async () => {
      const cron = await started();
      const attempts = [
        { kind: 'cron' as const, expr: '* * *' },
        { kind: 'cron' as const, expr: '0 9 * * *', tz: 'Nowhere/Town' },
        { kind: 'interval' as const, everyMs: 500 },
        { kind: 'once' as const, at: '2001-01-01T00:00:00Z' },
      ];
      const fields = [];
      for (const schedule of attempts) {
        fields.push(await cron.add({ name: 'x', message: 'm', schedule }).then(() => 'added', fieldOf));
      }
      expect(fields).toEqual(['schedule.expr', 'schedule.tz', 'schedule.everyMs', 'schedule.at']);
      await cron.add({ name: 'x', message: 'm', schedule: { kind: 'interval', everyMs: 1000 } });
      const duplicate = await cron
        .add({ name: 'x', message: 'm', schedule: { kind: 'interval', everyMs: 1000 } })
        .catch((e) => e);
      expect(isCronWakegateError(duplicate, 'JOB_EXISTS')).toBe(true);
      expect(cron.list()).toHaveLength(1);
    });

    it('changes only the given fields on update', async () => {
      const cron = await started({ now: () => 10_000 });
      const before = await cron.add({
        name: 'j',
        message: 'one',
        schedule: { kind: 'cron', expr: '0 9 * * *' },
      });
      const after = await cron.update({ name: 'j', message: 'two' });
      expect(after).toMatchObject({
        message: 'two',
        expr: '0 9 * * *',
        agentId: 'default',
        nextRunAtMs: before.nextRunAtMs,
      });
      const moved = await cron.update({ name: 'j', schedule: { kind: 'interval', everyMs: 5000 } });
      expect(moved).toMatchObject({
        message: 'two',
        scheduleKind: 'interval',
        everyMs: 5000,
        nextRunAtMs: 15_000,
      });
      expect(moved.expr).toBeUndefined();
      const ungated = await cron.update({ name: 'j', wakeGate: { command: 'true' } });
      expect(ungated.wakeGate).toEqual({ command: 'true' });
      expect((await cron.update({ name: 'j', wakeGate: null })).wakeGate).toBeUndefined();
    });

    it('reports unknown names as JOB_NOT_FOUND and forgets removed jobs', async () => {
      const cron = await started();
      await cron.add({ name: 'gone', message: 'm', schedule: { kind: 'interval', everyMs: 1000 } });
      expect(await cron.remove('gone')).toMatchObject({ name: 'gone' });
      const attempts: Array<() => unknown> = [
        () => cron.get('gone'),
        () => cron.runNow('gone'),
        () => cron.update({ name: 'gone', message: 'x' }),
        () => cron.remove('gone'),
        () => cron.runs({ jobName: 'gone' }),
      ];
      for (const attempt of attempts) {
        const error = await Promise.resolve()
          .then(attempt)
          .catch((e: unknown) => e);
        expect(isCronWakegateError(error, 'JOB_NOT_FOUND')).toBe(true);
        expect((error as Error).message).toBe('Job not found: gone');
      }
      expect(await fixture.env.db.query('SELECT id FROM cron_jobs')).toEqual([]);
    });
  });
});
