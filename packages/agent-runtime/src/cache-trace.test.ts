import { type CacheTraceRecord, cacheTraceRecordSchema } from '@agentd/evidence';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { recordingLogger, startRuntime } from '../test/helpers.js';
import type { OfflineScript } from './offline-provider.js';
import { createAgentRuntime } from './runtime.js';
import type { AgentTool } from './types.js';

const echoTool: AgentTool<{ text: string }> = {
  name: 'echo',
  description: 'Echoes',
  params: z.object({ text: z.string() }),
  handler: async ({ text }) => ({ text }),
};

// First call: a tool call without cache reads; second call: the answer, partly from the cache.
const script: OfflineScript = (_request, { call }) =>
  call % 2 === 0
    ? {
        toolCalls: [{ toolName: 'echo', input: { text: 'private words of the user' } }],
        usage: { inputTokens: 900, cacheReadTokens: 0, cacheWriteTokens: 700 },
      }
    : { text: 'private answer', usage: { inputTokens: 1000, cacheReadTokens: 700, cacheWriteTokens: 0 } };

describe('createAgentRuntime cacheTrace', () => {
  it('appends one record per model call with the prompt-cache figures and no text', async () => {
    const records: CacheTraceRecord[] = [];
    const t = await startRuntime({
      tools: [echoTool],
      offline: { script },
      now: () => 1_700_000_000_000,
      cacheTrace: { append: (record) => records.push(record) },
      agents: { entries: { c: { name: 'C', tools: ['echo'] } } },
    });
    const first = await t.runtime.runTurn({ agentId: 'c', message: 'secret question', sessionKey: 'ct' });
    const second = await t.runtime.runTurn({ agentId: 'c', message: 'again', sessionKey: 'ct' });
    expect(first.steps).toBe(2);
    expect(records).toHaveLength(4);
    for (const record of records) expect(cacheTraceRecordSchema.strict().parse(record)).toEqual(record);
    // The fields both model calls of the first turn share.
    const firstTurn = {
      ts: 1_700_000_000_000,
      traceId: first.traceId,
      sessionKey: 'ct',
      agentId: 'c',
      provider: 'offline',
      model: 'offline',
    };
    expect(records.slice(0, 2)).toEqual([
      { ...firstTurn, step: 1, inputTokens: 900, cacheReadTokens: 0, cacheWriteTokens: 700, hit: false },
      { ...firstTurn, step: 2, inputTokens: 1000, cacheReadTokens: 700, cacheWriteTokens: 0, hit: true },
    ]);
    expect(records.slice(2).map((record) => [record.traceId, record.step, record.hit])).toEqual([
      [second.traceId, 1, false],
      [second.traceId, 2, true],
    ]);
    expect(JSON.stringify(records)).not.toMatch(/private|secret|question/);
  });

  it('traces the compaction call of a session too', async () => {
    const records: CacheTraceRecord[] = [];
    const t = await startRuntime({ cacheTrace: { append: (record) => records.push(record) } });
    for (const message of ['one', 'two', 'three']) {
      await t.runtime.runTurn({ message, sessionKey: 'cmp' });
    }
    expect(records).toHaveLength(3);
    const compacted = await t.runtime.sessions.compact('cmp');
    expect(compacted.compacted).toBe(true);
    expect(records).toHaveLength(4);
    const last = records.at(-1);
    expect(last).toMatchObject({ sessionKey: 'cmp', agentId: 'default', step: 1, hit: false });
    expect(new Set(records.map((record) => record.traceId)).size).toBe(4);
  });

  it('keeps the turn going and warns once when the sink throws', async () => {
    const logger = recordingLogger();
    let calls = 0;
    const t = await startRuntime({
      tools: [echoTool],
      offline: { script },
      logger,
      cacheTrace: {
        append: () => {
          calls++;
          throw new Error('disk full');
        },
      },
      agents: { entries: { c: { name: 'C', tools: ['echo'] } } },
    });
    const result = await t.runtime.runTurn({ agentId: 'c', message: 'hi', sessionKey: 'ct' });
    expect(result.endReason).toBe('completed');
    expect(calls).toBe(2);
    const warns = logger.entries.filter((entry) => entry.message === 'cache trace append failed');
    expect(warns).toHaveLength(1);
    expect(warns[0]?.fields).toMatchObject({ errorKind: 'resource', hint: expect.any(String) });
  });

  it('refuses a cacheTrace option without append', async () => {
    const t = await startRuntime();
    const { db, dir } = t;
    expect(() => createAgentRuntime({ db, dataDir: dir, cacheTrace: {} as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
  });
});
