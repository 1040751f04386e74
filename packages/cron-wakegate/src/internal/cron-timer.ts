import type { AsyncResource } from 'node:async_hooks';
import type { FireTrigger } from '../cron-types.js';
import { nextFireAfter } from '../schedule.js';
import type { JobState } from './cron-context.js';
import { DueHeap } from './due-heap.js';

const MAX_TIMER_MS = 60_000;

/** What the timer needs from the service. */
export interface TimerHost {
  readonly byId: Map<string, JobState>;
  readonly now: () => number;
  /** The scope fires run in (see {@link CronContext.detached}). */
  readonly detached: AsyncResource;
  /** False while the service is closed, not yet started, or scheduling is disabled. */
  canFire(): boolean;
  fire(job: JobState, trigger: FireTrigger, scheduledAtMs: number): void;
}

/**
 * The scheduler's clock: a heap of due times, one timer armed for the
 * earliest, and the computation of each job's next fire time (deferred to the
 * next turn of the event loop after a fire).
 */
export class CronTimer {
  readonly #host: TimerHost;
  readonly #heap = new DueHeap();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerDue = Number.POSITIVE_INFINITY;
  // A burst of fires starts every executor first; next times (croner work) are computed on the
  // following turn of the event loop, so the last job of a thousand is not late by the first 999's
  // schedule arithmetic. Anything that reads or changes a job settles its pending advance first.
  #pendingAdvances: JobState[] = [];

  constructor(host: TimerHost) {
    this.#host = host;
  }

  /** Queues a due time without arming the timer (start-up loads many at once, then arms). */
  enqueue(due: number, id: string): void {
    this.#heap.push({ due, id });
  }

  /** Queues the job's next fire and re-arms when it is the earliest. */
  schedule(job: JobState): void {
    if (!job.enabled || job.nextRunAtMs <= 0 || job.removed) return;
    this.#heap.push({ due: job.nextRunAtMs, id: job.id });
    if (job.nextRunAtMs < this.#timerDue) this.arm();
  }

  /** Arms the timer for the earliest real fire. */
  arm(): void {
    if (!this.#host.canFire()) return;
    const heap = this.#heap;
    // Drop entries whose job moved on, so the timer is armed for a real fire.
    for (let top = heap.peek(); top; top = heap.peek()) {
      const job = this.#host.byId.get(top.id);
      if (job && !job.removed && job.enabled && job.nextRunAtMs === top.due) break;
      heap.pop();
    }
    const top = heap.peek();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    if (!top) return;
    // Long waits are cut into pieces so a wall-clock change (suspend, NTP step) is noticed within a minute.
    const delay = Math.min(Math.max(0, top.due - this.#host.now()), MAX_TIMER_MS);
    this.#timerDue = top.due;
    this.#timer = setTimeout(() => this.#host.detached.runInAsyncScope(() => this.#onTimer()), delay);
    this.#timer.unref?.();
  }

  /** Clears the armed timer and forgets its due time, so the next {@link arm} starts afresh. */
  disarm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
  }

  /** Clears the armed timer. */
  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
  }

  #onTimer(): void {
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    const heap = this.#heap;
    const at = this.#host.now();
    for (let top = heap.peek(); top && top.due <= at; top = heap.peek()) {
      heap.pop();
      const job = this.#host.byId.get(top.id);
      if (!job || job.removed || !job.enabled || job.nextRunAtMs !== top.due) continue;
      this.#host.fire(job, 'schedule', top.due);
    }
    this.arm();
  }

  /** Moves a job past `afterMs`: a recurring job to its next fire, a one-shot to none. */
  advance(job: JobState, afterMs: number): void {
    job.advanceAfter = undefined;
    if (job.schedule.kind === 'once') {
      job.nextRunAtMs = 0;
      return;
    }
    const next = nextFireAfter(job.schedule, afterMs);
    if (next === undefined) {
      // A 7-field expression whose last year has passed: nothing left to fire.
      job.nextRunAtMs = 0;
      job.enabled = false;
      return;
    }
    job.nextRunAtMs = next;
    this.schedule(job);
  }

  /** Marks the job to advance past `afterMs` on the next turn of the event loop. */
  deferAdvance(job: JobState, afterMs: number): void {
    job.advanceAfter = afterMs;
    if (this.#pendingAdvances.push(job) === 1)
      setImmediate(() => this.#host.detached.runInAsyncScope(() => this.flushAdvances()));
  }

  /** Settles every deferred advance now. */
  flushAdvances(): void {
    const jobs = this.#pendingAdvances;
    this.#pendingAdvances = [];
    for (const job of jobs) this.settleAdvance(job);
  }

  /** Settles the job's deferred advance, if any. */
  settleAdvance(job: JobState): void {
    if (job.advanceAfter !== undefined) this.advance(job, job.advanceAfter);
  }
}
