import type { Database } from '@agentd/storage';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTemporaryDatabase } from './internal/test-support.js';
import { createHashingEmbedder, type Embedder } from './embedder.js';
import { MemoryStoreError } from './errors.js';
import type { MemoryLogger } from './logger.js';
import { createMemoryStore, type MemoryStore } from './memory-store.js';
import { MIGRATION_PACKAGE } from './migrations.js';
import type { MemoryStoreOptions } from './options.js';
import type { Reranker } from './reranker.js';

let db: Database;
let removeDatabase: () => Promise<void>;
const stores: MemoryStore[] = [];

beforeEach(async () => {
  ({ db, remove: removeDatabase } = await openTemporaryDatabase('memory-store-'));
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await removeDatabase();
});

interface Captured {
  warns: Array<Record<string, unknown>>;
  infos: Array<Record<string, unknown>>;
  events: Array<[string, Record<string, unknown>]>;
}

async function open(
  overrides: Partial<MemoryStoreOptions> = {},
  database = db,
): Promise<MemoryStore & Captured> {
  const warns: Array<Record<string, unknown>> = [];
  const infos: Array<Record<string, unknown>> = [];
  const events: Array<[string, Record<string, unknown>]> = [];
  const logger: MemoryLogger = {
    debug: () => undefined,
    info: (fields) => infos.push(fields),
    warn: (fields) => warns.push(fields),
    error: (fields) => warns.push(fields),
  };
  const store = await createMemoryStore({
    database,
    logger,
    events: { emit: (name, payload) => events.push([name, payload]) },
    ...overrides,
  });
  stores.push(store);
  await store.ready();
  return Object.assign(store, { warns, infos, events });
}

/** An embedder that works until told to fail, for degradation paths. */
function switchableEmbedder(): Embedder & { failing: boolean } {
  const inner = createHashingEmbedder();
  const embedder = {
    failing: false,
    model: inner.model,
    dimensions: inner.dimensions,
    kind: inner.kind,
    embed: async (texts: string[]) => {
      if (embedder.failing) {
        throw new MemoryStoreError('EMBEDDER_FAILED', 'endpoint down', { data: { reason: 'network' } });
      }
      return inner.embed(texts);
    },
  };
  return embedder;
}

