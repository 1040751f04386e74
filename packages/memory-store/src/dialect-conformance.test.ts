import type { Database } from '@agentd/storage';
import { openTestDatabase, testDialects } from '@agentd/storage/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHashingEmbedder } from './embedder.js';
import { toTsQuery } from './internal/fts.pg.js';
import { createMemoryStore, type MemoryStore } from './memory-store.js';
import type { MemoryStoreOptions } from './options.js';

// Every statement path of the store (writes, both recall lanes and the exact scan, filters with
// tags, removal, observations, browse, stats, the embedding cache, backfill), run on libsql and,
// with the test server set, on PostgreSQL. Full-text ranking is bm25 on libsql and ts_rank_cd on
// PostgreSQL: the tests assert the top result where one entry is clearly best, and sets otherwise.
describe.each(testDialects())('memory store on %s', (dialect) => {
  let dir: string;
  let db: Database;
  const stores: MemoryStore[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memory-dialect-'));
    db = await openTestDatabase(dialect, dir);
  });

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(overrides: Partial<MemoryStoreOptions> = {}): Promise<MemoryStore> {
    const store = await createMemoryStore({ database: db, ...overrides });
    stores.push(store);
    await store.ready();
    return store;
  }

  const contents = (result: { results: Array<{ content: string }> }) =>
    result.results.map((entry) => entry.content).sort();

  it('finds the best entry by words through stemming, on the full-text lane alone and fused', async () => {
    const store = await open();
    await store.storeMany([
      { content: 'She was running marathons every spring' },
      { content: 'The garden needs watering on Sundays' },
      { content: 'Running shoes wear out after a marathon or two of running' },
    ]);
    const fused = await store.search({ query: 'runs marathon', rerank: false });
    expect(fused.recall.ftsCandidates).toBe(2);
    expect(contents(fused).slice(0, 2)).toContain('She was running marathons every spring');
    const lexical = await store.search({ query: 'watered gardens', rerank: false });
    expect(lexical.results[0]?.content).toBe('The garden needs watering on Sundays');
    // A query without words has no full-text candidates.
    expect((await store.search({ query: '?! …', rerank: false })).recall.ftsCandidates).toBe(0);
  });

  it('ranks a rare word above a common one repeated, as bm25 weighs words by their rarity', async () => {
    const store = await open();
    await store.storeMany([
      ...Array.from({ length: 8 }, (_, index) => ({ content: `the river river river bends, mile ${index}` })),
      { content: 'an otter swam past' },
      { content: 'a quiet pond' },
    ]);
    const { results } = await store.search({ query: 'river otter', lanes: ['fts'], rerank: false });
    expect(results[0]?.content).toBe('an otter swam past');
    // Phrases keep their word order, and a multi-word phrase is matched as one.
    const phrase = await store.search({ query: 'quiet pond', lanes: ['fts'], rerank: false });
    expect(phrase.results[0]?.content).toBe('a quiet pond');
  });

  // With the ANN index the vector lane filters its candidates; without it the scan is exact.
  it.each([
    { lane: 'the ANN index', index: true },
    { lane: 'the exact scan', index: false },
  ])('filters by agent, tenant, tags and time on both lanes, through $lane', async ({ index }) => {
    let clock = 1000;
    const store = await open({ now: () => clock, index: { enabled: index } });
    await store.store({ content: 'project alpha deadline is friday', agentId: 'a1', tags: ['work'] });
    clock = 2000;
    await store.store({ content: 'project alpha budget is small', agentId: 'a1', tags: ['work', 'money'] });
    clock = 3000;
    await store.store({ content: 'project alpha for another agent', agentId: 'a2', tags: ['work'] });
    await store.store({
      content: 'project alpha in another tenant',
      agentId: 'a1',
      tenant: 't2',
      tags: ['w"q'],
    });
    const found = async (filter: Record<string, unknown>) =>
      contents(await store.search({ query: 'project alpha', rerank: false, ...filter }));
    expect(await found({ agentId: 'a2' })).toEqual(['project alpha for another agent']);
    expect(await found({ agentId: 'a1', tenant: 't2', tags: ['w"q'] })).toEqual([
      'project alpha in another tenant',
    ]);
    expect(await found({ agentId: 'a1', tenant: 'default', tags: ['money', 'work'] })).toEqual([
      'project alpha budget is small',
    ]);
    expect(await found({ agentId: 'a1', tags: ['wor'] })).toEqual([]);
    expect(await found({ agentId: 'a1', tenant: 'default', sinceMs: 1500, untilMs: 2500 })).toEqual([
      'project alpha budget is small',
    ]);
    const top = await store.search({ query: 'deadline friday', rerank: false, agentId: 'a1' });
    expect(top.recall.exact).toBe(!index);
    expect(top.results[0]?.content).toBe('project alpha deadline is friday');
  });

  it('links observations, deletes by session and one by one, browses, exports, counts and flushes', async () => {
    let clock = 0;
    const store = await open({ now: () => ++clock });
    const [one, two] = await store.storeMany([
      { content: 'first source', sessionKey: 'k1', tags: ['t'], metadata: { origin: 'test' } },
      { content: 'second source', sessionKey: 'k2' },
    ]);
    const observation = await store.consolidate({
      content: 'summary of both',
      sourceIds: [one!.id, two!.id],
    });
    expect(await store.inspect(observation.id)).toMatchObject({
      kind: 'observation',
      sources: expect.arrayContaining([
        { id: one!.id, sessionKey: 'k1' },
        { id: two!.id, sessionKey: 'k2' },
      ]),
    });
    expect((await store.search({ query: 'summary', rerank: false })).results[0]?.id).toBe(observation.id);
    const page = await store.browse({ limit: 2 });
    expect(page.total).toBe(3);
    expect((await store.export({ tags: ['t'] })).entries).toEqual([
      expect.objectContaining({ id: one!.id, tags: ['t'], metadata: { origin: 'test' }, embedded: true }),
    ]);
    const stats = await store.stats();
    expect(stats).toMatchObject({
      entries: 3,
      memories: 2,
      observations: 1,
      agents: 1,
      missingEmbeddings: 0,
    });
    expect(stats.bytes.content).toBe(
      'first source'.length + 'second source'.length + 'summary of both'.length,
    );
    expect(stats.bytes.database).toBeGreaterThan(0);

    await store.deleteBySession({ sessionKey: 'k1' });
    expect((await store.inspect(observation.id)).sources).toEqual([{ id: two!.id, sessionKey: 'k2' }]);
    expect(await store.delete(two!.id)).toEqual({ id: two!.id, deleted: true, observationsDeleted: 1 });
    expect((await store.search({ query: 'source summary', rerank: false })).results).toEqual([]);
    await store.store({ content: 'after the deletes' });
    expect(await store.flush()).toEqual({ flushed: 1 });
    expect((await store.stats()).entries).toBe(0);
  });

  it('keeps the embedding cache across reopen, evicting the oldest, and backfills missing vectors', async () => {
    const embedder = { ...createHashingEmbedder(), cacheable: true };
    const store = await open({ cache: { maxEntries: 2 }, embedder });
    await store.storeMany([{ content: 'a a' }, { content: 'b b' }, { content: 'c c' }]);
    await store.search({ query: 'c c' });
    expect(await store.embeddingCacheStats()).toMatchObject({ misses: 3, hits: 1, evictions: 1, size: 2 });
    await store.close();
    stores.splice(0);
    const reopened = await open({ embedder });
    await reopened.search({ query: 'a a' });
    expect(await reopened.embeddingCacheStats()).toMatchObject({ persistedHits: 1, misses: 0 });
    await db.execute('UPDATE memory_entries SET embedding = NULL, embedding_model = NULL');
    expect((await reopened.stats()).missingEmbeddings).toBe(3);
    expect(await reopened.backfillEmbeddings()).toBe(3);
    expect((await reopened.stats()).missingEmbeddings).toBe(0);
  });
});

describe('toTsQuery', () => {
  it('turns FTS5 phrases OR-ed into a tsquery, quoting every word', () => {
    expect(toTsQuery('"alpha" OR "new york" OR "it\'s"')).toBe("'alpha' | ('new' <-> 'york') | 'it''s'");
    expect(toTsQuery('"say ""hi""" OR "a\\b"')).toBe(`('say' <-> '"hi"') | 'a\\\\b'`);
    expect(toTsQuery('"" OR "  "')).toBe('');
  });
});
