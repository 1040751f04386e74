import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8';

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
 *
 * The young generation is looked at on its own. Start-up grows it to its maximum as a load does,
 * and V8 shrinks it only in a collection that finds the allocation rate of the last 5 s low; a
 * collection right after start-up or a load keeps it. Measured on `agentd start` with its
 * embedded defaults: a collection as the daemon starts listening left RSS at 108-116 MB with the
 * young generation at 32 MB committed and 0.1 MB used; a collection after 10 s of idle brought it
 * to 87-91 MB (1 MB committed). So an idle daemon whose young generation holds much more than it
 * uses is collected too, and again on a later idle run (at most `youngTries` times in a row)
 * while V8 has not yet given it back.
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
  /** Young-generation pages committed beyond its use, bytes, that are worth a collection. */
  youngSlackBytes?: number;
  /** Collections in a row for the young generation alone before the watcher stops trying. */
  youngTries?: number;
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
  youngSlackBytes: 8 * 1024 * 1024,
  youngTries: 3,
};

/** How long after a collection the C heap is trimmed (see `trimNative`). */
export const TRIM_DELAY_MS = 500;

/** The decision alone, fed one look at a time, so it can be tested without a process. */
export class IdleHeapWatch {
  private readonly options: Thresholds;
  private baseline: number;
  private idleInARow = 0;
  private youngTried = 0;
  private grew = false;

  constructor(initialHeapBytes: number, options: IdleHeapOptions = {}) {
    const { onCollect: _told, trimNative: _trim, ...thresholds } = options;
    this.options = { ...DEFAULTS, ...thresholds };
    this.baseline = initialHeapBytes;
  }

  /**
   * One look: answers whether to collect now. `youngSlackBytes` is the young generation's
   * committed size less its use.
   */
  look(heapBytes: number, utilization: number, youngSlackBytes = 0): boolean {
    this.idleInARow = utilization < this.options.idleUtilization ? this.idleInARow + 1 : 0;
    // A heap that shrank on its own lowers the bar, so a later growth is measured from there.
    if (heapBytes < this.baseline) this.baseline = heapBytes;
    if (this.idleInARow < this.options.idleLooks) return false;
    this.grew = heapBytes - this.baseline > this.options.growthBytes;
    const young = youngSlackBytes > this.options.youngSlackBytes && this.youngTried < this.options.youngTries;
    return this.grew || young;
  }

  /** Whether a heap just collected is still far enough above the baseline for a second pass. */
  worthAnotherPass(heapBytes: number): boolean {
    return heapBytes - this.baseline > this.options.growthBytes / 2;
  }

  /**
   * Records the heap size a collection left, the baseline of the next growth, and the young
   * generation's slack after it: still over the bar, it counts as one more try.
   */
  collected(heapBytes: number, youngSlackBytes = 0): void {
    this.baseline = heapBytes;
    this.idleInARow = 0;
    if (youngSlackBytes <= this.options.youngSlackBytes) this.youngTried = 0;
    else this.youngTried = this.grew ? 1 : this.youngTried + 1;
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
  /** The young generation's committed size less its use (0 where a test does not model it). */
  youngSlackBytes?: () => number;
  /** Event-loop utilisation since the previous call. */
  utilization: () => number;
  collect: () => void;
}

function processProbes(collect: () => void): IdleHeapProbes {
  let last = performance.eventLoopUtilization();
  return {
    heapBytes: () => getHeapStatistics().total_heap_size,
    youngSlackBytes: () => {
      const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
      return young ? young.space_size - young.space_used_size : 0;
    },
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
    const youngSlack = () => probes.youngSlackBytes?.() ?? 0;
    if (!watch.look(before, probes.utilization(), youngSlack())) return;
    // One mark-compact frees the garbage; the pages it emptied are often only released by the
    // next one, so a heap still well above its baseline gets a second pass (measured: 139 → 64
    // → 29 MB of old space after three socket bursts).
    probes.collect();
    if (watch.worthAnotherPass(probes.heapBytes())) probes.collect();
    // V8 frees the native memory of collected objects (array buffers, sockets) on background
    // threads and in finalizers shortly after the pause, so the trim waits for them.
    if (options.trimNative) setTimeout(options.trimNative, TRIM_DELAY_MS).unref();
    const after = probes.heapBytes();
    watch.collected(after, youngSlack());
    options.onCollect?.(before, after);
  }, options.intervalMs ?? DEFAULTS.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
