import type { Database } from '@agentd/storage';
import { describe, expect, it } from 'vitest';
import { noopLogger } from './logger.js';
import { type AgentRuntimeOptions, resolveRuntimeOptions } from './runtime-options.js';
import { noopEventSink } from './types.js';

const db = {} as Database;

/** The `data.issues` paths of the INVALID_OPTIONS error `options` gets. */
function issuePaths(options: unknown): unknown {
  try {
    resolveRuntimeOptions(options as AgentRuntimeOptions);
  } catch (error) {
    expect(error).toMatchObject({ code: 'INVALID_OPTIONS' });
    return (error as { data: { issues: Array<{ path: unknown[] }> } }).data.issues.map((issue) =>
      issue.path.join('.'),
    );
  }
  throw new Error('expected INVALID_OPTIONS');
}

describe('resolveRuntimeOptions', () => {
  it('applies the defaults', () => {
    const settings = resolveRuntimeOptions({ db, dataDir: '/data' });
    expect(settings).toMatchObject({
      db,
      dataDir: '/data',
      agents: { entries: {}, toolDenylist: [] },
      providers: { entries: {} },
      contextEngine: { budget: { effectiveContextCapSmall: 32_768, effectiveContextCapNano: 8192 } },
      tools: [],
      toolGates: [],
      offline: {},
      sessionCacheSize: 64,
      events: noopEventSink,
      logger: noopLogger,
      now: Date.now,
    });
    expect(settings.recall).toBeUndefined();
    expect(typeof settings.randomId()).toBe('string');
    process.env.AGENTD_RUNTIME_OPTIONS_TEST = 'from-env';
    expect(settings.resolveSecret('AGENTD_RUNTIME_OPTIONS_TEST')).toBe('from-env');
    delete process.env.AGENTD_RUNTIME_OPTIONS_TEST;
  });

  it('keeps the functions and services it was given, unwrapped', () => {
    const now = () => 42;
    const recall = { recall: async () => ({ context: undefined, entries: [], record: {} as never }) };
    const settings = resolveRuntimeOptions({ db, dataDir: '/data', now, recall, sessionCacheSize: 0 });
    expect(settings.now).toBe(now);
    expect(settings.recall).toBe(recall);
    expect(settings.sessionCacheSize).toBe(0);
  });

  it('names every service or function field of the wrong shape', () => {
    expect(
      issuePaths({
        db: undefined,
        dataDir: '/data',
        resolveSecret: 'env',
        now: 5,
        recall: {},
        cacheTrace: { append: 'no' },
        events: { send: () => {} },
        memory: {},
        approvals: { clearSession: true },
        tools: {},
        toolGates: 'all',
      }),
    ).toEqual([
      'db',
      'tools',
      'toolGates',
      'resolveSecret',
      'now',
      'memory',
      'approvals',
      'recall',
      'events',
      'cacheTrace',
    ]);
  });

  it('validates the data fields with their config schemas', () => {
    expect(issuePaths({ db, dataDir: '' })).toEqual(['dataDir']);
    expect(issuePaths({ db, dataDir: '/data', sessionCacheSize: -1 })).toEqual(['sessionCacheSize']);
    expect(issuePaths({ db, dataDir: '/data', evidenceRotation: { maxFiles: -1 } })).toEqual([
      'evidenceRotation.maxFiles',
    ]);
    expect(
      issuePaths({ db, dataDir: '/data', agents: { entries: { 'bad id!': { name: 'x' } } } }),
    ).toHaveLength(1);
  });

  it('puts the first issue in the message', () => {
    expect(() => resolveRuntimeOptions({ db, dataDir: '/data', recall: {} as never })).toThrow(
      'createAgentRuntime: recall: an object with a recall(request) function',
    );
    expect(() => resolveRuntimeOptions(undefined as never)).toThrow(
      'createAgentRuntime: <root>: expected an object',
    );
  });
});
