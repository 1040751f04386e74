import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IdleHeapWatch, startIdleHeapShrink, TRIM_DELAY_MS } from './idle-heap.js';

const MB = 1024 * 1024;

describe('IdleHeapWatch', () => {
  const options = { idleLooks: 3, idleUtilization: 0.02, growthBytes: 24 * MB };

  it('collects once the heap has grown and the loop has been idle for the set number of looks', () => {
    const watch = new IdleHeapWatch(40 * MB, options);
    expect(watch.look(90 * MB, 0.5)).toBe(false); // busy
    expect(watch.look(90 * MB, 0.01)).toBe(false); // idle 1
    expect(watch.look(90 * MB, 0.01)).toBe(false); // idle 2
    expect(watch.look(90 * MB, 0.01)).toBe(true); // idle 3
  });

  it('never collects a busy daemon, whatever its heap', () => {
    const watch = new IdleHeapWatch(40 * MB, options);
    for (let i = 0; i < 20; i++) expect(watch.look(200 * MB, i % 3 === 2 ? 0.3 : 0.01)).toBe(false);
  });

  it('leaves a heap alone that has not grown past the threshold', () => {
    const watch = new IdleHeapWatch(40 * MB, options);
    for (let i = 0; i < 10; i++) expect(watch.look(60 * MB, 0)).toBe(false);
  });

  it('collects at most once per growth: the size a collection left is the next baseline', () => {
    const watch = new IdleHeapWatch(40 * MB, options);
    for (let i = 0; i < 2; i++) watch.look(90 * MB, 0);
    expect(watch.look(90 * MB, 0)).toBe(true);
    watch.collected(70 * MB);
    for (let i = 0; i < 10; i++) expect(watch.look(70 * MB, 0)).toBe(false);
    for (let i = 0; i < 2; i++) watch.look(100 * MB, 0);
    expect(watch.look(100 * MB, 0)).toBe(true);
  });

  it('collects an idle daemon whose young generation holds far more than it uses, retrying a bounded number of times', () => {
    const watch = new IdleHeapWatch(40 * MB, { ...options, youngSlackBytes: 8 * MB, youngTries: 3 });
    expect(watch.look(40 * MB, 0.5, 30 * MB)).toBe(false); // busy
    expect(watch.look(40 * MB, 0.01, 30 * MB)).toBe(false);
    expect(watch.look(40 * MB, 0.01, 2 * MB)).toBe(false); // idle, little slack
    expect(watch.look(40 * MB, 0.01, 30 * MB)).toBe(true);
    // V8 kept the pages: two more tries on later idle runs, then the watcher stops asking.
    for (let tried = 1; tried < 3; tried++) {
      watch.collected(40 * MB, 30 * MB);
      for (let i = 0; i < 2; i++) expect(watch.look(40 * MB, 0, 30 * MB)).toBe(false);
      expect(watch.look(40 * MB, 0, 30 * MB)).toBe(true);
    }
    watch.collected(40 * MB, 30 * MB);
    for (let i = 0; i < 10; i++) expect(watch.look(40 * MB, 0, 30 * MB)).toBe(false);
    // A growth still collects, and counts as the first try of a new run.
    for (let i = 0; i < 2; i++) watch.look(70 * MB, 0, 30 * MB);
    expect(watch.look(70 * MB, 0, 30 * MB)).toBe(true);
    watch.collected(45 * MB, 30 * MB);
    for (let i = 0; i < 2; i++) watch.look(45 * MB, 0, 30 * MB);
    expect(watch.look(45 * MB, 0, 30 * MB)).toBe(true);
    // Once V8 gave them back, the count starts over.
    watch.collected(45 * MB, 1 * MB);
    for (let i = 0; i < 10; i++) expect(watch.look(45 * MB, 0, 1 * MB)).toBe(false);
  });

  it('asks for a second pass only while a collected heap stays above half the growth threshold', () => {
    const watch = new IdleHeapWatch(40 * MB, options);
    expect(watch.worthAnotherPass(80 * MB)).toBe(true);
    expect(watch.worthAnotherPass(50 * MB)).toBe(false);
  });
});

