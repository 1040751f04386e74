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
