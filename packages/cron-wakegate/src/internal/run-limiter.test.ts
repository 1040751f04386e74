import { describe, expect, it } from 'vitest';
import { deferred } from '@agentd/test-support';
import { RunLimiter } from './run-limiter.js';

describe('RunLimiter.limit', () => {
  it('starts waiting tasks when raised and lets running ones finish when lowered', async () => {
    const limiter = new RunLimiter(1);
    const gates = [deferred<void>(), deferred<void>(), deferred<void>()];
    let started = 0;
    for (const gate of gates) {
      limiter.run(async () => {
        started += 1;
        await gate.promise;
      });
    }
    expect(started).toBe(1);
    limiter.limit = 2;
    expect(started).toBe(2);
    limiter.limit = 1;
    for (const gate of gates) gate.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toBe(3);
    expect(limiter.active).toBe(0);
  });
});