// Recall: full-text and vector lanes, filters, degradation, reranking.
describe('createMemoryStore', () => {
  it('stores entries and finds them by words with the contract result shape sorted by score', async () => {
    const store = await open({ now: () => 1_700_000_000_000 });
    await store.storeMany([
      { content: 'The user prefers green tea in the morning' },
      { content: 'The deployment runs on Kubernetes in eu-west-1' },
      { content: 'The user dislikes coffee' },
    ]);
    const { results, recall } = await store.search({ query: 'what tea does the user like' });
    expect(results[0]?.content).toBe('The user prefers green tea in the morning');
    expect(Object.keys(results[0]!).sort()).toEqual(['content', 'id', 'score', 'timestamp']);
    expect(results[0]?.timestamp).toBe(1_700_000_000_000);
    for (let index = 1; index < results.length; index++) {
      expect(results[index - 1]!.score).toBeGreaterThanOrEqual(results[index]!.score);
    }
    expect(recall.lanes).toEqual(['fts', 'vector']);
    expect(recall.vectorCandidates).toBeGreaterThan(0);
  });

  it('matches inflected words through stemming and Chinese text through word segmentation', async () => {
    const store = await open();
    await store.storeMany([
      { content: 'She was running marathons every spring' },
      { content: '我喜欢学习中文' },
    ]);
    const english = await store.search({ query: 'runs', rerank: false });
    expect(english.results[0]?.content).toBe('She was running marathons every spring');
    const chinese = await store.search({ query: '学习' });
    expect(chinese.results[0]?.content).toBe('我喜欢学习中文');
    expect(chinese.recall.ftsCandidates).toBe(1);
  });

  it('answers with the full-text lane only and warns with hint and errorKind when the embedder is down', async () => {
    const embedder = switchableEmbedder();
    const store = await open({ embedder });
    await store.store({ content: 'the wifi password is on the fridge' });
    embedder.failing = true;
    const { results, recall } = await store.search({ query: 'wifi password' });
    expect(results.map((result) => result.content)).toEqual(['the wifi password is on the fridge']);
    expect(recall).toMatchObject({ lanes: ['fts'], vectorCandidates: 0, degraded: true });
    const warn = store.warns.find(
      (fields) => typeof fields.hint === 'string' && /full-text/.test(String(fields.hint)),
    );
    expect(warn).toMatchObject({ errorKind: 'network' });
    const recalled = store.events.find(([name]) => name === 'memory:recalled');
    expect(recalled?.[1]).toMatchObject({ vectorCandidates: 0, degraded: true });
  });

  it('stores without a vector while the embedder is down and backfills it later', async () => {
    const embedder = switchableEmbedder();
    const store = await open({ embedder });
    embedder.failing = true;
    await store.store({ content: 'stored during the outage' });
    expect(store.warns.some((fields) => fields.step === 'extract' && fields.errorKind === 'network')).toBe(
      true,
    );
    embedder.failing = false;
    const before = await store.search({ query: 'outage' });
    expect(before.recall.missingEmbeddings).toBe(1);
    expect(store.warns.some((fields) => /missing an embedding|no vector/.test(String(fields.hint)))).toBe(
      true,
    );
    expect(await store.backfillEmbeddings()).toBe(1);
    expect((await store.stats()).missingEmbeddings).toBe(0);
    const after = await store.search({ query: 'outage' });
    expect(after.recall.missingEmbeddings).toBe(0);
    expect(after.recall.vectorCandidates).toBe(1);
  });

  it('reorders by the reranker and emits memory:reranked without fallback', async () => {
    const reranker: Reranker = {
      model: 'fake',
      rerank: async (_query, documents) =>
        documents.map((document) => (document.includes('second') ? 10 : 1)),
    };
    const store = await open({ reranker });
    await store.storeMany([{ content: 'note first about cats' }, { content: 'note second about cats' }]);
    const { results, recall } = await store.search({ query: 'note first cats' });
    expect(results[0]?.content).toBe('note second about cats');
    expect(results[0]?.score).toBe(10);
    expect(recall.reranked).toBe(true);
    expect(store.events.find(([name]) => name === 'memory:reranked')?.[1]).toMatchObject({
      fellBack: false,
      timedOut: false,
    });
  });

  it('falls back to the fused order when the reranker times out, and says so', async () => {
    const reranker: Reranker = {
      model: 'slow',
      rerank: (_query, _documents, options) =>
        new Promise((_, reject) =>
          options?.signal?.addEventListener('abort', () => reject(new Error('aborted'))),
        ),
    };
    const store = await open({ reranker, rerankTimeoutMs: 30 });
    await store.storeMany([{ content: 'alpha beta gamma' }, { content: 'alpha delta' }]);
    const plain = await store.search({ query: 'alpha beta', rerank: false });
    const { results, recall } = await store.search({ query: 'alpha beta' });
    expect(results.map((result) => result.id)).toEqual(plain.results.map((result) => result.id));
    expect(recall.rerankFellBack).toBe(true);
    expect(store.events.find(([name]) => name === 'memory:reranked')?.[1]).toMatchObject({
      fellBack: true,
      timedOut: true,
    });
    expect(store.warns.find((fields) => fields.errorKind === 'timeout')?.hint).toMatch(/fused order/);
  });
});

