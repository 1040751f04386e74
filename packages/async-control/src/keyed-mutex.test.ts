import { describe, expect, it } from 'vitest';
import { KeyedMutex } from './keyed-mutex.js';

function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('KeyedMutex', () => {
  it('runs the tasks of one key one at a time, in call order', async () => {
    const mutex = new KeyedMutex();
    const order: string[] = [];
    const first = gate();
    const a = mutex.run('k', async () => {
      order.push('a start');
      await first.promise;
      order.push('a end');
      return 'a';
    });
    const b = mutex.run('k', () => {
      order.push('b');
      return 'b';
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(order).toEqual(['a start']);
    first.open();
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(order).toEqual(['a start', 'a end', 'b']);
  });

  it('runs tasks of different keys in parallel', async () => {
    const mutex = new KeyedMutex();
    const held = gate();
    const slow = mutex.run('one', () => held.promise);
    expect(await mutex.run('two', () => 'other key')).toBe('other key');
    expect(mutex.size).toBe(1);
    held.open();
    await slow;
  });

  it('gives a failing task its own rejection and runs the next task anyway', async () => {
    const mutex = new KeyedMutex();
    const failed = mutex.run('k', () => Promise.reject(new Error('boom')));
    const thrown = mutex.run('k', () => {
      throw new Error('sync boom');
    });
    const next = mutex.run('k', () => 'still runs');
    await expect(failed).rejects.toThrow('boom');
    await expect(thrown).rejects.toThrow('sync boom');
    expect(await next).toBe('still runs');
  });

  it('forgets a key once its tasks have settled, __proto__ included', async () => {
    const mutex = new KeyedMutex();
    await mutex.run('__proto__', () => 1);
    await mutex.run('k', () => Promise.reject(new Error('x'))).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(mutex.size).toBe(0);
  });
});
