import { performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

/**
 * Gives memory back once a load is over.
 *
 * Under load V8 grows the young generation to its 16 MB semi-space maximum (32 MB committed) and
 * the old generation with it; when the clients leave, an idle process keeps those pages, because
 * V8's memory reducer only arms after a major collection that an idle daemon never triggers.
 * Measured on the daemon: 2,000 one-turn sessions left RSS 68 MB above where it started 30 s
 * after the last client left, and one full collection brought it back to 20 MB above (issue #23).
 *
 * So the daemon looks at its heap every few seconds (a cheap counter read) and, when the heap has
 * grown well past its size after the last collection and the event loop has been idle for a few
 * looks in a row, runs one full collection. A busy daemon is never interrupted, and an idle one
 * collects at most once per growth: the baseline moves to the size after each collection.
 */
export interface IdleHeapOptions {
  /** How often to look, ms. */
  intervalMs?: number;
  /** Consecutive idle looks before collecting. */
  idleLooks?: number;
  /** Event-loop utilisation (0..1) over one look below which the daemon counts as idle. */
  idleUtilization?: number;
  /** Heap growth over the baseline, bytes, that is worth a collection. */
  growthBytes?: number;
  /** Told of each collection with the heap size before and after (the daemon logs it at debug). */
  onCollect?: (beforeBytes: number, afterBytes: number) => void;
  /**
   * Run after each collection to hand the C heap's free pages back (`loadNativeTrim`): the
   * collection frees the native memory JS objects held, and glibc keeps it until trimmed.
   */
  trimNative?: (() => void) | undefined;
}

type Thresholds = Required<Omit<IdleHeapOptions, 'onCollect' | 'trimNative'>>;

const DEFAULTS: Thresholds = {
  intervalMs: 5_000,
  idleLooks: 2,
  idleUtilization: 0.02,
  growthBytes: 24 * 1024 * 1024,
};

/** How long after a collection the C heap is trimmed (see `trimNative`). */
export const TRIM_DELAY_MS = 500;

/** The decision alone, fed one look at a time, so it can be tested without a process. */
export class IdleHeapWatch {
  private readonly options: Thresholds;
  private baseline: number;
  private idleInARow = 0;

  constructor(initialHeapBytes: number, options: IdleHeapOptions = {}) {
    this.options = { ...DEFAULTS, ...options };
    this.baseline = initialHeapBytes;
  }

  /** One look: answers whether to collect now. */
  look(heapBytes: number, utilization: number): boolean {
    this.idleInARow = utilization < this.options.idleUtilization ? this.idleInARow + 1 : 0;
    // A heap that shrank on its own lowers the bar, so a later growth is measured from there.
    if (heapBytes < this.baseline) this.baseline = heapBytes;
    return this.idleInARow >= this.options.idleLooks && heapBytes - this.baseline > this.options.growthBytes;
  }

  /** Whether a heap just collected is still far enough above the baseline for a second pass. */
  worthAnotherPass(heapBytes: number): boolean {
    return heapBytes - this.baseline > this.options.growthBytes / 2;
  }

  /** Records the heap size a collection left, the baseline of the next growth. */
  collected(heapBytes: number): void {
    this.baseline = heapBytes;
    this.idleInARow = 0;
  }
}

/**
 * V8's full collection, when node was started with `--expose-gc` (the `agentd` launcher, the
 * systemd unit and the Dockerfile pass it); `undefined` otherwise, and the daemon then leaves
 * collections to V8's own memory reducer. Flags are never switched after start: Node documents
 * V8 behaviour after `v8.setFlagsFromString` at run time as undefined.
 */
export function fullCollection(): (() => void) | undefined {
  const own = (globalThis as { gc?: () => void }).gc;
  return typeof own === 'function' ? own : undefined;
}

/** What the watcher reads and does; the process's own unless a test passes its own. */
export interface IdleHeapProbes {
  heapBytes: () => number;
  /** Event-loop utilisation since the previous call. */
  utilization: () => number;
  collect: () => void;
}

function processProbes(collect: () => void): IdleHeapProbes {
  let last = performance.eventLoopUtilization();
  return {
    heapBytes: () => getHeapStatistics().total_heap_size,
    utilization: () => {
      const now = performance.eventLoopUtilization();
      const { utilization } = performance.eventLoopUtilization(now, last);
      last = now;
      return utilization;
    },
    collect,
  };
}

/**
 * Starts watching; returns the function that stops. The timer never keeps the process alive.
 * Without probes of its own and without a full collection to call (see `fullCollection`) there is
 * nothing to do, and nothing is started.
 */
export function startIdleHeapShrink(options: IdleHeapOptions = {}, given?: IdleHeapProbes): () => void {
  const collect = fullCollection();
  const probes = given ?? (collect ? processProbes(collect) : undefined);
  if (!probes) return () => {};
  const watch = new IdleHeapWatch(probes.heapBytes(), options);
  const timer = setInterval(() => {
    const before = probes.heapBytes();
    if (!watch.look(before, probes.utilization())) return;
    // One mark-compact frees the garbage; the pages it emptied are often only released by the
    // next one, so a heap still well above its baseline gets a second pass (measured: 139 → 64
    // → 29 MB of old space after three socket bursts).
    probes.collect();
    if (watch.worthAnotherPass(probes.heapBytes())) probes.collect();
    // V8 frees the native memory of collected objects (array buffers, sockets) on background
    // threads and in finalizers shortly after the pause, so the trim waits for them.
    if (options.trimNative) setTimeout(options.trimNative, TRIM_DELAY_MS).unref();
    const after = probes.heapBytes();
    watch.collected(after);
    options.onCollect?.(before, after);
  }, options.intervalMs ?? DEFAULTS.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
