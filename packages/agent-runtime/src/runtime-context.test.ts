import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '@agentd/storage';
import { afterEach, describe, expect, it } from 'vitest';
import { recordingLogger } from '../test/helpers.js';
import { toolBreakerSchema } from './config.js';
import { createRuntimeContext } from './runtime-context.js';
import { type AgentRuntimeOptions, resolveRuntimeOptions } from './runtime-options.js';
import type { SessionRecord } from './session-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function context(options: Partial<AgentRuntimeOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'agentd-context-'));
  dirs.push(dir);
  return createRuntimeContext(resolveRuntimeOptions({ db: {} as Database, dataDir: dir, ...options }));
}

const usage = { inputTokens: 100, outputTokens: 5, cacheReadTokens: 60, cacheWriteTokens: 0 };
const ids = { sessionKey: 's', traceId: 'tr', agentId: 'a' };

describe('createRuntimeContext', () => {
  it('shares one live config the modules read at use', () => {
    const ctx = context({ agents: { entries: { a: { name: 'A' } } } });
    expect(Object.keys(ctx.config.agents.entries)).toEqual(['a']);
    ctx.config.agents = { ...ctx.config.agents, entries: {} };
    expect(ctx.config.agents.entries).toEqual({});
    expect(ctx.config.contextEngine.budget.effectiveContextCapNano).toBe(8192);
  });

  it('forgets the cached tail, the recall state and the breakers of a session', () => {
    const forgotten: string[] = [];
    const ctx = context({
      recall: {
        recall: async () => ({ context: undefined, entries: [], record: {} as never }),
        forget: (key) => forgotten.push(key),
      },
    });
    ctx.cache.set('s', { session: { sessionKey: 's' } as SessionRecord, messages: [], fromSeq: 1 });
    const settings = toolBreakerSchema.parse({ failureThreshold: 1 });
    ctx.breakers.record('s', 'tool', settings, 'tool_error', 0);
    expect(ctx.breakers.admit('s', 'tool', settings, 1).allowed).toBe(false);
    ctx.forgetSession('s');
    expect(ctx.cache.get('s')).toBeUndefined();
    expect(ctx.breakers.admit('s', 'tool', settings, 1).allowed).toBe(true);
    expect(forgotten).toEqual(['s']);
  });

  it('traces the cache figures of a model call, and warns once while the sink keeps failing', () => {
    const records: unknown[] = [];
    let failing = false;
    const logger = recordingLogger();
    const ctx = context({
      now: () => 7,
      logger,
      cacheTrace: {
        append: (record) => {
          if (failing) throw new Error('disk full');
          records.push(record);
        },
      },
    });
    ctx.traceCache(ids, { providerId: 'p', model: 'm' }, 2, usage);
    expect(records).toEqual([
      {
        ts: 7,
        traceId: 'tr',
        sessionKey: 's',
        agentId: 'a',
        provider: 'p',
        model: 'm',
        step: 2,
        inputTokens: 100,
        cacheReadTokens: 60,
        cacheWriteTokens: 0,
        hit: true,
      },
    ]);
    failing = true;
    ctx.traceCache(ids, { providerId: 'p', model: 'm' }, 3, usage);
    ctx.traceCache(ids, { providerId: 'p', model: 'm' }, 4, usage);
    expect(logger.entries.filter((entry) => entry.level === 'warn')).toHaveLength(1);
    expect(logger.entries[0]?.fields).toMatchObject({ errorKind: 'resource', traceId: 'tr' });
  });

  it('does nothing for the cache trace without a sink', () => {
    expect(() => context().traceCache(ids, { providerId: 'p', model: 'm' }, 1, usage)).not.toThrow();
  });
});
