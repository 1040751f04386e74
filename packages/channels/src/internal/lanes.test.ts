import { describe, expect, it } from 'vitest';
import { createLanes } from './lanes.js';

interface Item {
  name: string;
  at: number;
  dueAt(): number;
}

const item = (name: string, at = 0): Item => ({ name, at, dueAt: () => at });

/** Lanes whose work is recorded and released by hand, so a test sees what runs at once. */
function harness(concurrency: number) {
  const started: string[] = [];
  const release = new Map<string, (keep: boolean) => void>();
  const lanes = createLanes<Item>({
    concurrency,
    now: () => Date.now(),
    run: (entry) =>
      new Promise<boolean>((resolve) => {
        started.push(entry.name);
        release.set(entry.name, resolve);
      }),
    onError: () => undefined,
  });
  const finish = async (name: string, keep = false) => {
    release.get(name)?.(keep);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { lanes, started, finish };
}

describe('lanes', () => {
  it('runs one item per chat at a time, chats side by side up to the concurrency, waiting chats in turn', async () => {
    const { lanes, started, finish } = harness(2);
    expect(lanes.startsAt('a')).toBe(true);
    lanes.add('a', item('a1'));
    lanes.add('a', item('a2'));
    lanes.add('b', item('b1'));
    expect(lanes.startsAt('a')).toBe(false);
    expect(lanes.startsAt('c')).toBe(false);
    lanes.add('c', item('c1'));
    lanes.add('d', item('d1'));
    expect(started).toEqual(['a1', 'b1']);
    await finish('a1');
    // Chat a keeps its slot for its next item; c and d wait for a slot in the order they came.
    expect(started).toEqual(['a1', 'b1', 'a2']);
    await finish('b1');
    expect(started).toEqual(['a1', 'b1', 'a2', 'c1']);
    await finish('a2');
    expect(started).toEqual(['a1', 'b1', 'a2', 'c1', 'd1']);
    await finish('c1');
    await finish('d1');
    expect(lanes.startsAt('a')).toBe(true);
    await lanes.close();
  });

  it('lets due items pass one that waits, and wakes the lane when that one comes due', async () => {
    const { lanes, started, finish } = harness(1);
    lanes.add('a', item('later', Date.now() + 60));
    lanes.add('a', item('now'));
    expect(started).toEqual(['now']);
    await finish('now');
    expect(started).toEqual(['now']);
    // Nothing is due: the slot is free for other chats meanwhile.
    expect(lanes.startsAt('b')).toBe(true);
    await expect.poll(() => started).toEqual(['now', 'later']);
    await finish('later');
    await lanes.close();
  });

  it('starts nothing once closed, and close waits for the item in progress', async () => {
    const { lanes, started, finish } = harness(1);
    lanes.add('a', item('a1'));
    lanes.add('a', item('a2'));
    let closed = false;
    const closing = lanes.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    expect(lanes.startsAt('b')).toBe(false);
    await finish('a1');
    await closing;
    expect(started).toEqual(['a1']);
  });
});
