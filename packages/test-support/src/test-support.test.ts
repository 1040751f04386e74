import { describe, expect, it } from 'vitest';
import { deferred, recordingLogger } from './index.js';

describe('recordingLogger', () => {
  it('keeps every call with its level, fields and message, in order', () => {
    const logger = recordingLogger();
    logger.info({ id: 1 }, 'started');
    logger.warn({ hint: 'h', errorKind: 'internal' });
    logger.debug({}, 'tick');
    logger.error({ hint: 'x', errorKind: 'network' }, 'failed');
    expect(logger.entries).toEqual([
      { level: 'info', fields: { id: 1 }, message: 'started' },
      { level: 'warn', fields: { hint: 'h', errorKind: 'internal' }, message: undefined },
      { level: 'debug', fields: {}, message: 'tick' },
      { level: 'error', fields: { hint: 'x', errorKind: 'network' }, message: 'failed' },
    ]);
  });
});

describe('deferred', () => {
  it('resolves with the value the test gives', async () => {
    const pending = deferred<number>();
    pending.resolve(7);
    await expect(pending.promise).resolves.toBe(7);
  });

  it('rejects with the error the test gives', async () => {
    const pending = deferred<number>();
    const error = new Error('stopped');
    pending.reject(error);
    await expect(pending.promise).rejects.toBe(error);
  });
});
