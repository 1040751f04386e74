import { RpcError } from '@agentd/rpc-core';

/**
 * Sheds load while the process's resident memory is above a high-water mark, instead of
 * letting the kernel's OOM killer end the daemon without a word.
 *
 * Every `intervalMs` the guard reads the resident set (a counter read). Above the mark it
 * starts shedding: new agent turns are refused with a typed "overloaded, retry after" error
 * (calls that start no turn, and turns already running, go on), the per-connection rate limits
 * allow half their events ({@link SHEDDING_LIMIT_SHARE}), the caches are dropped, and the
 * change is logged and counted. It stops shedding once memory falls below 90 % of the mark (a
 * margin, so it does not flap on the line).
 */
export interface MemoryGuardOptions {
  /** The high-water mark, MB of resident memory; 0 turns the guard off. */
  highWaterMb: number;
  /** How often to look. @default 5000 */
  intervalMs?: number;
  /** Resident memory in bytes. @default process.memoryUsage.rss */
  rss?: () => number;
  /** Told of each change: shedding started (with the MB seen) or ended. */
  onChange?: (shedding: boolean, rssMb: number) => void;
  /** Frees what can be rebuilt (caches); called when shedding starts. */
  dropCaches?: () => void;
}

/** The guard of one daemon. */
export interface MemoryGuard {
  /** Whether new turns are being refused. */
  readonly shedding: boolean;
  /** Throws the overloaded error while shedding. */
  admitTurn(): void;
  /** The share of each rate limit allowed now: 1, or {@link SHEDDING_LIMIT_SHARE} while shedding. */
  limitShare(): number;
  /** Looks once now (the timer calls it; tests call it directly). */
  check(): void;
  stop(): void;
}

/** The share of each rate limit's events allowed while shedding. */
export const SHEDDING_LIMIT_SHARE = 0.5;

/** How long a refused caller is told to wait, seconds. */
export const OVERLOADED_RETRY_AFTER_S = 10;

/** The error of a turn refused under memory pressure: `-32000` with `data.code: 'OVERLOADED'`. */
export function overloadedError(highWaterMb: number): RpcError {
  return new RpcError(
    -32000,
    `Overloaded: the daemon's memory is above gateway.memoryHighWaterMb (${highWaterMb} MB); new turns are refused until it falls, retry after ${OVERLOADED_RETRY_AFTER_S} s`,
    { data: { code: 'OVERLOADED', retryAfterMs: OVERLOADED_RETRY_AFTER_S * 1000 } },
  );
}

/** Starts the guard; its timer never keeps the process alive. */
export function startMemoryGuard(options: MemoryGuardOptions): MemoryGuard {
  const rss = options.rss ?? (() => process.memoryUsage.rss());
  const mark = options.highWaterMb * 2 ** 20;
  let shedding = false;
  const guard: MemoryGuard = {
    get shedding() {
      return shedding;
    },
    admitTurn() {
      if (shedding) throw overloadedError(options.highWaterMb);
    },
    limitShare: () => (shedding ? SHEDDING_LIMIT_SHARE : 1),
    check() {
      if (mark <= 0) return;
      const bytes = rss();
      const next = shedding ? bytes > mark * 0.9 : bytes > mark;
      if (next === shedding) return;
      shedding = next;
      if (shedding) options.dropCaches?.();
      options.onChange?.(shedding, Math.round(bytes / 2 ** 20));
    },
    stop: () => clearInterval(timer),
  };
  const timer = setInterval(() => guard.check(), options.intervalMs ?? 5000);
  timer.unref();
  if (mark <= 0) clearInterval(timer);
  return guard;
}
