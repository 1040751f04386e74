import { describe, expect, it } from 'vitest';
import { storeEachTest } from './internal/test-support.js';
import { createAutoRecall } from './auto-recall.js';
import { createMemoryTools, type ToolContext } from './tools.js';

const memory = storeEachTest('memory-tools-');

const context = (agentId: string): ToolContext => ({
  agentId,
  sessionKey: `default:rpc:${agentId}-user`,
  signal: new AbortController().signal,
});

describe('createMemoryTools', () => {
  it('stores through memory_store under the calling agent and session and finds it through memory_search', async () => {
    const [search, save] = createMemoryTools(memory.store);
    expect(search.name).toBe('memory_search');
    expect(save.name).toBe('memory_store');
    const stored = (await save.handler(
      save.params.parse({ content: 'the user is allergic to peanuts' }),
      context('chef'),
    )) as {
      id: string;
    };
    const record = await memory.store.inspect(stored.id);
    expect(record).toMatchObject({ agentId: 'chef', sessionKey: 'default:rpc:chef-user', trust: 'learned' });
    const found = (await search.handler(
      search.params.parse({ query: 'peanuts allergy' }),
      context('chef'),
    )) as {
      results: Array<{ id: string }>;
    };
    expect(found.results.map((result) => result.id)).toEqual([stored.id]);
    const other = (await search.handler(
      search.params.parse({ query: 'peanuts allergy' }),
      context('other'),
    )) as {
      results: unknown[];
    };
    expect(other.results).toEqual([]);
  });

  it("keeps a turn with a memory tenant in that tenant's memory, apart from the default pool", async () => {
    const [search, save] = createMemoryTools(memory.store);
    const acme = { ...context('chef'), memoryTenant: 'acme' };
    const stored = (await save.handler(
      save.params.parse({ content: 'acme keeps payroll on Fridays' }),
      acme,
    )) as {
      id: string;
    };
    expect(await memory.store.inspect(stored.id)).toMatchObject({ tenant: 'acme' });
    const query = search.params.parse({ query: 'payroll Fridays' });
    expect(((await search.handler(query, acme)) as { results: Array<{ id: string }> }).results).toHaveLength(
      1,
    );
    expect(((await search.handler(query, context('chef'))) as { results: unknown[] }).results).toEqual([]);
  });

  it('rejects tool input its schema does not allow', () => {
    const [search] = createMemoryTools(memory.store);
    expect(search.params.safeParse({ query: '' }).success).toBe(false);
    expect(search.params.safeParse({ query: 'x', extra: 1 }).success).toBe(false);
  });
});

describe('createAutoRecall', () => {
  it('returns a context block before a turn and keeps the session recall counts', async () => {
    await memory.store.store({ content: 'the user lives in Lisbon', agentId: 'a' });
    const recall = createAutoRecall({ store: memory.store, limit: 3 });
    const hit = await recall.recall({
      agentId: 'a',
      sessionKey: 's1',
      message: 'where does the user live? Lisbon?',
    });
    expect(hit.context).toContain('the user lives in Lisbon');
    const miss = await recall.recall({ agentId: 'a', sessionKey: 's1', message: 'zzz qqq' });
    expect(miss.context).toBeUndefined();
    expect(recall.stats('s1')).toEqual({
      recalls: 2,
      zeroHits: 1,
      lastLanes: ['fts', 'vector'],
      lastFinalCount: 0,
      rerankerAvailable: false,
    });
    recall.forget('s1');
    expect(recall.stats('s1')).toBeUndefined();
  });
});
