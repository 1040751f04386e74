import { createRequire } from 'node:module';
import type { Cron as CronType, CronOptions } from 'croner';

// croner is loaded with the first cron or one-shot schedule, so a daemon without such a job
// does not hold it (issue #14); a synchronous require keeps every caller synchronous.
const load = createRequire(import.meta.url);
let cronClass: typeof CronType | undefined;
function newCron(pattern: string, options: CronOptions): CronType {
  cronClass ??= (load('croner') as typeof import('croner')).Cron;
  return new cronClass(pattern, options);
}
import { z } from 'zod';
import { CronWakegateError } from './errors.js';

/** The smallest `everyMs` an interval job may have. */
export const MIN_INTERVAL_MS = 1000;

/**
 * The contract's schedule input object: `{ kind, expr?, tz?, everyMs?, at? }`. This schema
 * checks the shape only; {@link resolveSchedule} checks what needs a clock or croner.
 */
export const scheduleInputSchema = z
  .object({
    /** `cron` (expression plus time zone), `interval` (every `everyMs`) or `once` (at `at`). */
    kind: z.enum(['cron', 'interval', 'once']),
    /** Cron expression (5, 6 or 7 fields, seconds first when 6 or 7; nicknames such as `@daily`). */
    expr: z.string().min(1).max(256).optional(),
    /** IANA time zone name such as `Europe/Berlin`; for `cron`, and for an `at` without offset. */
    tz: z.string().min(1).max(64).optional(),
    /** Interval in milliseconds, at least 1000. */
    everyMs: z.number().int().optional(),
    /** ISO 8601 date-time; without an offset it is read in `tz` (UTC when absent). */
    at: z.string().min(1).max(64).optional(),
  })
  .strict();

/** A schedule as given by a caller. */
export type ScheduleInput = z.infer<typeof scheduleInputSchema>;

/** A validated schedule as stored with its job. */
export type ResolvedSchedule =
  | { kind: 'cron'; expr: string; tz: string }
  | { kind: 'interval'; everyMs: number; anchorMs: number }
  | { kind: 'once'; atMs: number; at: string; tz?: string | undefined };

/** Options of {@link resolveSchedule}. */
export interface ResolveScheduleOptions {
  /** The current time in epoch ms: `at` must lie after it, intervals are anchored to it. */
  now: number;
  /** The zone of a cron job that names none. @default the host's zone */
  defaultTimeZone?: string | undefined;
}

/** True when `tz` names a time zone the runtime's Intl knows. */
export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The host's IANA zone name. */
export function hostTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

const invalid = (field: string, message: string) =>
  CronWakegateError.field('INVALID_SCHEDULE', ['schedule', field], message);

/**
 * Checks a schedule against croner and the clock and returns its stored form. Throws
 * `INVALID_SCHEDULE` naming `schedule.<field>` for a bad expression, an unknown time zone,
 * `everyMs` below {@link MIN_INTERVAL_MS}, `at` in the past, or an expression that never fires.
 */
export function resolveSchedule(input: ScheduleInput, options: ResolveScheduleOptions): ResolvedSchedule {
  const parsed = scheduleInputSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw CronWakegateError.field(
      'INVALID_SCHEDULE',
      ['schedule', ...(issue?.path ?? []).map(String)],
      issue?.message ?? 'invalid schedule',
    );
  }
  const schedule = parsed.data;
  if (schedule.tz !== undefined && !isValidTimeZone(schedule.tz)) {
    throw invalid('tz', `unknown time zone '${schedule.tz}' (use an IANA name such as Europe/Berlin)`);
  }
  switch (schedule.kind) {
    case 'cron': {
      if (schedule.expr === undefined) throw invalid('expr', 'required when kind is cron');
      const tz = schedule.tz ?? options.defaultTimeZone ?? hostTimeZone();
      let next: number | undefined;
      try {
        next = cronNext(schedule.expr, tz, options.now);
      } catch (error) {
        throw invalid('expr', `invalid cron expression: ${(error as Error).message}`);
      }
      if (next === undefined) throw invalid('expr', 'the expression never fires');
      return { kind: 'cron', expr: schedule.expr, tz };
    }
    case 'interval': {
      if (schedule.everyMs === undefined) throw invalid('everyMs', 'required when kind is interval');
      if (schedule.everyMs < MIN_INTERVAL_MS) throw invalid('everyMs', `must be at least ${MIN_INTERVAL_MS}`);
      return { kind: 'interval', everyMs: schedule.everyMs, anchorMs: options.now };
    }
    case 'once': {
      if (schedule.at === undefined) throw invalid('at', 'required when kind is once');
      const atMs = parseAt(schedule.at, schedule.tz);
      if (atMs === undefined) throw invalid('at', 'not an ISO 8601 date-time');
      if (atMs <= options.now) throw invalid('at', 'is in the past');
      return { kind: 'once', atMs, at: schedule.at, tz: schedule.tz };
    }
  }
}

/**
 * The first fire strictly after `afterMs`, or `undefined` when the schedule has none left
 * (a one-shot whose time has passed, an expression with no future match).
 */
export function nextFireAfter(schedule: ResolvedSchedule, afterMs: number): number | undefined {
  switch (schedule.kind) {
    case 'cron':
      return cronNext(schedule.expr, schedule.tz, afterMs);
    case 'interval': {
      const { anchorMs, everyMs } = schedule;
      if (afterMs < anchorMs) return anchorMs + everyMs;
      return anchorMs + (Math.floor((afterMs - anchorMs) / everyMs) + 1) * everyMs;
    }
    case 'once':
      return schedule.atMs > afterMs ? schedule.atMs : undefined;
  }
}

// Croner parses the pattern on construction; jobs fire thousands of times, so one instance is kept per
// pattern and zone (paused: croner never starts its own timer). Croner answers by whole seconds, so the
// last answer per pattern is reused for every job of that pattern firing in the same second.
interface CachedPattern {
  cron: CronType;
  second: number;
  next: number | undefined;
}
const patterns = new Map<string, CachedPattern>();
const MAX_CACHED_PATTERNS = 10_000;

function cronNext(expr: string, tz: string, afterMs: number): number | undefined {
  const key = `${tz}\u0000${expr}`;
  let entry = patterns.get(key);
  if (!entry) {
    entry = {
      cron: newCron(expr, { timezone: tz, paused: true, mode: 'auto' }),
      second: Number.NaN,
      next: undefined,
    };
    if (patterns.size >= MAX_CACHED_PATTERNS) patterns.clear();
    patterns.set(key, entry);
  }
  const second = Math.floor(afterMs / 1000);
  if (entry.second !== second) {
    entry.next = entry.cron.nextRun(new Date(afterMs))?.getTime();
    entry.second = second;
  }
  return entry.next;
}

// A date-time with an explicit offset or Z is an instant; croner reads one without in `tz`.
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?$/;

function parseAt(at: string, tz: string | undefined): number | undefined {
  if (!ISO_DATE_TIME.test(at)) return undefined;
  const hasOffset = /(Z|[+-]\d{2}:?\d{2})$/.test(at);
  if (hasOffset) {
    const ms = Date.parse(at);
    return Number.isNaN(ms) ? undefined : ms;
  }
  try {
    // Croner reads a local ISO string in the given zone and answers its instant (null once passed).
    const cron = newCron(at, { timezone: tz ?? 'UTC', paused: true });
    const onceAt = cron.getOnce();
    return onceAt ? onceAt.getTime() : undefined;
  } catch {
    return undefined;
  }
}
