import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { currentTrace, runWithTrace } from './trace.js';

describe('runWithTrace', () => {
  it('returns the callback result and binds the context only inside', async () => {
    expect(currentTrace()).toBeUndefined();
    const result = await runWithTrace({ traceId: 't', clientId: 'c' }, async () => {
      await sleep(1);
      return currentTrace();
    });
    expect(result).toEqual({ traceId: 't', clientId: 'c' });
    expect(currentTrace()).toBeUndefined();
  });

  it('merges nested contexts with the inner fields winning', () => {
    runWithTrace({ traceId: 'outer', connectionId: 'conn' }, () => {
      runWithTrace({ traceId: 'inner', method: 'cron.list' }, () => {
        expect(currentTrace()).toEqual({ traceId: 'inner', connectionId: 'conn', method: 'cron.list' });
      });
      expect(currentTrace()).toEqual({ traceId: 'outer', connectionId: 'conn' });
    });
  });
});

describe('currentTrace', () => {
  it('returns a frozen copy so callers cannot alter the context', () => {
    const context = { traceId: 'x' };
    runWithTrace(context, () => {
      const bound = currentTrace()!;
      expect(Object.isFrozen(bound)).toBe(true);
      expect(bound).not.toBe(context);
    });
  });
});
