import { describe, expect, it } from 'vitest';
import { isCronWakegateError } from './errors.js';
import { nextFireAfter, type ResolvedSchedule, resolveSchedule, type ScheduleInput } from './schedule.js';

const NOW = Date.parse('2026-01-15T12:00:00Z');

function issuePath(input: ScheduleInput): string {
  try {
    resolveSchedule(input, { now: NOW, defaultTimeZone: 'UTC' });
  } catch (error) {
    if (isCronWakegateError(error, 'INVALID_SCHEDULE')) return error.data?.issues?.[0]?.path.join('.') ?? '';
    throw error;
  }
  throw new Error('expected INVALID_SCHEDULE');
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The next `count` fire times after `fromIso`, each found from the one before, as ISO strings. */
function firesAfter(schedule: ResolvedSchedule, fromIso: string, count: number): Array<string | undefined> {
  const fires: Array<string | undefined> = [];
  let at = Date.parse(fromIso);
  for (let i = 0; i < count; i++) {
    const next = nextFireAfter(schedule, at)!;
    fires.push(iso(next));
    at = next;
  }
  return fires;
}

describe('resolveSchedule', () => {
  it('names schedule.expr for a bad expression, a missing one and one that never fires', () => {
    expect(issuePath({ kind: 'cron', expr: '61 * * * *' })).toBe('schedule.expr');
    expect(issuePath({ kind: 'cron', expr: 'every day' })).toBe('schedule.expr');
    expect(issuePath({ kind: 'cron' })).toBe('schedule.expr');
    expect(issuePath({ kind: 'cron', expr: '0 0 30 2 *' })).toBe('schedule.expr');
  });

  it('names schedule.tz for an unknown time zone', () => {
    expect(issuePath({ kind: 'cron', expr: '0 9 * * *', tz: 'Mars/Olympus_Mons' })).toBe('schedule.tz');
  });

  it('names schedule.everyMs below 1000 and schedule.at in the past', () => {
    expect(issuePath({ kind: 'interval', everyMs: 999 })).toBe('schedule.everyMs');
    expect(issuePath({ kind: 'once', at: '2026-01-15T11:59:59Z' })).toBe('schedule.at');
    expect(issuePath({ kind: 'once', at: 'tomorrow' })).toBe('schedule.at');
  });

  it('reads an at without offset in its time zone and one with an offset as the instant it names', () => {
    const local = resolveSchedule(
      { kind: 'once', at: '2026-07-01T09:00:00', tz: 'Europe/Berlin' },
      { now: NOW },
    );
    expect(local.kind === 'once' && iso(local.atMs)).toBe('2026-07-01T07:00:00.000Z');
    const offset = resolveSchedule({ kind: 'once', at: '2026-07-01T09:00:00-04:00' }, { now: NOW });
    expect(offset.kind === 'once' && iso(offset.atMs)).toBe('2026-07-01T13:00:00.000Z');
  });

  it('stores the default zone on a cron job that names none', () => {
    expect(
      resolveSchedule({ kind: 'cron', expr: '0 9 * * *' }, { now: NOW, defaultTimeZone: 'Asia/Tokyo' }),
    ).toEqual({
      kind: 'cron',
      expr: '0 9 * * *',
      tz: 'Asia/Tokyo',
    });
  });
});

describe('nextFireAfter', () => {
  it('fires a daily job at the local time of its zone', () => {
    const schedule = resolveSchedule({ kind: 'cron', expr: '0 9 * * *', tz: 'Asia/Tokyo' }, { now: NOW });
    expect(iso(nextFireAfter(schedule, NOW))).toBe('2026-01-16T00:00:00.000Z');
  });

  it.each([
    {
      // 2024-03-10 02:30 does not exist in New York: the run happens at 03:00 EDT, then 02:30 EDT daily.
      case: 'runs a job whose time falls in the spring-forward gap once, right after the gap (America/New_York)',
      expr: '30 2 * * *',
      tz: 'America/New_York',
      from: '2024-03-09T12:00:00Z',
      fires: ['2024-03-10T07:00:00.000Z', '2024-03-11T06:30:00.000Z', '2024-03-12T06:30:00.000Z'],
    },
    {
      // 02:30 happens at 00:30Z (CEST) and again at 01:30Z (CET) on 27 October; only the first runs.
      case: 'runs a job whose time occurs twice at fall-back only once (Europe/Berlin)',
      expr: '30 2 * * *',
      tz: 'Europe/Berlin',
      from: '2024-10-26T12:00:00Z',
      fires: ['2024-10-27T00:30:00.000Z', '2024-10-28T01:30:00.000Z', '2024-10-29T01:30:00.000Z'],
    },
    {
      case: 'keeps an hourly job on wall-clock hours across the Berlin fall-back, running both 02:00 hours',
      expr: '0 * * * *',
      tz: 'Europe/Berlin',
      from: '2024-10-26T23:30:00Z',
      fires: [
        '2024-10-27T00:00:00.000Z',
        '2024-10-27T01:00:00.000Z',
        '2024-10-27T02:00:00.000Z',
        '2024-10-27T03:00:00.000Z',
      ],
    },
  ])('$case', ({ expr, tz, from, fires }) => {
    const schedule = resolveSchedule({ kind: 'cron', expr, tz }, { now: NOW });
    expect(firesAfter(schedule, from, fires.length)).toEqual(fires);
  });

  it('keeps an interval job on the phase of its anchor', () => {
    const schedule = resolveSchedule({ kind: 'interval', everyMs: 60_000 }, { now: 1_000_000 });
    expect(nextFireAfter(schedule, 1_000_000)).toBe(1_060_000);
    expect(nextFireAfter(schedule, 1_060_000)).toBe(1_120_000);
    expect(nextFireAfter(schedule, 1_500_001)).toBe(1_540_000);
  });

  it('has no fire left for a one-shot whose time has passed', () => {
    const schedule = resolveSchedule({ kind: 'once', at: '2026-02-01T00:00:00Z' }, { now: NOW });
    expect(iso(nextFireAfter(schedule, NOW))).toBe('2026-02-01T00:00:00.000Z');
    expect(nextFireAfter(schedule, Date.parse('2026-02-01T00:00:00Z'))).toBeUndefined();
  });
});
