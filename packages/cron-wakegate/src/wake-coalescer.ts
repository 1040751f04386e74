import { AsyncResource } from 'node:async_hooks';
import { z } from 'zod';
import { CronWakegateError } from './errors.js';
import { type CronLogger, noopLogger } from './logger.js';

/** One wake request as the coalescer hands it to its runner. */
export interface WakeRequest {
  /** Who asked, e.g. `agent`, `webhook`, `interval`, `trigger`. */
  source: string;
  /** When the request arrived (epoch ms). */
  at: number;
}

/** What {@link WakeCoalescer.request} tells the caller. */
export interface WakeRequestReceipt {
  /** True when the request joined a run already pending, so it caused no run of its own. */
  coalesced: boolean;
}

/** Options of {@link createWakeCoalescer}. */
export interface WakeCoalescerOptions {
  /** Runs once per window with every request the window collected. Errors are logged, not rethrown. */
  run: (requests: WakeRequest[]) => Promise<void>;
  /**
   * How long the first request waits for others to join it, in milliseconds.
   * @default 250
   */
  windowMs?: number | undefined;
  /**
   * Clock for `WakeRequest.at`.
   * @default Date.now
   */
  now?: (() => number) | undefined;
  /** @default a logger that drops everything */
  logger?: CronLogger | undefined;
}

/** Collapses bursts of wake requests into single runs. */
export interface WakeCoalescer {
  /** Asks for a run; fire-and-forget. */
  request(source: string): WakeRequestReceipt;
  /** True while a window is open or a run is in progress. */
  readonly busy: boolean;
  /** Resolves once no window is open and no run is in progress. */
  idle(): Promise<void>;
  /** Runs counted since creation. */
  readonly runs: number;
  /**
   * How long the first request waits for others, in milliseconds; a new value applies from the next window.
   * @throws {CronWakegateError} `INVALID_OPTIONS` on set, for a value outside 0-60000.
   */
  windowMs: number;
  /** Drops a pending window and waits for a run in progress. Later requests are ignored. */
  close(): Promise<void>;
}

const optionsSchema = z.object({ windowMs: z.number().int().min(0).max(60_000).default(250) });

/**
 * A wake coalescer: the first request opens a window of `windowMs`; every request that
 * arrives before it closes joins the same run. Requests arriving while a run is in progress
 * open the next window, whose run starts only after the current one ends, so runs never
 * overlap and no request is lost.
 */
export function createWakeCoalescer(options: WakeCoalescerOptions): WakeCoalescer {
  const parsed = optionsSchema.safeParse({ windowMs: options.windowMs });
  if (!parsed.success) {
    throw new CronWakegateError('INVALID_OPTIONS', `invalid wake coalescer options: ${parsed.error.message}`);
  }
  let { windowMs } = parsed.data;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? noopLogger;
  let pending: WakeRequest[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  let runs = 0;
  let waiters: Array<() => void> = [];
  // A run merges requests from many callers, so it runs in the coalescer's own context, not the first caller's.
  const detached = new AsyncResource('agentd.wake');
  const wakeWaiters = () => {
    if (pending.length > 0 || running) return;
    const ready = waiters;
    waiters = [];
    for (const waiter of ready) waiter();
  };

  const launch = () => {
    timer = undefined;
    if (closed || pending.length === 0) return;
    if (running) return; // the run in progress launches this window when it ends
    const batch = pending;
    pending = [];
    runs += 1;
    running = options
      .run(batch)
      .catch((err: unknown) => {
        logger.error(
          {
            err,
            hint: 'the wake run failed; see the error, the next wake runs again',
            errorKind: 'internal',
          },
          'wake run failed',
        );
      })
      .finally(() => {
        running = undefined;
        if (pending.length > 0 && timer === undefined) launch();
        wakeWaiters();
      });
  };

  return {
    request(source) {
      if (closed) return { coalesced: true };
      const joining = pending.length > 0;
      pending.push({ source, at: now() });
      if (!joining && timer === undefined) {
        if (windowMs === 0) {
          // A zero window still merges requests made in the same tick.
          queueMicrotask(() => detached.runInAsyncScope(launch));
        } else {
          timer = setTimeout(() => detached.runInAsyncScope(launch), windowMs);
          timer.unref?.();
        }
      }
      return { coalesced: joining };
    },
    get busy() {
      return pending.length > 0 || running !== undefined;
    },
    idle() {
      if (pending.length === 0 && !running) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
    get runs() {
      return runs;
    },
    get windowMs() {
      return windowMs;
    },
    set windowMs(value: number) {
      const checked = optionsSchema.shape.windowMs.safeParse(value);
      if (!checked.success) {
        throw new CronWakegateError('INVALID_OPTIONS', `invalid wake window: ${checked.error.message}`);
      }
      windowMs = checked.data;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      pending = [];
      await running;
      wakeWaiters();
    },
  };
}
