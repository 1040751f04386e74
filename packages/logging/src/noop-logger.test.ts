import { describe, expect, it } from 'vitest';
import { noopLogger } from './noop-logger.js';

describe('noopLogger', () => {
  it('accepts every call, reports every level disabled and returns itself as child', () => {
    noopLogger.info('x');
    noopLogger.warn({ hint: 'h', errorKind: 'internal' }, 'y');
    noopLogger.audit({}, 'z');
    expect(noopLogger.isLevelEnabled('fatal')).toBe(false);
    expect(noopLogger.level).toBe('silent');
    expect(noopLogger.child({ module: 'agent' })).toBe(noopLogger);
  });
});