describe('startIdleHeapShrink', () => {
  afterEach(() => vi.useRealTimers());

  it('collects on its timer once idle and grown, twice when one pass leaves the heap high, then waits for new growth', () => {
    vi.useFakeTimers();
    let heap = 40 * MB;
    let busy = 0.5;
    const passes: number[] = [];
    const reports: number[][] = [];
    const collect = () => {
      passes.push(heap);
      heap = heap > 70 * MB ? 60 * MB : 45 * MB;
    };
    const stop = startIdleHeapShrink(
      { intervalMs: 1000, idleLooks: 2, growthBytes: 24 * MB, onCollect: (b, a) => reports.push([b, a]) },
      { heapBytes: () => heap, utilization: () => busy, collect },
    );
    heap = 90 * MB;
    vi.advanceTimersByTime(5000);
    expect(passes).toEqual([]); // busy the whole time
    busy = 0;
    vi.advanceTimersByTime(2000);
    expect(passes).toEqual([90 * MB, 60 * MB]);
    expect(reports).toEqual([[90 * MB, 45 * MB]]);
    vi.advanceTimersByTime(20_000);
    expect(passes).toHaveLength(2);
    stop();
  });

  it('hands the C heap back TRIM_DELAY_MS after each collection, once V8 has freed what it held', () => {
    vi.useFakeTimers();
    let heap = 40 * MB;
    const events: string[] = [];
    const stop = startIdleHeapShrink(
      { intervalMs: 1000, idleLooks: 1, growthBytes: 24 * MB, trimNative: () => events.push('trim') },
      {
        heapBytes: () => heap,
        utilization: () => 0,
        collect: () => {
          events.push('collect');
          heap = 41 * MB;
        },
      },
    );
    vi.advanceTimersByTime(1000);
    expect(events).toEqual([]); // no growth yet
    heap = 90 * MB;
    vi.advanceTimersByTime(1000);
    expect(events).toEqual(['collect']);
    vi.advanceTimersByTime(TRIM_DELAY_MS - 1);
    expect(events).toEqual(['collect']);
    vi.advanceTimersByTime(1);
    expect(events).toEqual(['collect', 'trim']);
    stop();
  });

  it("uses V8's real full collection when node was started with --expose-gc", () => {
    const script = `
      import { fullCollection } from ${JSON.stringify(join(import.meta.dirname, 'idle-heap.ts'))};
      const collect = fullCollection();
      let keep = [];
      for (let i = 0; i < 1_000_000; i++) keep.push({ i, s: 'x' + i });
      keep = null;
      const before = process.memoryUsage().heapUsed;
      collect();
      console.log(JSON.stringify({ before, after: process.memoryUsage().heapUsed }));
    `;
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script],
      { encoding: 'utf8' },
    );
    const { before, after } = JSON.parse(out) as { before: number; after: number };
    expect(after).toBeLessThan(before - 32 * MB);
  });

  it('gives back the young generation a burst of allocation grew, with no heap growth to trigger it', () => {
    // The burst grows V8's young generation to its maximum (32 MB committed); the heap's growth
    // threshold is set out of reach, so only the young generation's slack can start a collection.
    // V8 gives the pages back in a collection that finds the last 5 s of allocation low, which
    // the watcher's first try (after 6 idle looks of 1 s) does, or else its second, 6 s later.
    const script = `
      import { getHeapSpaceStatistics } from 'node:v8';
      import { startIdleHeapShrink } from ${JSON.stringify(join(import.meta.dirname, 'idle-heap.ts'))};
      const young = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
      let keep = [];
      for (let i = 0; i < 1_000_000; i++) keep.push({ i, s: 'x' + i });
      keep = null;
      const grown = young();
      let collections = 0;
      startIdleHeapShrink({ intervalMs: 1000, idleLooks: 6, growthBytes: 2 ** 40, onCollect: () => collections++ });
      for (let waited = 0; waited < 20_000 && young() > 4 * 2 ** 20; waited += 250) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      console.log(JSON.stringify({ grown, settled: young(), collections }));
    `;
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script],
      { encoding: 'utf8' },
    );
    const { grown, settled, collections } = JSON.parse(out) as Record<string, number>;
    expect(grown).toBeGreaterThanOrEqual(16 * MB);
    expect(collections).toBeGreaterThanOrEqual(1);
    expect(collections).toBeLessThanOrEqual(2);
    expect(settled).toBeLessThanOrEqual(4 * MB);
  }, 60_000);

  it('has no collection to offer, and switches no V8 flag, when node was started without --expose-gc', () => {
    const script = `
      import { fullCollection, startIdleHeapShrink } from ${JSON.stringify(join(import.meta.dirname, 'idle-heap.ts'))};
      const stop = startIdleHeapShrink();
      stop();
      console.log(JSON.stringify({ collect: typeof fullCollection(), globalGc: typeof globalThis.gc }));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual({ collect: 'undefined', globalGc: 'undefined' });
  });
});
