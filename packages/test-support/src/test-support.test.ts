import { existsSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deferred, recordingLogger, tempDirs } from './index.js';

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

describe('tempDirs', () => {
  it('makes distinct prefixed directories and removes them all with their contents', () => {
    const dirs = tempDirs('agentd-support-');
    const first = dirs.make();
    const second = dirs.make();
    expect(first).not.toBe(second);
    expect(basename(first).startsWith('agentd-support-')).toBe(true);
    writeFileSync(join(first, 'file.txt'), 'x');
    dirs.removeAll();
    expect(existsSync(first)).toBe(false);
    expect(existsSync(second)).toBe(false);
    dirs.removeAll();
  });
});
