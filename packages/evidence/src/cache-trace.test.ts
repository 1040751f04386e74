import { describe, expect, it } from 'vitest';
import { cacheTraceRecordSchema } from './cache-trace.js';

describe('cacheTraceRecordSchema', () => {
  it('rejects a record without the cache figures', () => {
    expect(cacheTraceRecordSchema.safeParse({ ts: 1, traceId: 't', step: 1 }).success).toBe(false);
  });
});
