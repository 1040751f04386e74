import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { logRotationSchema } from '@agentd/logging';
import {
  CACHE_TRACE_FILE,
  type CacheTraceRecord,
  cacheTraceRecordSchema,
  openCacheTrace,
} from './cache-trace.js';
import { tempDirEachTest, warningLogger } from './testing.js';

describe('cacheTraceRecordSchema', () => {
  it('rejects a record without the cache figures', () => {
    expect(cacheTraceRecordSchema.safeParse({ ts: 1, traceId: 't', step: 1 }).success).toBe(false);
  });
});

describe('openCacheTrace', () => {
  const temp = tempDirEachTest('cache-trace-', { beforeEach, afterEach });

  const record = (step: number): CacheTraceRecord => ({
    ts: 1,
    traceId: 'trace-1',
    sessionKey: 'web:chat-1:main',
    agentId: 'main',
    provider: 'local',
    model: 'm',
    step,
    inputTokens: 10,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    hit: false,
  });

  it('takes a new roll size and directory in place (applyOptions)', async () => {
    const logDir = join(temp.path, 'logs');
    const logRotation = logRotationSchema.parse({ compressAged: false });
    const trace = await openCacheTrace({
      dataDir: temp.path,
      logDir,
      tracing: undefined,
      logRotation,
      now: () => 0,
      logger: warningLogger().logger,
    });
    if (!trace) throw new Error('cache trace not opened');
    for (let step = 1; step <= 5; step++) trace.append(record(step));
    expect(readdirSync(logDir)).toEqual([CACHE_TRACE_FILE]);
    trace.applyOptions({ dataDir: temp.path, logDir, tracing: { maxSize: 300, maxFiles: 2 }, logRotation });
    for (let step = 6; step <= 12; step++) trace.append(record(step));
    trace.applyOptions({
      dataDir: temp.path,
      logDir,
      tracing: { outputDir: 'traces', maxSize: 300, maxFiles: 2 },
      logRotation,
    });
    trace.append(record(13));
    await trace.close();
    expect(readdirSync(logDir).sort()).toEqual([
      CACHE_TRACE_FILE,
      `${CACHE_TRACE_FILE}.1`,
      `${CACHE_TRACE_FILE}.2`,
    ]);
    expect(trace.filePath).toBe(join(temp.path, 'traces', CACHE_TRACE_FILE));
    expect(existsSync(trace.filePath)).toBe(true);
  });
});