// The in-process vector index: rebuild, HNSW, exact fallbacks.
describe('createMemoryStore', () => {
  it('rebuilds the in-process index from libsql when reopened', async () => {
    const first = await open();
    await first.storeMany(
      Array.from({ length: 30 }, (_, index) => ({ content: `fact number ${index} about owls` })),
    );
    await first.close();
    const second = await open();
    const stats = await second.stats();
    expect(stats.index).toMatchObject({ kind: 'quantized', ready: true, size: 30, scopes: 1 });
    const { recall } = await second.search({ query: 'owls' });
    expect(recall.exact).toBe(false);
    expect(recall.vectorCandidates).toBe(30);
  });

  it('serves the vector lane from a usearch HNSW graph when configured, rebuilt at reopen', async () => {
    const first = await open({ index: { kind: 'hnsw' } });
    await first.storeMany(
      Array.from({ length: 20 }, (_, index) => ({ content: `note ${index} about herons` })),
    );
    await first.store({ content: 'a different note about kingfishers' });
    await first.close();
    const second = await open({ index: { kind: 'hnsw' } });
    expect((await second.stats()).index).toMatchObject({ kind: 'hnsw', ready: true, size: 21 });
    const { results, recall } = await second.search({ query: 'kingfishers', lanes: ['vector'] });
    expect(results[0]?.content).toBe('a different note about kingfishers');
    expect(recall).toMatchObject({ exact: false, lanes: ['vector'], ftsCandidates: 0 });
  });

  it('searches exactly in libsql when the index is disabled', async () => {
    const store = await open({ index: { enabled: false } });
    await store.storeMany([{ content: 'exact search only' }, { content: 'something else' }]);
    const { results, recall } = await store.search({ query: 'exact search' });
    expect(recall.exact).toBe(true);
    expect(results[0]?.content).toBe('exact search only');
    expect((await store.stats()).index.kind).toBe('exact');
  });

  it('finds entries through the exact scan when a tag filter is too selective for the graph', async () => {
    const store = await open({ candidates: 5 });
    await store.storeMany(
      Array.from({ length: 60 }, (_, index) => ({ content: `common words entry ${index}` })),
    );
    await store.store({ content: 'common words rare one', tags: ['rare'] });
    const { results, recall } = await store.search({ query: 'common words', tags: ['rare'] });
    expect(results.map((result) => result.content)).toEqual(['common words rare one']);
    expect(recall.vectorCandidates).toBe(1);
  });
});

// Removal and observations.
describe('createMemoryStore', () => {
  it('deletes memories by source session, unlinking corroborated observations and deleting orphaned ones', async () => {
    const store = await open();
    const [a1, a2] = await store.storeMany([
      { content: 'user likes jazz', sessionKey: 's:a' },
      { content: 'user went to a jazz concert', sessionKey: 's:a' },
    ]);
    const [b1] = await store.storeMany([{ content: 'user plays saxophone', sessionKey: 's:b' }]);
    const onlyA = await store.consolidate({ content: 'user is into jazz', sourceIds: [a1!.id, a2!.id] });
    const shared = await store.consolidate({ content: 'user is musical', sourceIds: [a1!.id, b1!.id] });
    const result = await store.deleteBySession({ sessionKey: 's:a' });
    expect(result).toEqual({ memoriesDeleted: 2, observationsDeleted: 1, observationsUnlinked: 1 });
    await expect(store.inspect(onlyA.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const kept = await store.inspect(shared.id);
    expect(kept.sources).toEqual([{ id: b1!.id, sessionKey: 's:b' }]);
    expect((await store.search({ query: 'jazz' })).results.map((entry) => entry.id)).not.toContain(a1!.id);
  });

  it('purges every derived observation with purgeDerived even when other sessions corroborate it', async () => {
    const store = await open();
    const [a1] = await store.storeMany([{ content: 'likes hiking', sessionKey: 's:a' }]);
    const [b1] = await store.storeMany([{ content: 'likes mountains', sessionKey: 's:b' }]);
    const shared = await store.consolidate({ content: 'outdoorsy person', sourceIds: [a1!.id, b1!.id] });
    const result = await store.deleteBySession({ sessionKey: 's:a', purgeDerived: true });
    expect(result).toEqual({ memoriesDeleted: 1, observationsDeleted: 1, observationsUnlinked: 0 });
    await expect(store.inspect(shared.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await store.inspect(b1!.id)).derived).toEqual([]);
  });

  it('links observations to their sources and sessions, and logs consolidate and link steps', async () => {
    const store = await open();
    const [one] = await store.storeMany([{ content: 'first', sessionKey: 'k1' }]);
    const observation = await store.consolidate({ content: 'summary', sourceIds: [one!.id] });
    const detail = await store.inspect(observation.id);
    expect(detail).toMatchObject({ kind: 'observation', sources: [{ id: one!.id, sessionKey: 'k1' }] });
    expect((await store.inspect(one!.id)).derived).toEqual([observation.id]);
    expect(
      store.infos.some((fields) => fields.step === 'consolidate' && typeof fields.durationMs === 'number'),
    ).toBe(true);
    expect(
      store.infos.some((fields) => fields.step === 'store' && typeof fields.durationMs === 'number'),
    ).toBe(true);
    expect(store.events.find(([name]) => name === 'memory:consolidated')?.[1]).toMatchObject({ sources: 1 });
    await expect(store.consolidate({ content: 'x', sourceIds: ['missing'] })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('deletes single entries, flushes per agent, browses and exports', async () => {
    let clock = 0;
    const store = await open({ now: () => ++clock });
    const [a, b] = await store.storeMany([
      { content: 'one', agentId: 'x', tags: ['t'], metadata: { origin: 'test' } },
      { content: 'two', agentId: 'x' },
    ]);
    await store.store({ content: 'three', agentId: 'y' });
    const page = await store.browse({ limit: 2 });
    expect(page.total).toBe(3);
    expect(page.entries.map((entry) => entry.content)).toEqual(['three', 'two']);
    const exported = await store.export({ agentId: 'x' });
    expect(exported.count).toBe(2);
    expect(exported.entries[0]).toMatchObject({
      id: a!.id,
      agentId: 'x',
      tenant: 'default',
      kind: 'memory',
      tags: ['t'],
      metadata: { origin: 'test' },
      trust: 'learned',
      embedded: true,
    });
    expect(await store.delete(b!.id)).toEqual({ id: b!.id, deleted: true, observationsDeleted: 0 });
    await expect(store.delete(b!.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await store.flush({ agentId: 'x' })).toEqual({ flushed: 1 });
    expect((await store.search({ query: 'one' })).results).toEqual([]);
    expect((await store.stats()).entries).toBe(1);
    expect(await store.flush()).toEqual({ flushed: 1 });
    expect((await store.stats()).index.size).toBe(0);
  });
});

// Write batching, the embedding cache, and input checks.
describe('createMemoryStore', () => {
  it('coalesces concurrent single stores into one transaction', async () => {
    const store = await open();
    await Promise.all(Array.from({ length: 20 }, (_, index) => store.store({ content: `entry ${index}` })));
    const stored = store.infos.filter((fields) => fields.step === 'store');
    expect(stored).toHaveLength(1);
    expect(stored[0]?.itemCount).toBe(20);
  });

  it('passes the hashing embedder straight through the cache: nothing kept, persisted or counted', async () => {
    const store = await open();
    await store.storeMany([{ content: 'a a' }, { content: 'b b' }]);
    const [hit] = (await store.search({ query: 'a a' })).results;
    expect(hit?.content).toBe('a a');
    expect(await store.embeddingCacheStats()).toMatchObject({ misses: 0, hits: 0, size: 0, persisted: 0 });
  });

  it('counts embedding cache hits, misses and evictions, persisted across reopen', async () => {
    // The cache serves embedders worth caching (a model); this one stands in for such.
    const embedder = { ...createHashingEmbedder(), cacheable: true };
    const store = await open({ cache: { maxEntries: 2 }, embedder });
    await store.storeMany([{ content: 'a a' }, { content: 'b b' }, { content: 'c c' }]);
    await store.search({ query: 'c c' });
    let stats = await store.embeddingCacheStats();
    expect(stats).toMatchObject({ misses: 3, hits: 1, evictions: 1, size: 2, persisted: 3 });
    await store.close();
    const reopened = await open({ embedder });
    await reopened.search({ query: 'a a' });
    stats = await reopened.embeddingCacheStats();
    expect(stats).toMatchObject({ hits: 1, persistedHits: 1, misses: 0 });
  });

  it('rejects invalid input with INVALID_INPUT naming the field', async () => {
    const store = await open();
    await expect(store.search({ query: '' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(store.store({ content: 'x', tags: [''] })).rejects.toThrow(/tags/);
  });

  it('refuses to open a database migrated by a newer build', async () => {
    await open();
    await db.execute('INSERT INTO _migrations (package, version, name, applied_at) VALUES (?, 99, ?, ?)', [
      MIGRATION_PACKAGE,
      'future',
      new Date().toISOString(),
    ]);
    await expect(createMemoryStore({ database: db })).rejects.toMatchObject({ code: 'SCHEMA_TOO_NEW' });
  });
});
